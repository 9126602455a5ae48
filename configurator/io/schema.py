"""JSON Schemas of the plan request and response, generated from the engine types.

``docs/plan-request.schema.json`` and ``docs/plan-response.schema.json`` are
written by ``python -m configurator.io.schema docs/``; a test checks the committed
files equal what this module generates, so the documentation cannot drift from
the code.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types as pytypes
import typing
from decimal import Decimal
from enum import Enum
from pathlib import Path

from ..engine import types as et
from ..engine.engine_versions import ENGINES, SUPPORTED
from .requests import RANGES, SECTIONS, _hints, _range_key

NUMBER_OR_STRING = {
    "type": ["number", "string"],
    "description": "a number (decimal strings keep money exact)",
}


def _type_schema(tp, path: str) -> dict:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, pytypes.UnionType):
        options = [a for a in args if a is not type(None)]
        schema: dict = (
            _type_schema(options[0], path)
            if len(options) == 1
            else {"anyOf": [_type_schema(a, path) for a in options]}
        )
        if type(None) in args:
            schema = {"anyOf": [schema, {"type": "null"}]}
        return schema
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        schema = {"type": "integer"}
    elif tp in (float, Decimal):
        schema = dict(NUMBER_OR_STRING) if tp is Decimal else {"type": "number"}
    elif tp is str:
        return {"type": "string", "maxLength": 2000}
    elif isinstance(tp, type) and issubclass(tp, Enum):
        return {"enum": [m.value for m in tp]}
    elif dataclasses.is_dataclass(tp):
        return _object_schema(tp, path)
    elif origin is tuple:
        return {"type": "array", "items": _type_schema(args[0], path) if args else {}}
    elif origin is not None and issubclass(origin, typing.Mapping) or tp is typing.Mapping:
        return {"type": "object"}
    else:
        return {}
    bounds = RANGES.get(_range_key(path))
    if bounds:
        schema["minimum"], schema["maximum"] = bounds
    return schema


def _object_schema(cls, path: str, *, all_optional: bool = False) -> dict:
    hints = _hints(cls)
    properties, required = {}, []
    for f in dataclasses.fields(cls):
        properties[f.name] = _type_schema(hints[f.name], f"{path}.{f.name}" if path else f.name)
        if not all_optional and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if cls.__doc__:
        schema["description"] = " ".join(cls.__doc__.split())
    return schema


def _entry(name: str, cls) -> dict:
    return {
        "description": f"a catalog slug, or the {name} inline",
        "anyOf": [{"type": "string", "maxLength": 200}, _object_schema(cls, name)],
    }


def request_schema() -> dict:
    """The JSON Schema of ``POST /api/plan`` requests."""
    parallel = {"anyOf": [{"const": "auto"}, _object_schema(et.ParallelSpec, "parallel")]}
    model = _entry("model", et.ModelSpec)
    model["anyOf"].append(
        {
            "type": "object",
            "description": "a Hugging Face config.json with the served weights' format or size",
            "properties": {
                "hf_config": {"type": "object"},
                "weight_format": {"type": "string"},
                "weight_bytes": {"type": "integer", "minimum": 1},
                "slug": {"type": "string"},
                "name": {"type": "string"},
            },
            "required": ["hf_config"],
            "additionalProperties": False,
        }
    )
    commercial = _object_schema(et.CommercialSpec, "commercial", all_optional=True)
    commercial["properties"]["price_list"] = {
        "type": "string",
        "description": "price-list slug (default: in force on date)",
    }
    commercial["properties"]["date"] = {
        "type": "string",
        "format": "date",
        "description": "quote date, YYYY-MM-DD",
    }
    properties = {
        "scenario": {
            "type": "string",
            "description": "scenario slug (a label; workload values are explicit)",
        },
        "model": model,
        "checkpoint": _entry("checkpoint", et.CheckpointSpec),
        "server": _entry("server", et.ServerSpec),
        "topology": {
            "type": "object",
            "properties": {
                "kind": {"enum": [k.value for k in et.TopologyKind]},
                "nodes": {
                    "type": "integer",
                    "minimum": RANGES["topology.nodes"][0],
                    "maximum": RANGES["topology.nodes"][1],
                },
                "prefill_nodes": {"type": "integer", "minimum": 0},
                "decode_nodes": {"type": "integer", "minimum": 0},
                "parallel": parallel,
                "decode_parallel": parallel,
            },
            "required": ["nodes"],
            "additionalProperties": False,
        },
        "site": _entry("site", et.SiteSpec),
        "rack": _entry("rack", et.RackSpec),
        "switches": {
            "anyOf": [
                {"type": "array", "items": {"type": "string"}},
                {"type": "array", "items": _object_schema(et.SwitchSpec, "switches")},
            ]
        },
        "commercial": commercial,
        # An inline request's catalog drafts (request_to_inline): replanned without the catalog.
        "speculators": {"type": "array", "items": _object_schema(et.SpeculatorSpec, "speculators")},
    }
    for name, cls in SECTIONS.items():
        properties[name] = _object_schema(cls, name, all_optional=True)
    serving = properties["serving"]["properties"]
    serving["engine"] = {
        "enum": ["", *ENGINES],
        "description": "the serving engine; empty: the platform's (vllm on CUDA, vllm-ascend on Ascend)",
    }
    serving["vllm_version"] = {
        "type": "string",
        "maxLength": 32,
        "description": "the engine's version (supported: "
        + "; ".join(f"{e} {lo[0]}.{lo[1]} to {hi[0]}.{hi[1]}.x" for e, (lo, hi) in SUPPORTED.items())
        + "); unset: the launch recipe's",
    }
    speculative = {
        "method": {
            "enum": ["", *et.SPECULATIVE_METHODS],
            "description": "vLLM's --speculative-config method; empty: off",
        },
        "num_speculative_tokens": {
            "type": "integer",
            "minimum": 0,
            "maximum": 16,
            "description": "speculative tokens a step; 0: the draft's published count",
        },
        "draft": {"type": "string", "maxLength": 80, "description": "a catalog draft of the model, by slug"},
    }
    serving["speculative"]["properties"] = speculative
    for role in ("prefill", "decode"):
        block = serving[role]
        for option in block.get("anyOf", [block]):
            if option.get("type") == "object":
                option["properties"]["speculative"] = {
                    "anyOf": [
                        {"type": "object", "properties": speculative, "additionalProperties": False},
                        {"type": "null"},
                    ]
                }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "plan-request.schema.json",
        "title": "Plan request",
        "type": "object",
        "properties": properties,
        "required": ["model", "server", "topology"],
        "additionalProperties": False,
    }


CHECK = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "severity": {"enum": ["ok", "warning", "error"]},
        "area": {"type": "string"},
        "message": {"type": "string"},
        "message_zh": {"type": "string"},
        "field": {"type": "string"},
        "fix": {"type": "object"},
        "fix_en": {"type": "string"},
        "fix_zh": {"type": "string"},
        "requirement": {
            "type": "object",
            "description": "a proven change of the customer's requirement that clears the finding (not a fix)",
        },
        "figures": {"type": "object"},
    },
    "required": ["code", "severity", "message", "message_zh", "field", "fix"],
}
PER_RANK = {
    "type": "object",
    "properties": {name: {"type": "integer"} for name in (f.name for f in dataclasses.fields(et.RankMemory))},
    "required": ["weights_bytes", "kv_cache_bytes", "kv_tokens"],
}
FIGURE = {
    "type": "object",
    "properties": {
        "value": {},
        "unit": {"type": "string"},
        "label_en": {"type": "string"},
        "label_zh": {"type": "string"},
        "formula": {"type": "string"},
        "inputs": {"type": "object"},
        "source": {
            "type": "object",
            "properties": {
                "kind": {"enum": ["seed", "public", "assumed", "input", "derived"]},
                "ref": {"type": "string"},
            },
            "required": ["kind", "ref"],
        },
    },
    "required": ["value", "unit", "label_en", "label_zh", "formula", "inputs", "source"],
}


def response_schema() -> dict:
    """The JSON Schema of ``POST /api/plan`` responses (the stable part)."""
    section = {"anyOf": [{"type": "object"}, {"type": "null"}]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "plan-response.schema.json",
        "title": "Plan response",
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "checks": {"type": "array", "items": CHECK},
            "layout": {"type": "object"},
            "memory": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "group": {"type": ["string", "null"]},
                            "per_rank": {"anyOf": [PER_RANK, {"type": "null"}]},
                            "kv_tokens_per_dp_rank": {"type": "integer"},
                            "full_len_seqs_per_dp_rank": {"type": "integer"},
                            "max_num_seqs_fit": {"type": "boolean"},
                            "groups": {"type": "array"},
                        },
                        "required": ["per_rank", "groups"],
                    },
                    {"type": "null"},
                ]
            },
            "power": section,
            "racks": section,
            "network": section,
            "performance": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "capacity_concurrency": {"type": "integer"},
                            "design_point": {"anyOf": [_object_schema(et.DesignPoint, ""), {"type": "null"}]},
                        },
                    },
                    {"type": "null"},
                ]
            },
            "tco": section,
            "launch": section,
            # The settings each role's engines run (engine/speculative.py serving_roles).
            "serving": {"type": "array", "items": _object_schema(et.RoleServing, "")},
            "figures": {"type": "object", "additionalProperties": FIGURE},
        },
        "required": ["ok", "checks", "layout", "memory", "power", "racks", "network", "figures"],
    }


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in (("plan-request", request_schema()), ("plan-response", response_schema())):
        (directory / f"{name}.schema.json").write_text(
            json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        )


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
