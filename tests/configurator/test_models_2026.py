"""The models presales teams quote in 2026: each seeded from its public config.json and planning on a server.

Expected figures are counted here from the config file, not by the importer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.seed import loader
from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.types import Severity

CONFIGS = Path(loader.CONFIG_DIR)
GIB = 2**30


def _plan(model: str, server: str, nodes: int = 1):
    req = reference.request(
        {
            "model": model,
            "server": server,
            "topology": {"kind": "single", "nodes": nodes},
            "commercial": reference.COMMERCIAL,
        }
    )
    return req, plan(req)


def _qwen3_moe_params(config: dict) -> int:
    """A qwen3_moe checkpoint's parameters: untied embedding and lm_head, per layer q/o and k/v projections,
    q/k RMSNorms, two layer RMSNorms, the router and the routed experts (gate, up, down), the final norm."""
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    heads, kv, hd = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    experts, inter = config["num_experts"], config["moe_intermediate_size"]
    attention = 2 * h * heads * hd + 2 * h * kv * hd + 2 * hd
    layer = attention + 2 * h + h * experts + experts * 3 * h * inter
    return 2 * config["vocab_size"] * h + layers * layer + h


def test_qwen3_coder_480b_is_its_config():
    config = json.loads((CONFIGS / "Qwen--Qwen3-Coder-480B-A35B-Instruct.config.json").read_text(encoding="utf-8"))
    params = _qwen3_moe_params(config)
    # Model card: 480 B parameters in total, 35 B activated.
    assert params == pytest.approx(480e9, rel=0.005)
    assert reference.model("qwen3-coder-480b-a35b").weight_bytes == 2 * params


def test_qwen3_coder_480b_bf16_tp8_plans_on_eight_h20_141gb():
    """Public vLLM and SGLang runs serve the BF16 release with TP8 on 8 × H20 141 GB.  Each rank holds an
    eighth of the 960 GB of weights (120 GB) in the 139.81 GiB the runtime sees (nvidia-smi: 143771MiB)."""
    config = json.loads((CONFIGS / "Qwen--Qwen3-Coder-480B-A35B-Instruct.config.json").read_text(encoding="utf-8"))
    weights = 2 * _qwen3_moe_params(config)
    req, result = _plan("qwen3-coder-480b-a35b", "h3c-r5500g6-h20-141")
    errors = [c.code for c in result.checks if c.severity == Severity.ERROR]
    assert not errors, errors
    group, mem = result.layout.groups[0], result.memory.groups[0]
    assert group.parallel.tp * group.parallel.pp == 8
    rank = mem.per_rank
    assert rank.device_bytes == int(139.81 * GIB)
    assert rank.weights_bytes == pytest.approx(weights / 8, rel=0.001)
    assert rank.kv_cache_bytes > 0 and mem.kv_tokens_per_dp_rank > 0
    # The 96 GB H20 cannot hold the same eighth: 120 GB > 96 GB × 0.9.
    _, small = _plan("qwen3-coder-480b-a35b", "hgx-h20-8gpu")
    assert "memory.weights_do_not_fit" in [c.code for c in small.checks if c.severity == Severity.ERROR]
