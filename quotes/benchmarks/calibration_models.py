"""A measured ``vllm bench serve`` result promoted into the performance calibration set.

Nothing is promoted automatically: a catalog administrator promotes a quote's measurement
(``quotes/benchmarks/promotion.py``), which stores the calibration record built from the plan it
measured and its provenance; ``manage.py calibrate`` refits with the promoted records added to the
public ones (docs/performance.md §3).
"""

from __future__ import annotations

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils.translation import gettext_lazy as _


class PromotedMeasurement(models.Model):
    benchmark = models.OneToOneField(
        "quotes.MeasuredBenchmark",
        verbose_name=_("measured benchmark"),
        on_delete=models.PROTECT,
        related_name="promotion",
    )
    promoted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("promoted by"), on_delete=models.PROTECT, related_name="+"
    )
    promoted_at = models.DateTimeField(_("promoted"), auto_now_add=True)
    # The calibration record (configurator/calibration/__init__.py format) with its provenance.
    record = models.JSONField(_("calibration record"), encoder=DjangoJSONEncoder, default=dict)
    # The uploaded file's SHA-256: one file joins the calibration set once (unique; NULL before it was kept).
    sha256 = models.CharField(_("SHA-256 of the file"), max_length=64, null=True, blank=True, unique=True)
    # Why the measurement is far from its plan's estimate (empty: plausible), and the written reason it
    # was promoted anyway; such a promotion counts only once a second reviewer confirmed it.
    implausible = models.TextField(_("implausible against its plan"), blank=True)
    reason = models.TextField(_("reason for promoting it anyway"), blank=True)
    second_reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("second reviewer"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["promoted_at", "id"]
        verbose_name = _("promoted measurement")
        verbose_name_plural = _("promoted measurements")

    def __str__(self) -> str:
        return str(self.record.get("id", self.pk))

    @property
    def awaiting_review(self) -> bool:
        """Implausible against its plan and not yet confirmed by a second reviewer."""
        return bool(self.implausible) and self.second_reviewer_id is None
