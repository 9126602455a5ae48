"""One decode graph mode for the estimate, the memory budget and the launch scripts.

``PlanRequest.decode_graphs`` answers once how decode runs: ``performance.graph_mode`` false or
``serving.enforce_eager`` → eager; ``performance.piecewise_graphs`` → PIECEWISE; else the recipe's
FULL_DECODE_ONLY.  A plan costed eager must launch ``--enforce-eager`` (vLLM's EngineArgs flag: no
CUDA / ACL graph capture) and keep no graph pool; a plan costed piecewise must launch
``--compilation-config '{"cudagraph_mode":"PIECEWISE"}'`` (vLLM's CUDAGraphMode.PIECEWISE), or the
figures the customer signs describe a server the scripts do not start.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from configurator import reference
from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.plan import plan
from configurator.engine.serving_model import EAGER_LAYER_OVERHEAD_S, effective_factors
from configurator.engine.types import PerformanceSpec, SpeculativeSpec

from .test_launch import _flags, _request, _script_commands, layout_for


def _with(req, **perf):
    return replace(req, performance=replace(req.performance, **perf))


def _engine_argvs(result, roles=("master", "worker", "decode")):
    return [(n.role, argv) for n in result.nodes if n.role in roles for argv in n.argv]


def test_the_request_names_one_graph_mode():
    req = _request("a3-4-single")
    assert req.decode_graphs == "full"
    assert _with(req, graph_mode=False).decode_graphs == "eager"
    assert _with(req, piecewise_graphs=True).decode_graphs == "piecewise"
    # eager wins over piecewise: no graph is captured at all
    assert _with(req, graph_mode=False, piecewise_graphs=True).decode_graphs == "eager"
    assert replace(req, serving=replace(req.serving, enforce_eager=True)).decode_graphs == "eager"


def test_an_eager_plan_launches_enforce_eager_and_drops_the_recipes_decode_graphs():
    req = _with(_request("a3-4-single"), graph_mode=False)
    result = build_launch(req, layout_for(req))
    files = bundle_files(result)
    for n in result.nodes:
        (argv,) = n.argv
        flags = _flags(argv)
        assert "--enforce-eager" in flags and flags["--enforce-eager"] is None
        # the A3 recipe's only compilation key was cudagraph_mode: nothing left to pass
        assert "--compilation-config" not in flags
        assert _script_commands(files[n.script]) == [list(argv)]
    readme = files["README.md"]
    # every node of this bundle runs it, so the README names no roles
    assert "| `--enforce-eager` | added | the plan is costed in eager mode" in readme


def test_an_eager_a2_plan_keeps_the_rest_of_its_compilation_config():
    """The A2 recipe passes capture sizes with its cudagraph_mode; both go, nothing else was in it."""
    full = _request("a2-8-text-only-modelslim")
    assert json.loads(
        _flags(build_launch(full, layout_for(full)).nodes[0].argv[0])["--compilation-config"]
    ) == {
        "cudagraph_mode": "FULL_DECODE_ONLY",
        "cudagraph_capture_sizes": [1, 2, 4, 8],
    }
    eager = _with(full, graph_mode=False)
    flags = _flags(build_launch(eager, layout_for(eager)).nodes[0].argv[0])
    assert "--compilation-config" not in flags and "--enforce-eager" in flags
    # the Ascend-specific graph options in --additional-config stay as the recipe wrote them: vLLM-Ascend
    # sets enable_npugraph_ex False itself when cudagraph_mode is NONE (releases/v0.26.0rc platform.py)
    assert "enable_npugraph_ex" in flags["--additional-config"]


def test_a_piecewise_a2_bundle_keeps_its_capture_sizes_and_says_what_it_passes():
    req = _with(_request("a2-8-text-only-modelslim"), piecewise_graphs=True)
    result = build_launch(req, layout_for(req))
    passed = _flags(result.nodes[0].argv[0])["--compilation-config"]
    assert json.loads(passed) == {"cudagraph_mode": "PIECEWISE", "cudagraph_capture_sizes": [1, 2, 4, 8]}
    # the README states the value the scripts pass, not a shortened one
    assert f"| `--compilation-config` | `{passed}` |" in bundle_files(result)["README.md"]


def test_a_piecewise_8p8d_plan_sets_piecewise_on_its_decode_engines_only():
    req = _with(_request("a3-16-8p8d"), piecewise_graphs=True)
    result = build_launch(req, layout_for(req))
    decode = [argv for role, argv in _engine_argvs(result, ("decode",))]
    prefill = [argv for role, argv in _engine_argvs(result, ("prefill",))]
    assert decode and prefill
    for argv in decode:
        flags = _flags(argv)
        assert json.loads(flags["--compilation-config"]) == {"cudagraph_mode": "PIECEWISE"}
        assert "--enforce-eager" not in flags
    for argv in prefill:  # [A3-PD] §5.1.2: prefill engines run eager whatever decode does
        flags = _flags(argv)
        assert "--enforce-eager" in flags and "--compilation-config" not in flags
    readme = bundle_files(result)["README.md"]
    assert '| `--compilation-config` (decode) | `{"cudagraph_mode":"PIECEWISE"}` |' in readme


def test_a_cuda_recipe_without_a_compilation_config_gets_one_for_piecewise():
    req = _with(_request("hgx-h200-2-single"), piecewise_graphs=True)
    flags = _flags(build_launch(req, layout_for(req)).nodes[0].argv[0])
    assert json.loads(flags["--compilation-config"]) == {"cudagraph_mode": "PIECEWISE"}


def test_an_eager_plan_keeps_no_graph_pool_and_pays_the_dispatch_of_every_layer():
    """vLLM ≥ 0.21 subtracts its graph-pool estimate before sizing the KV cache; eager captures
    nothing, so the eager plan's KV cache is larger by exactly that estimate, and its decode step
    longer by the layers × the eager dispatch cost (serving_model.EAGER_LAYER_OVERHEAD_S)."""
    base = reference.request(reference.CASES["hgx-h200-2-single"])
    eager = replace(base, performance=PerformanceSpec(graph_mode=False))
    full_plan, eager_plan = plan(base), plan(eager)
    g_full, g_eager = full_plan.memory.groups[0].per_rank, eager_plan.memory.groups[0].per_rank
    # The request leaves max_num_seqs to the plan, which sizes it to what the KV cache holds
    # (engine/memory.py size_admission; tests/engine/test_admission.py checks that value).  vLLM 0.27.1 at max_num_seqs
    # n: capture sizes up to min(2n, 512, 4096) → [1, 2, 4] + every multiple of 8 up to it PIECEWISE, those
    # ≤ n FULL (vllm/config/vllm.py _set_cudagraph_sizes), 20 MiB each in 0.27's estimate.
    n = full_plan.request.serving.max_num_seqs
    top = min(2 * n, 512, 4096)
    piecewise = [1, 2, 4, *range(8, top + 1, 8)]
    estimate = (len(piecewise) + len([b for b in piecewise if b <= n])) * 20 * 2**20
    assert base.serving.vllm_version == "0.27.1" and base.serving.max_num_seqs == 0  # left to the plan
    assert n > 16  # the KV cache holds more than the Hopper recipe's example batch of 5
    assert g_full.graph_bytes == estimate and g_eager.graph_bytes == 0
    assert g_eager.kv_cache_bytes - g_full.kv_cache_bytes == estimate
    # every decode layer pays the CUDA eager dispatch cost on top of the captured layer's
    assert effective_factors(eager).layer_overhead_s == pytest.approx(
        effective_factors(base).layer_overhead_s + EAGER_LAYER_OVERHEAD_S["cuda"], rel=1e-12
    )
    assert eager_plan.performance.groups[0].decode_step_s > full_plan.performance.groups[0].decode_step_s
    # the same request through serving.enforce_eager is the same plan
    via_serving = plan(replace(base, serving=replace(base.serving, enforce_eager=True)))
    assert via_serving.performance.groups[0].decode_step_s == pytest.approx(
        eager_plan.performance.groups[0].decode_step_s, rel=1e-9
    )
    assert via_serving.memory.groups[0].per_rank.kv_cache_bytes == g_eager.kv_cache_bytes


def test_a_plan_costed_with_speculative_decoding_says_the_bundle_does_not_start_it():
    """vllm-ascend#14454's K3 measurement ran a DSpark draft (7 tokens, 60 % accepted); given only as the
    step model's inputs (performance.*) with serving.speculative off, the estimate reads it but the request
    names no catalog draft to launch: the bundle says it runs without, and no script passes the flag.  The
    seeded plan, which takes the catalog's draft, launches it and says nothing."""
    base = _request("a3-4-single")
    off = replace(base, serving=replace(base.serving, speculative=SpeculativeSpec()))
    req = _with(off, speculative_tokens=7, speculative_acceptance_rate=0.6)
    result = plan(req)
    (check,) = [c for c in result.checks if c.code == "launch.speculative_not_launched"]
    assert check.severity.value == "warning" and check.figures["speculative_tokens"] == 7
    assert "7 draft tokens a step, an MTP head" in check.message_en
    for n in result.launch.nodes:
        assert all("--speculative-config" not in argv for argv in n.argv)
    plain = plan(_request("a3-4-single"))
    assert not [c for c in plain.checks if c.code == "launch.speculative_not_launched"]
    assert all("--speculative-config" in argv for n in plain.launch.nodes for argv in n.argv)
