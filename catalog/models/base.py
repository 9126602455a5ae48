"""Shared machinery: per-field sources and the seed marker.

Every catalog row carries ``sources``: a mapping of field name to
``{"kind": "seed|public|assumed|admin", "ref": "S1 §2.1"}``.  The seed loader
fills it for every figure it writes; the admin shows it, marks admin edits,
and the configurator passes it on to the engine so a proposal can list every
assumption it used.

``seed_hash``/``seed_values`` record what ``load_catalog`` last wrote, so a
re-load can tell a row an admin edited (left alone) from one still as seeded
(updated).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

SOURCE_KINDS = ("seed", "public", "assumed", "admin")
SOURCE_KIND_LABELS = {
    "seed": _("seed document"),
    "public": _("public source"),
    "assumed": _("assumed"),
    "admin": _("edited in admin"),
}

_NUMERIC_FIELDS = (
    models.IntegerField,
    models.BigIntegerField,
    models.SmallIntegerField,
    models.PositiveIntegerField,
    models.PositiveBigIntegerField,
    models.PositiveSmallIntegerField,
    models.DecimalField,
    models.FloatField,
)


def validate_sources(value: Any, field_names: set[str]) -> list[str]:
    """Problems with a ``sources`` mapping, as messages (empty when fine)."""
    if not isinstance(value, dict):
        return [str(_("Sources must be a JSON object mapping field names to {kind, ref}."))]
    problems = []
    for key, entry in value.items():
        if key not in field_names:
            problems.append(str(_("“%(key)s” is not a field of this table.") % {"key": key}))
            continue
        if not isinstance(entry, dict) or entry.get("kind") not in SOURCE_KINDS:
            problems.append(
                str(
                    _("The source of “%(key)s” needs a kind: one of %(kinds)s.")
                    % {"key": key, "kinds": ", ".join(SOURCE_KINDS)}
                )
            )
        elif not isinstance(entry.get("ref", ""), str):
            problems.append(str(_("The reference of “%(key)s” must be text.") % {"key": key}))
    return problems


class SourcedModel(models.Model):
    """Abstract base: a catalog row whose figures each name their source."""

    sources = models.JSONField(
        _("sources"),
        default=dict,
        blank=True,
        help_text=_(
            'Where each figure comes from: {"field": {"kind": "seed|public|assumed|admin", "ref": "S1 §2.1"}}.'
        ),
    )
    seed_hash = models.CharField(_("seed hash"), max_length=64, blank=True, default="", editable=False)
    seed_values = models.JSONField(_("seeded values"), default=dict, blank=True, editable=False)

    # Fields besides the numeric ones whose source is tracked (e.g. weight_format).
    extra_sourced_fields: tuple[str, ...] = ()

    class Meta:
        abstract = True

    # ---------------------------------------------------------------- sources

    @classmethod
    def sourced_field_names(cls) -> list[str]:
        """Names of the figures whose origin this table records: numbers plus ``extra_sourced_fields``."""
        names = []
        for f in cls._meta.concrete_fields:
            if f.primary_key or f.is_relation or f.name in ("seed_hash",):
                continue
            if isinstance(f, _NUMERIC_FIELDS) or f.name in cls.extra_sourced_fields:
                names.append(f.name)
        return names

    @classmethod
    def data_field_names(cls) -> set[str]:
        return {
            f.name
            for f in cls._meta.concrete_fields
            if not f.primary_key and f.name not in ("sources", "seed_hash", "seed_values")
        }

    def source_for(self, field_name: str) -> dict[str, str] | None:
        """``{"kind", "ref"}`` for a field, or None when nobody recorded it."""
        entry = (self.sources or {}).get(field_name)
        return entry if isinstance(entry, dict) else None

    def is_assumed(self, field_name: str) -> bool:
        """True when the field's value is a placeholder an admin should check."""
        entry = self.source_for(field_name)
        return bool(entry and entry.get("kind") == "assumed")

    @property
    def assumed_fields(self) -> list[str]:
        return [name for name in self.sourced_field_names() if self.is_assumed(name)]

    def source_rows(self) -> list[dict[str, Any]]:
        """One row per sourced field for display: name, label, value, kind, kind label, ref."""
        rows = []
        for name in self.sourced_field_names():
            f = self._meta.get_field(name)
            entry = self.source_for(name) or {}
            kind = entry.get("kind", "")
            rows.append(
                {
                    "field": name,
                    "label": f.verbose_name,
                    "value": getattr(self, name),
                    "kind": kind,
                    "kind_label": SOURCE_KIND_LABELS.get(kind, _("not recorded")),
                    "ref": entry.get("ref", ""),
                    "assumed": kind == "assumed",
                }
            )
        return rows

    def mark_admin_edit(self, field_names: list[str], ref: str) -> None:
        """Record that an admin typed these values (unless the admin also set their source)."""
        sources = dict(self.sources or {})
        for name in field_names:
            if name in self.sourced_field_names():
                sources[name] = {"kind": "admin", "ref": ref}
        self.sources = sources

    # ---------------------------------------------------------------- validation

    def clean(self) -> None:
        super().clean()
        problems = validate_sources(self.sources, self.data_field_names())
        if problems:
            raise ValidationError({"sources": problems})


def chinese_name_field(max_length: int = 120) -> models.CharField:
    """A row's name in Chinese, beside its ``name``: shown in the Chinese interface and proposals."""
    from catalog.validators import single_line

    return models.CharField(
        _("name (Chinese)"),
        max_length=max_length,
        blank=True,
        help_text=_("Shown in the Chinese interface and proposals; empty: the name."),
        validators=[single_line],
    )


def non_negative(errors: dict[str, list], obj: models.Model, names: list[str] | tuple[str, ...]) -> None:
    """Add a field error for every numeric field below zero."""
    for name in names:
        value = getattr(obj, name, None)
        if value is not None and value < 0:
            f = obj._meta.get_field(name)
            errors.setdefault(name, []).append(
                ValidationError(
                    _("%(field)s cannot be negative."), params={"field": f.verbose_name}, code="negative"
                )
            )


def json_value(value: Any) -> Any:
    """A field value as it goes into ``seed_values`` / hashes (JSON-safe, stable)."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else str(value.normalize())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
