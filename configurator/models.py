"""The configurator's own state: a stamp that changes whenever the catalog does."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class CatalogStamp(models.Model):
    """One row whose ``version`` goes up on every catalog save or delete.

    Resolved catalog entries (engine specs) are cached per process and keyed by
    this version, so every gunicorn worker notices an admin's edit on its next
    request at the cost of one tiny query.
    """

    version = models.PositiveBigIntegerField(default=0)
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("catalog stamp")
        verbose_name_plural = _("catalog stamps")

    def __str__(self) -> str:
        return f"catalog v{self.version}"
