"""Speculative decoding and the per-role serving settings, as vLLM and vLLM-Ascend run them.

A deployment states speculative decoding the way vLLM's ``--speculative-config`` does
(``vllm/config/speculative.py`` ``SpeculativeConfig``: ``method``, ``model``,
``num_speculative_tokens``, ``draft_tensor_parallel_size``, ``enforce_eager``).  The draft is a catalog
entry (:class:`~.types.SpeculatorSpec`): an MTP head that ships in the target's checkpoint
(DeepSeek-V3/R1 and GLM's ``num_nextn_predict_layers``), or a separate draft model (EAGLE / EAGLE-3
heads, DSpark block drafters) with its own weights, layers and published acceptance.

What the plan charges for it:

* **memory** — a separate draft's weights are loaded with the target's tensor parallelism
  (``draft_tensor_parallel_size`` defaults to the target's: ``SpeculativeConfig`` "can only be 1 or the
  same as the target model's"), so each rank holds ``weight_bytes ÷ TP``; its attention layers are
  added to the KV-cache spec beside the target's (``vllm/v1/worker/gpu_model_runner.py``
  ``get_kv_cache_spec`` walks every ``Attention`` layer of the forward context, the drafter's included),
  so a token of KV costs the draft's ``layers × 2 × max(1, kv_heads ÷ TP) × head_dim × dtype`` bytes
  more.  An MTP head's layer is part of the target's checkpoint bytes already (``mtp`` reads the
  target's ``model.layers.{num_hidden_layers}``), and its KV is one more target layer
  (:func:`draft_kv_bytes_per_token`).
* **time** — the step model charges the draft's k sequential proposals (``serving_model.DraftSpec``)
  and emits vLLM's mean acceptance length ``1 + k × a`` tokens a step.

Version awareness: a draft lists the first engine versions that run it (``min_versions``); the
defaults turn speculative decoding on only where the catalog has a draft for the model that the
named engine version runs (:func:`default_speculative`), and a request naming one the version does
not run is refused on ``serving.speculative.draft``.

Per role (xPyD): ``serving.prefill`` / ``serving.decode`` override ``max_num_seqs``,
``max_num_batched_tokens`` and the speculative setting of the shared block for that role's engines
(:func:`role_serving`); aggregated topologies keep one block.
"""

from __future__ import annotations

import dataclasses
import json

from .engine_versions import parse_version
from .types import (
    WEIGHTLESS_SPECULATIVE_METHODS,
    GroupLayout,
    ParallelSpec,
    PlanRequest,
    RoleServing,
    RoleServingSpec,
    ServingSpec,
    SpeculativeSpec,
    SpeculatorSpec,
    TopologyKind,
)

ROLE_NAMES = ("prefill", "decode")


def engine_name(software_stack: str, engine: str) -> str:
    """The engine a draft's ``min_versions`` is keyed by: ``vllm-ascend`` on Ascend, ``vllm`` else."""
    if engine:
        return engine
    return "vllm-ascend" if software_stack == "ascend" else "vllm"


def platform_reason(spec: SpeculatorSpec, software_stack: str, generation: str = "") -> str:
    """Why ``spec`` has no published run on this hardware ("" when it has): its ``platforms`` name a
    platform (``cuda``, ``ascend``) or an accelerator generation (``a3``, ``hopper`` …)."""
    platform = "ascend" if software_stack == "ascend" else "cuda"
    if platform in spec.platforms or (generation and generation in spec.platforms):
        return ""
    return f"{spec.name} has no published run on {generation.upper() or platform}"


def version_reason(
    spec: SpeculatorSpec, software_stack: str, engine: str, version: str, generation: str = ""
) -> str:
    """Why ``spec`` cannot run on this hardware and engine version ("" when it can)."""
    if problem := platform_reason(spec, software_stack, generation):
        return problem
    name = engine_name(software_stack, engine)
    first = spec.min_versions.get(name)
    if not first:
        return f"{spec.name} names no {name} version that runs it"
    have, need = parse_version(version), parse_version(first)
    if have is None or need is None or have < need:
        return f"{spec.name} needs {name} {first} or later (the plan names {version})"
    return ""


def runnable(
    speculators: tuple[SpeculatorSpec, ...],
    software_stack: str,
    engine: str,
    version: str,
    generation: str = "",
) -> tuple[SpeculatorSpec, ...]:
    """The catalog's drafts this hardware and engine version run, catalog order kept."""
    return tuple(s for s in speculators if not version_reason(s, software_stack, engine, version, generation))


def default_speculative(
    speculators: tuple[SpeculatorSpec, ...],
    software_stack: str,
    engine: str,
    version: str,
    generation: str = "",
) -> SpeculativeSpec:
    """Speculative decoding as the defaults set it: the first catalog draft the hardware and engine
    version run, at its published token count; off when there is none."""
    found = runnable(speculators, software_stack, engine, version, generation)
    if not found:
        return SpeculativeSpec()
    s = found[0]
    return SpeculativeSpec(method=s.method, num_speculative_tokens=s.num_speculative_tokens, draft=s.slug)


def speculator(req: PlanRequest, spec: SpeculativeSpec) -> SpeculatorSpec | None:
    """The catalog draft ``spec`` names (None: off, weightless, or not in the request's drafts)."""
    if not spec.on or not spec.draft:
        return None
    return next((s for s in req.speculators if s.slug == spec.draft), None)


def tokens(spec: SpeculativeSpec, draft: SpeculatorSpec | None) -> int:
    """Speculative tokens a step: the request's, else the draft's published count."""
    if not spec.on:
        return 0
    if spec.num_speculative_tokens > 0:
        return spec.num_speculative_tokens
    return draft.num_speculative_tokens if draft else 0


def role_serving(serving: ServingSpec, role: str) -> ServingSpec:
    """The serving block the engines of ``role`` run: the shared one with the role's overrides
    (``serving.prefill`` / ``serving.decode``); any other role is the shared block itself."""
    over: RoleServingSpec | None = getattr(serving, role, None) if role in ROLE_NAMES else None
    if over is None:
        return serving
    changes: dict = {}
    if over.max_num_seqs is not None:
        changes["max_num_seqs"] = over.max_num_seqs
    if over.max_num_batched_tokens is not None:
        changes["max_num_batched_tokens"] = over.max_num_batched_tokens
    if over.speculative is not None:
        changes["speculative"] = over.speculative
    return dataclasses.replace(serving, **changes) if changes else serving


def role_request(req: PlanRequest, role: str) -> PlanRequest:
    """``req`` as the engines of ``role`` see it (its serving block, :func:`role_serving`)."""
    serving = role_serving(req.serving, role)
    return req if serving is req.serving else dataclasses.replace(req, serving=serving)


def decode_role(req: PlanRequest) -> str:
    """The role whose engines decode: "decode" in xPyD, else the shared block's."""
    return "decode" if req.topology.kind == TopologyKind.DISAGGREGATED else "serve"


def with_draft(req: PlanRequest) -> PlanRequest:
    """``req`` with the step model's draft inputs (``performance.speculative_tokens``, acceptance,
    draft weights and layers, graph mode) taken from the decoding engines' speculative setting and its
    catalog draft.  A request whose speculative setting is off keeps its performance inputs."""
    spec = role_serving(req.serving, decode_role(req)).speculative
    if not spec.on:
        return req
    draft = speculator(req, spec)
    if draft is None and spec.method not in WEIGHTLESS_SPECULATIVE_METHODS:
        return req  # a draft the request's catalog does not list: nothing to charge it with
    k = tokens(spec, draft)
    perf = req.performance
    stack = req.server.accelerator.software_stack
    if draft is None:  # n-gram / suffix: proposals cost no forward pass; acceptance as the request says
        new = dataclasses.replace(perf, speculative_tokens=k, draft_model_gb=0.0, draft_model_layers=0)
    else:
        new = dataclasses.replace(
            perf,
            speculative_tokens=k,
            speculative_acceptance_rate=draft.acceptance_rate,
            draft_model_gb=draft.weight_bytes / 1e9,
            draft_model_layers=draft.num_layers if draft.weight_bytes else 0,
            draft_graph_mode=("ascend" if stack == "ascend" else "cuda") not in draft.eager_on,
        )
    return req if new == perf else dataclasses.replace(req, performance=new)


def draft_weight_bytes_per_rank(req: PlanRequest, p: ParallelSpec) -> int:
    """A separate draft's weights on one rank: its bytes ÷ the target's TP (module doc); an MTP
    head's are inside the target's checkpoint (0 here)."""
    draft = speculator(req, req.serving.speculative)
    if draft is None or draft.weight_bytes <= 0:
        return 0
    return -(-draft.weight_bytes // max(1, p.tp))


def draft_kv_bytes_per_token(req: PlanRequest, p: ParallelSpec, dtype_bytes: int, target_layer: int) -> int:
    """KV bytes a token costs on one rank for the draft's attention layers (module doc).

    ``target_layer`` is one target layer's KV bytes per token on this rank (an MTP head's layer is
    one more of them); a separate draft's GQA layers hold ``2 × max(1, kv_heads ÷ TP) × head_dim``
    elements a token each."""
    draft = speculator(req, req.serving.speculative)
    if draft is None:
        return 0
    if draft.num_kv_heads <= 0:  # an MTP head: the target's own attention layer type
        return draft.num_layers * target_layer
    heads = max(1, draft.num_kv_heads // max(1, p.tp))
    return draft.num_layers * 2 * heads * draft.head_dim * dtype_bytes


# What ``json.dumps(config, separators=(",", ":"), ensure_ascii=True)`` makes on every call, kept.
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)


def speculative_config(req: PlanRequest, role: str) -> str:
    """The ``--speculative-config`` JSON the engines of ``role`` launch with ("" when off),
    serialised from the plan's setting and its catalog draft, never pasted.

    Keys are ``SpeculativeConfig`` fields (``vllm/config/speculative.py``): ``method``,
    ``num_speculative_tokens``, ``model`` (the draft's repository; an MTP head and the weightless
    methods name none), and ``enforce_eager`` where the draft's published runs on this platform keep it
    out of graph capture (the vLLM recipes' Kimi-K3 Ascend 910C entry)."""
    spec = role_serving(req.serving, role).speculative
    if not spec.on:
        return ""
    draft = speculator(req, spec)
    config: dict = {"method": spec.method}
    if draft is not None and draft.hf_repo and spec.method not in ("mtp", *WEIGHTLESS_SPECULATIVE_METHODS):
        config["model"] = draft.hf_repo
    config["num_speculative_tokens"] = tokens(spec, draft)
    stack = "ascend" if req.server.accelerator.software_stack == "ascend" else "cuda"
    if draft is not None and stack in draft.eager_on:
        config["enforce_eager"] = True
    return _JSON.encode(config)


def serving_roles(
    req: PlanRequest, groups: tuple[GroupLayout, ...], decoding_seqs: int = 0
) -> tuple[RoleServing, ...]:
    """The settings each role of the deployment runs: one row for an aggregated topology ("serve"),
    prefill and decode rows for xPyD, each with its layout's TP/DP.  ``decoding_seqs``: the
    ``--max-num-seqs`` the decoding engines launch (the design point's sequences per DP rank,
    launch/build.py ``launched_max_num_seqs``), when given; the prefill engines run the setting."""
    if req.topology.kind == TopologyKind.DISAGGREGATED:
        roles = [(r, tuple(g for g in groups if g.role == r)) for r in ROLE_NAMES]
    else:
        roles = [("serve", tuple(groups))]
    out = []
    for role, members in roles:
        if not members:
            continue
        s = role_serving(req.serving, role)
        draft = speculator(req, s.speculative)
        p = members[0].parallel
        out.append(
            RoleServing(
                role=role,
                groups=tuple(g.name for g in members),
                max_num_seqs=decoding_seqs if decoding_seqs > 0 and role != "prefill" else s.max_num_seqs,
                max_num_batched_tokens=s.max_num_batched_tokens,
                tp=p.tp,
                dp=p.dp,
                speculative_method=s.speculative.method,
                num_speculative_tokens=tokens(s.speculative, draft),
                draft=draft.slug if draft else "",
                draft_name=draft.name if draft else "",
                acceptance_rate=draft.acceptance_rate if draft else 0.0,
                draft_source=draft.source if draft else "",
            )
        )
    return tuple(out)
