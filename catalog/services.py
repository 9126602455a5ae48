"""Writes to the catalog: loading the seed, saving an imported config.json.

Each public function is keyword-only, runs ``full_clean()`` before saving and
works inside one transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import models, transaction

from .importers.hf_config import ImportedModel, parse_hf_config
from .models import (
    Accelerator,
    Checkpoint,
    LlmModel,
    PriceItem,
    PriceList,
    RackType,
    Scenario,
    ServerModel,
    ServerNic,
    SiteProfile,
    SourcedModel,
    SpeculativeDraft,
    SwitchModel,
    TopologyTemplate,
)
from .models.base import json_value
from .seed import loader as seed_loader

NIC_FIELDS = seed_loader.NIC_FIELDS
LOAD_REASON = "load_catalog"


# --------------------------------------------------------------------------- seed records


@dataclass
class SeedRecord:
    """One row as the seed wants it: plain values, per-field sources, relations by slug."""

    model: type[SourcedModel]
    key: dict[str, Any]
    values: dict[str, Any]
    sources: dict[str, dict[str, str]]
    foreign_keys: dict[str, str | None] = field(default_factory=dict)
    many_to_many: dict[str, list[str]] = field(default_factory=dict)
    nics: list[dict[str, Any]] | None = None

    @property
    def label(self) -> str:
        key = "/".join(str(v) for v in self.key.values())
        return f"{self.model._meta.model_name} {key}"

    def snapshot(self) -> dict[str, Any]:
        snap: dict[str, Any] = {name: json_value(v) for name, v in self.values.items()}
        snap.update(self.foreign_keys)
        snap.update({name: sorted(slugs) for name, slugs in self.many_to_many.items()})
        snap["sources"] = self.sources
        if self.nics is not None:
            snap["nics"] = _sorted_nics([{k: json_value(n[k]) for k in NIC_FIELDS} for n in self.nics])
        return snap


def _sorted_nics(nics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(nics, key=lambda n: (n["role"], n["fabric"]))


# The seed's kinds of record (catalog.seed.loader.KINDS) → the tables they fill.
SEED_MODELS: dict[str, type[SourcedModel]] = {
    "accelerator": Accelerator,
    "server": ServerModel,
    "switch": SwitchModel,
    "rack": RackType,
    "site": SiteProfile,
    "topology": TopologyTemplate,
    "llm_model": LlmModel,
    "checkpoint": Checkpoint,
    "speculative_draft": SpeculativeDraft,
    "scenario": Scenario,
    "price_list": PriceList,
    "price_item": PriceItem,
}


def _seed_record(record: seed_loader.Record) -> SeedRecord:
    """A loaded record for its table; refuses a figure of the table that has no source."""
    model = SEED_MODELS[record.kind]
    names = model.sourced_field_names()
    if model is LlmModel:  # the importer gives every figure: all must have a source
        missing = [n for n in names if n not in record.sources]
    else:
        missing = [n for n in names if n in record.values and n not in record.sources]
    if missing:
        raise ValueError(f"seed {model.__name__} {record.slug}: no source for {', '.join(missing)}")
    return SeedRecord(
        model,
        dict(record.key),
        dict(record.values),
        {k: dict(v) for k, v in record.sources.items()},
        dict(record.foreign_keys),
        {k: list(v) for k, v in record.many_to_many.items()},
        [dict(n) for n in record.nics] if record.nics is not None else None,
    )


def seed_records(seed: seed_loader.Seed | None = None) -> list[SeedRecord]:
    """Every seeded row (catalog/seed/*.yaml, read by :mod:`catalog.seed.loader`), in dependency order."""
    return [_seed_record(r) for r in (seed or seed_loader.load()).records]


# --------------------------------------------------------------------------- snapshots of stored rows


def row_snapshot(obj: SourcedModel, keys: Iterable[str]) -> dict[str, Any]:
    """The stored row in the same shape as :meth:`SeedRecord.snapshot`, over ``keys``."""
    snap: dict[str, Any] = {}
    for name in keys:
        if name == "sources":
            snap[name] = obj.sources
        elif name == "nics":
            nics = (
                [{k: json_value(getattr(n, k)) for k in NIC_FIELDS} for n in obj.nics.all()] if obj.pk else []
            )
            snap[name] = _sorted_nics(nics)
        else:
            try:
                f = obj._meta.get_field(name)
            except Exception:  # a field the seed once had and the model lost
                snap[name] = None
                continue
            if f.many_to_many:
                snap[name] = sorted(getattr(obj, name).values_list("slug", flat=True)) if obj.pk else []
            elif f.is_relation:
                related = getattr(obj, name)
                snap[name] = related.slug if related is not None else None
            else:
                snap[name] = json_value(getattr(obj, name))
    return snap


def snapshot_hash(snapshot: dict[str, Any]) -> str:
    text = json.dumps(snapshot, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seed_state(obj: SourcedModel) -> str:
    """``seeded`` (as load_catalog left it), ``edited`` (changed since) or ``manual`` (never seeded)."""
    if not obj.seed_hash or not obj.seed_values:
        return "manual"
    if row_snapshot(obj, obj.seed_values.keys()) != obj.seed_values:
        return "edited"
    return "seeded"


def changed_since_seed(obj: SourcedModel) -> list[str]:
    """Fields whose stored value differs from what load_catalog last wrote, by
    name (PostgreSQL's jsonb does not keep the seeded key order)."""
    current = row_snapshot(obj, obj.seed_values.keys())
    return sorted(k for k, v in obj.seed_values.items() if current.get(k) != v)


# --------------------------------------------------------------------------- loading


@dataclass
class SeedReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (row, reason)

    def summary(self) -> str:
        return (
            f"created {len(self.created)}, updated {len(self.updated)}, unchanged {len(self.unchanged)}, "
            f"skipped {len(self.skipped)}"
        )


def _resolve(record: SeedRecord) -> dict[str, models.Model | None]:
    resolved = {}
    for name, slug in record.foreign_keys.items():
        related_model = record.model._meta.get_field(name).related_model
        resolved[name] = related_model.objects.get(slug=slug) if slug else None
    return resolved


def _lookup(record: SeedRecord) -> SourcedModel | None:
    key = {}
    for name, value in record.key.items():
        if name in record.foreign_keys:
            key[f"{name}__slug"] = value
        else:
            key[name] = value
    return record.model.objects.filter(**key).first()


def _write(obj: SourcedModel, record: SeedRecord, snapshot: dict[str, Any]) -> None:
    for name, value in record.values.items():
        setattr(obj, name, value)
    for name, related in _resolve(record).items():
        setattr(obj, name, related)
    obj.sources = record.sources
    obj.seed_values = snapshot
    obj.seed_hash = snapshot_hash(snapshot)
    obj.full_clean()
    obj._change_reason = LOAD_REASON
    obj.save()
    for name, slugs in record.many_to_many.items():
        related_model = record.model._meta.get_field(name).related_model
        getattr(obj, name).set(related_model.objects.filter(slug__in=slugs))
    if record.nics is not None:
        obj.nics.all().delete()
        for nic in record.nics:
            n = ServerNic(server=obj, **nic)
            n.full_clean()
            n._change_reason = LOAD_REASON
            n.save()


def _write_or_report(
    obj: SourcedModel, record: SeedRecord, snapshot: dict[str, Any], report: SeedReport
) -> bool:
    """Write one row in its own savepoint; a row the catalog refuses is reported, not fatal."""
    try:
        with transaction.atomic():
            _write(obj, record, snapshot)
    except ValidationError as exc:
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
        report.skipped.append((record.label, f"refused by validation ({problems})"))
        return False
    except ObjectDoesNotExist as exc:
        report.skipped.append((record.label, f"a related row is missing ({exc})"))
        return False
    return True


@transaction.atomic
def load_catalog_seed(*, dry_run: bool = False, log: Callable[[str], None] | None = None) -> SeedReport:
    """Load the seeded catalog.  Idempotent; never overwrites a row an admin edited.

    A row is updated only if its stored values still equal what the previous
    load wrote (its ``seed_values``); rows changed since, or created outside
    the loader, are left alone and reported with the reason.
    """
    report = SeedReport()
    for record in seed_records():
        snapshot = record.snapshot()
        new_hash = snapshot_hash(snapshot)
        obj = _lookup(record)
        if obj is None:
            if _write_or_report(record.model(), record, snapshot, report):
                report.created.append(record.label)
        elif not obj.seed_hash or not obj.seed_values:
            report.skipped.append(
                (record.label, "not created by load_catalog (no seed marker): left as it is")
            )
        elif snapshot_hash(obj.seed_values) != obj.seed_hash:
            report.skipped.append(
                (record.label, "seed marker does not match its recorded values: left as it is")
            )
        elif changed := changed_since_seed(obj):
            report.skipped.append(
                (record.label, f"edited since the last load ({', '.join(sorted(changed))}): left as it is")
            )
        elif obj.seed_hash == new_hash:
            report.unchanged.append(record.label)
        elif _write_or_report(obj, record, snapshot, report):
            report.updated.append(record.label)
    if log:
        for label in report.created:
            log(f"created   {label}")
        for label in report.updated:
            log(f"updated   {label}")
        for label, reason in report.skipped:
            log(f"skipped   {label}: {reason}")
        log(report.summary() + (" (dry run, rolled back)" if dry_run else ""))
    if dry_run:
        transaction.set_rollback(True)
    return report


# --------------------------------------------------------------------------- importing a config.json


class ImportConflict(Exception):
    """The slug exists and the caller did not ask to update it."""


@transaction.atomic
def llm_model_save_import(
    *,
    imported: ImportedModel,
    slug: str,
    name: str = "",
    update_existing: bool = False,
    change_reason: str = "imported from config.json",
) -> tuple[LlmModel, bool]:
    """Create (or, with ``update_existing``, update) an LlmModel from an importer result.

    Returns ``(model, created)``.  Only architecture, weight and format fields
    are written on update; prices, licence and vLLM flags an admin set stay.
    """
    obj = LlmModel.objects.filter(slug=slug).first()
    created = obj is None
    if obj is not None and not update_existing:
        raise ImportConflict(
            f"An LLM with slug “{slug}” exists; tick “update existing” to overwrite its architecture."
        )
    if obj is None:
        obj = LlmModel(slug=slug)
    values = dict(imported.fields)
    if name:
        values["name"] = name
    if not created and not name:
        values.pop("name")  # keep the admin's display name
    for key, value in values.items():
        setattr(obj, key, value)
    sources = dict(obj.sources or {})
    sources.update(imported.sources)
    obj.sources = sources
    obj.full_clean()
    obj._change_reason = change_reason
    obj.save()
    return obj, created


def parse_and_save_config(
    *,
    data: dict[str, Any],
    slug: str,
    name: str = "",
    hf_model_id: str = "",
    weight_format: str | None = None,
    update_existing: bool = False,
) -> tuple[LlmModel, bool, ImportedModel]:
    """Parse a config.json object and save it as an LlmModel (see :func:`llm_model_save_import`)."""
    imported = parse_hf_config(data, weight_format=weight_format or None, hf_model_id=hf_model_id, name=name)
    obj, created = llm_model_save_import(
        imported=imported, slug=slug, name=name, update_existing=update_existing
    )
    return obj, created, imported
