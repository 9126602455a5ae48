"""Load start-up log entries for the memory calibration (``tests/data/vllm_startup_logs.yaml``).

An entry gives the model's dimensions either inline (``arch``) or as a public
``config.json`` (``config``: a file name in ``tests/data/model-configs`` or a
path), which the catalog's importer reads.  The engine's
``configurator.engine.calibration`` then predicts each start-up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "vllm_startup_logs.yaml"
CONFIGS = ROOT / "tests" / "data" / "model-configs"

_ARCH_FIELDS = (
    "hidden_size",
    "vocab_size",
    "num_layers",
    "num_kv_heads",
    "head_dim",
    "num_attention_heads",
    "mla_layers",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_layers",
    "sliding_window",
    "num_experts",
    "experts_per_token",
)


def arch_from_config(config: dict[str, Any]) -> dict[str, int]:
    """The dimensions the memory model needs, from a Hugging Face config.json."""
    from catalog.importers.hf_config import parse_hf_config

    fields = parse_hf_config(config).fields
    arch = {name: int(fields[name]) for name in _ARCH_FIELDS if fields.get(name) is not None}
    # Linear-attention layers hold no per-token KV: count them with the layers, as GQA-free.
    arch["num_layers"] = int(fields["gqa_layers"] + fields["mla_layers"] + fields["sliding_layers"])
    return arch


def load_entries(path: Path | str = DATA) -> list[dict[str, Any]]:
    import yaml

    entries = yaml.safe_load(Path(path).read_text(encoding="utf-8"))["entries"]
    for entry in entries:
        if "arch" not in entry and entry.get("config"):
            config_path = Path(entry["config"])
            if not config_path.is_absolute():
                config_path = CONFIGS / config_path
            entry["arch"] = arch_from_config(json.loads(config_path.read_text(encoding="utf-8")))
    return entries
