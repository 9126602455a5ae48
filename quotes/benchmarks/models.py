"""A measured ``vllm bench serve`` result attached to a quote revision (issue 15: measured beats estimated).

Kept apart from the revision's frozen snapshots: attaching evidence to an issued
revision does not change what was issued; the page, the XLSX and the PDF show the
latest measurement beside the estimate and mark it *measured*.
"""

from __future__ import annotations

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils.translation import gettext_lazy as _


class MeasuredBenchmark(models.Model):
    revision = models.ForeignKey(
        "quotes.QuoteRevision",
        verbose_name=_("revision"),
        on_delete=models.CASCADE,
        related_name="benchmarks",
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("uploaded by"), on_delete=models.PROTECT, related_name="+"
    )
    uploaded_at = models.DateTimeField(_("uploaded"), auto_now_add=True)
    filename = models.CharField(_("file name"), max_length=200, blank=True)
    # The validated scalar figures of the bench result (quotes/benchmarks/importer.py).
    figures = models.JSONField(_("measured figures"), encoder=DjangoJSONEncoder, default=dict)
    # SHA-256 of the file as uploaded: the evidence a figure marked "measured" rests on.
    sha256 = models.CharField(_("SHA-256 of the file"), max_length=64, blank=True)

    class Meta:
        ordering = ["-uploaded_at", "-id"]
        verbose_name = _("measured benchmark")
        verbose_name_plural = _("measured benchmarks")

    def __str__(self) -> str:
        return f"{self.revision_id}: {self.figures.get('output_throughput')} tok/s"
