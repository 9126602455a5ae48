"""Every seeded server plans a reference model without an exception, with sane figures (issue 30).

The reference model is Qwen3-32B (dense, BF16, public config Qwen/Qwen3-32B): 32,762,123,264
parameters × 2 bytes = 65,524,246,528 bytes of weights, small enough for one server of every
accelerator in the catalog (4 × 48 GB PCIe cards included), so each plan exercises the whole engine
rather than stopping at "does not fit".  One node, and two nodes wherever the server has a scale-out
NIC (the parameter plane between nodes).  A server whose accelerator vLLM does not run on is
refused with the catalog's reason instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.seed import loader
from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.types import Severity

SEED = loader.load()
CONFIG = Path(loader.CONFIG_DIR) / "Qwen--Qwen3-32B.config.json"
MODEL = "qwen3-32b"
SANITY_AREAS = ("memory", "power", "network", "racks", "cooling")


def _weights_bytes() -> int:
    """Qwen3-32B's BF16 weights from its public config, counted here, not by the importer:
    embedding + lm_head (untied) + per layer (q, k, v, o, q/k norms, 2 RMSNorms, gate/up/down) + final norm."""
    c = json.loads(CONFIG.read_text(encoding="utf-8"))
    h, layers, inter = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"]
    heads, kv, hd, vocab = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["vocab_size"]
    attention = h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd
    mlp = 3 * h * inter
    params = 2 * vocab * h + layers * (attention + mlp + 2 * h) + h
    return 2 * params


def _servers(supported: bool) -> list[str]:
    accelerators = {r.slug: r for r in SEED.of("accelerator")}
    return [
        r.slug
        for r in SEED.of("server")
        if (accelerators[r.foreign_keys["accelerator"]].values.get("vllm_support", "supported") != "none")
        is supported
    ]


def _cases() -> list[tuple[str, int]]:
    out = []
    for slug in _servers(True):
        out.append((slug, 1))
        server = SEED.get("server", slug)
        if any(n["role"] == "scale_out" for n in server.nics or []):
            out.append((slug, 2))
    return out


def test_every_accelerator_has_a_server():
    with_server = {r.foreign_keys["accelerator"] for r in SEED.of("server")}
    assert with_server == {r.slug for r in SEED.of("accelerator")}


def test_the_reference_weights_are_what_the_config_says():
    assert _weights_bytes() == 65_524_246_528 == reference.model(MODEL).weight_bytes


@pytest.mark.parametrize(("slug", "nodes"), _cases(), ids=lambda v: str(v))
def test_the_reference_model_plans_on_every_server(slug, nodes):
    req = reference.request(
        {
            "model": MODEL,
            "server": slug,
            "topology": {"kind": "single", "nodes": nodes},
            "commercial": reference.COMMERCIAL,
        }
    )
    result = plan(req)
    server = req.server
    errors = [c.code for c in result.checks if c.severity == Severity.ERROR and c.area in SANITY_AREAS]
    assert not errors, errors
    assert result.layout.nodes == nodes

    # Memory: the ranks of a group hold the whole checkpoint between them, within each device.
    weights = _weights_bytes()
    for group, mem in zip(result.layout.groups, result.memory.groups, strict=True):
        p = group.parallel
        rank = mem.per_rank
        assert rank.weights_bytes * p.tp * p.pp == pytest.approx(weights, rel=0.01)
        assert 0 < rank.usable_bytes <= rank.device_bytes
        assert rank.kv_cache_bytes > 0 and mem.kv_tokens_per_dp_rank > 0
        assert p.tp * p.pp * p.dp == nodes * server.logical_devices

    # Power: every server at its maximum input; the IT load adds the switches.
    assert result.power.servers == nodes
    assert result.power.servers_kw == pytest.approx(nodes * server.max_input_kw)
    assert result.power.it_kw >= result.power.servers_kw

    # Racks: every server placed, no rack over its power.
    assert result.racks.rack_count >= 1
    assert result.racks.units_used >= nodes * server.rack_units
    assert result.racks.total_kw == pytest.approx(result.power.it_kw, rel=0.01)

    # Network: two nodes are joined by a scale-out switch with a port for every scale-out NIC port.
    if nodes > 1:
        scale_out = [r for r in result.network.rows if r.role == "scale_out" and r.scope != "in-node"]
        ports = sum(n.count for n in server.nics if n.role == "scale_out")
        assert scale_out and scale_out[0].switches >= 1
        assert scale_out[0].ports_needed >= nodes * ports


@pytest.mark.parametrize("slug", _servers(False))
def test_a_server_vllm_does_not_run_on_is_refused_with_the_reason(slug):
    req = reference.request({"model": MODEL, "server": slug, "topology": {"kind": "single", "nodes": 1}})
    result = plan(req)
    refusal = [c for c in result.checks if c.code == "hardware.vllm_unsupported"]
    assert len(refusal) == 1 and refusal[0].severity == Severity.ERROR
    note = req.server.accelerator.vllm_support_note
    assert note and note in refusal[0].message_en and note in refusal[0].message_zh
    assert not result.ok


def test_the_first_generation_ascend_is_the_refused_row():
    # vLLM-Ascend FAQ "What devices are currently supported?": Ascend 910 / 910 Pro B are not.
    assert _servers(False) == ["atlas-800-9000"]
    assert reference.accelerator("ascend-910-gen1").vllm_support == "none"
