"""The seeded catalog's files → records: one pure reader (no Django) for everything that uses the seed.

The seed is the YAML files beside this module (one per kind: ``accelerators.yaml``, ``servers.yaml``,
``switches.yaml``, ``racks.yaml``, ``sites.yaml``, ``topologies.yaml``, ``models.yaml``,
``checkpoints.yaml``, ``drafts.yaml``, ``scenarios.yaml``, ``price_lists.yaml``) and the public config.json files in
``model-configs/``.  A figure is written ``{value: ..., source: {kind: seed|public|assumed, ref: "..."}}``;
plain values (slugs, names, descriptions) carry no source.  :func:`load` refuses a number written
without a source, naming the file, the record and the field, so nothing enters the catalog unexplained.

Decimals: YAML numbers with a decimal point are read as :class:`~decimal.Decimal` from their text
(``61.27`` → ``Decimal("61.27")``), never through float; whole numbers are ``int``.

Users: ``catalog.services.load_catalog_seed`` (``manage.py load_catalog``) writes the records to the
database; ``configurator.reference`` builds the engine's specs from the same records without one.

    >>> from catalog.seed.loader import load
    >>> seed = load()
    >>> seed.get("server", "atlas-800-a3").values["max_input_kw"]
    Decimal('16.20')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from catalog.importers.hf_config import parse_hf_config

SEED_DIR = Path(__file__).resolve().parent
CONFIG_DIR = SEED_DIR / "model-configs"

SOURCE_KINDS = ("seed", "public", "assumed")
NIC_FIELDS = ("fabric", "role", "count", "speed_gbps", "source_kind", "source_ref")

# kind → (file, key fields, foreign keys (field → kind of the row it names), many-to-many fields),
# in the order the rows must be created (a row names only rows above it).
KINDS: dict[str, tuple[str, tuple[str, ...], dict[str, str], tuple[str, ...]]] = {
    "accelerator": ("accelerators.yaml", ("slug",), {}, ()),
    "server": ("servers.yaml", ("slug",), {"accelerator": "accelerator"}, ()),
    "switch": ("switches.yaml", ("slug",), {}, ()),
    "rack": ("racks.yaml", ("slug",), {}, ()),
    "site": ("sites.yaml", ("slug",), {}, ()),
    "topology": ("topologies.yaml", ("slug",), {}, ()),
    "llm_model": ("models.yaml", ("slug",), {}, ("validated_text_only_on",)),
    "checkpoint": ("checkpoints.yaml", ("slug",), {"model": "llm_model"}, ()),
    "speculative_draft": ("drafts.yaml", ("slug",), {"target": "llm_model"}, ()),
    "scenario": (
        "scenarios.yaml",
        ("slug",),
        {
            "recommended_topology": "topology",
            "recommended_model": "llm_model",
            "recommended_server": "server",
        },
        (),
    ),
    "price_list": ("price_lists.yaml", ("slug",), {}, ()),
    "price_item": ("price_lists.yaml", ("price_list", "sku"), {"price_list": "price_list"}, ()),
}

ASSUMED_DIMENSION = "placeholder dimension: no config.json in the reference set"


class SeedError(ValueError):
    """A seed file that cannot be loaded: the message names the file, the record and the field."""


@dataclass(frozen=True)
class Record:
    """One seeded row: plain values, a source per figure, relations by slug.

    ``values`` hold every non-relation field the seed gives (figures unwrapped from their source);
    ``foreign_keys`` map a relation field to the slug of the row it names (None: no row);
    ``many_to_many`` map to slugs; ``nics`` (servers only) are dicts of :data:`NIC_FIELDS`.
    """

    kind: str
    key: dict[str, Any]
    values: dict[str, Any]
    sources: dict[str, dict[str, str]]
    foreign_keys: dict[str, str | None] = field(default_factory=dict)
    many_to_many: dict[str, list[str]] = field(default_factory=dict)
    nics: list[dict[str, Any]] | None = None

    @property
    def slug(self) -> str:
        return str(self.key.get("slug", "/".join(str(v) for v in self.key.values())))

    def value(self, name: str, default: Any = None) -> Any:
        """A field's value: a plain value, a relation's slug or (many-to-many) its list of slugs."""
        if name in self.values:
            return self.values[name]
        if name in self.foreign_keys:
            return self.foreign_keys[name]
        return self.many_to_many.get(name, default)


@dataclass(frozen=True)
class Seed:
    """Every seeded record, in the order they must be created."""

    records: tuple[Record, ...]

    def of(self, kind: str) -> list[Record]:
        return [r for r in self.records if r.kind == kind]

    def get(self, kind: str, slug: str) -> Record | None:
        for r in self.records:
            if r.kind == kind and r.slug == slug:
                return r
        return None


# --------------------------------------------------------------------------- reading YAML


class _Loader(yaml.SafeLoader):
    """SafeLoader that reads decimal numbers as Decimal from their text (exact, no float)."""


def _decimal(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Decimal:
    return Decimal(str(loader.construct_scalar(node)).replace("_", ""))


_Loader.add_constructor("tag:yaml.org,2002:float", _decimal)


def read_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.load(f, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _is_figure(item: Any) -> bool:
    return isinstance(item, Mapping) and set(item) == {"value", "source"}


class _Where:
    def __init__(self, file: str, record: str) -> None:
        self.file, self.record = file, record

    def error(self, name: str, message: str) -> SeedError:
        return SeedError(f"{self.file}: record {self.record}: field {name}: {message}")


def _source(where: _Where, name: str, source: Any) -> dict[str, str]:
    if not isinstance(source, Mapping) or set(source) != {"kind", "ref"}:
        raise where.error(name, 'source must be {kind: seed|public|assumed, ref: "..."}')
    if source["kind"] not in SOURCE_KINDS:
        raise where.error(name, f"source kind {source['kind']!r} is not one of {', '.join(SOURCE_KINDS)}")
    if not isinstance(source["ref"], str):
        raise where.error(name, "source ref must be text")
    return {"kind": source["kind"], "ref": source["ref"]}


def _fields(
    where: _Where, raw: Mapping[str, Any], skip: Iterable[str] = ()
) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """Unwrap ``{value, source}`` figures; refuse a number without a source."""
    values: dict[str, Any] = {}
    sources: dict[str, dict[str, str]] = {}
    for name, item in raw.items():
        if name in skip:
            continue
        if _is_figure(item):
            values[name] = item["value"]
            sources[name] = _source(where, name, item["source"])
        elif _is_number(item):
            raise where.error(
                name, f"the number {item} has no source; write {{value: {item}, source: {{kind, ref}}}}"
            )
        else:
            values[name] = item
    return values, sources


def _nics(where: _Where, raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise where.error("nics", "must be a list")
    nics = []
    for i, nic in enumerate(raw):
        name = f"nics[{i}]"
        if not isinstance(nic, Mapping) or set(nic) != {"fabric", "role", "count", "speed_gbps", "source"}:
            raise where.error(name, "a NIC is {fabric, role, count, speed_gbps, source}")
        source = _source(where, name, nic["source"])
        nics.append(
            {
                "fabric": nic["fabric"],
                "role": nic["role"],
                "count": nic["count"],
                "speed_gbps": nic["speed_gbps"],
                "source_kind": source["kind"],
                "source_ref": source["ref"],
            }
        )
    return nics


def _record(
    kind: str, where: _Where, raw: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> Record:
    _, key_names, fks, m2m = KINDS[kind]
    raw = {**raw, **(extra or {})}
    values, sources = _fields(where, raw, skip=("nics",))
    foreign = {name: values.pop(name) for name in fks if name in values}
    many = {name: list(values.pop(name) or []) for name in m2m if name in values}
    key = {name: foreign[name] if name in foreign else values.get(name) for name in key_names}
    nics = _nics(where, raw["nics"]) if "nics" in raw else None
    return Record(kind, key, values, sources, foreign, many, nics)


def _records_in(directory: Path, kind: str) -> list[Record]:
    file = KINDS[kind][0]
    rows = read_yaml(directory / file)
    if not isinstance(rows, list):
        raise SeedError(f"{file}: must be a list of records")
    out = []
    for i, raw in enumerate(rows):
        where = _Where(
            file,
            str(raw.get("slug") or raw.get("sku") or f"#{i + 1}")
            if isinstance(raw, Mapping)
            else f"#{i + 1}",
        )
        if not isinstance(raw, Mapping):
            raise SeedError(f"{file}: record {where.record}: must be a mapping of fields")
        if kind == "price_list":
            raw = dict(raw)
            items = raw.pop("items", [])
            out.append(_record(kind, where, raw))
            for j, item in enumerate(items):
                item_where = _Where(file, f"{raw.get('slug')}/{item.get('sku', f'#{j + 1}')}")
                out.append(_record("price_item", item_where, item, {"price_list": raw.get("slug")}))
        elif kind == "llm_model":
            out.append(_llm_record(directory, where, raw))
        else:
            out.append(_record(kind, where, raw))
    return out


def _llm_record(directory: Path, where: _Where, raw: Mapping[str, Any]) -> Record:
    """An LLM: its config.json through the importer, then the file's ``fields`` on top."""
    if "config" in raw:
        config = json.loads((directory / "model-configs" / raw["config"]).read_text(encoding="utf-8"))
    elif "config_dict" in raw:
        config = raw["config_dict"]
    else:
        raise where.error("config", "an LLM needs `config` (a file in model-configs/) or `config_dict`")
    hf_model_id = raw["hf_model_id"]
    imported = parse_hf_config(config, hf_model_id=hf_model_id)
    values = dict(imported.fields)
    sources = {k: dict(v) for k, v in imported.sources.items()}
    if raw.get("config_ref"):
        for entry in sources.values():
            entry["ref"] = entry["ref"].replace(f"HF config {hf_model_id}", raw["config_ref"])
    for name in raw.get("assumed_fields", ()):
        sources[name] = {"kind": "assumed", "ref": ASSUMED_DIMENSION}
    o_values, o_sources = _fields(where, raw.get("fields") or {})
    values.update(o_values)
    sources.update(o_sources)
    values["slug"] = raw["slug"]
    values["hf_model_id"] = hf_model_id
    many = {"validated_text_only_on": list(raw.get("validated_text_only_on", []))}
    return Record("llm_model", {"slug": raw["slug"]}, values, sources, {}, many)


def model_config(slug: str, directory: Path = SEED_DIR) -> dict[str, Any]:
    """The config.json object a seeded LLM is imported from (its file in model-configs/ or its
    ``config_dict``); KeyError for an LLM the seed does not list."""
    for raw in read_yaml(directory / KINDS["llm_model"][0]):
        if raw.get("slug") == slug:
            if "config" in raw:
                return json.loads((directory / "model-configs" / raw["config"]).read_text(encoding="utf-8"))
            return dict(raw["config_dict"])
    raise KeyError(f"no seeded LLM {slug!r}")


def load_from(directory: Path) -> Seed:
    """Every record of the seed files in ``directory`` (raises :class:`SeedError`)."""
    records: list[Record] = []
    for kind in KINDS:
        if kind == "price_item":
            continue  # read with their price list
        records.extend(_records_in(directory, kind))
    order = list(KINDS)
    records.sort(key=lambda r: order.index(r.kind))  # stable: file order within a kind
    return Seed(tuple(records))


@cache
def load() -> Seed:
    """The seed shipped with the project (read once per process; records are not to be mutated)."""
    return load_from(SEED_DIR)
