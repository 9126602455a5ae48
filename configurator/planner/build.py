"""Engine requests from the query: what the search asks ``layout``, ``memory``, ``performance``
and ``plan()``, and the configurator request (docs/api.md) that replans a candidate identically.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..engine.defaults import kv_dtype_supported, serving_defaults
from ..engine.tco.lease import book_value_fraction
from ..engine.types import (
    CheckpointSpec,
    CommercialSpec,
    KvCacheDtype,
    ParallelSpec,
    PlanRequest,
    RackSpec,
    ServerSpec,
    ServingSpec,
    SpeculatorSpec,
    TopologyKind,
    TopologySpec,
    WorkloadSpec,
)
from ..io.requests import to_jsonable
from .query import PlannerCatalog, PlannerQuery
from .results import Shape, Variant

MAX_NUM_SEQS_LADDER = (16, 32, 64, 128, 256)


def ceil_div(a: int, b: int) -> int:
    return -(-a // max(b, 1))


class RequestBuilder:
    """Builds the engine requests of one query (commercial terms and checkpoints cached)."""

    def __init__(self, query: PlannerQuery, catalog: PlannerCatalog):
        self.q = query
        self.catalog = catalog
        self.w = query.workload
        self.c = query.constraints
        self.o = query.options
        self.commercial_cache: dict[tuple[str, int, str], CommercialSpec] = {}
        self.checkpoint_cache: dict[str, CheckpointSpec | None] = {}
        self.defaults_cache: dict[tuple[str, TopologyKind], ServingSpec] = {}
        self.default_rack = (
            query.racks[0] if query.racks else RackSpec("rack-42u", "42U rack", name_zh="42U 机柜")
        )

    def commercial(self, server: ServerSpec, nodes: int, rack: RackSpec) -> CommercialSpec:
        key = (server.slug, nodes, rack.slug)
        if key not in self.commercial_cache:
            terms = self.catalog.commercial(server, nodes, rack, self.q.price_list, self.c.currency)
            if not terms.residual_value_fraction:
                # The default the request parser gives a request stating no residual value
                # (configurator/io/requests.py), so the candidate's request plans the same figures.
                terms = dataclasses.replace(
                    terms,
                    residual_value_fraction=book_value_fraction(
                        terms.horizon_years, terms.depreciation_years
                    ),
                )
            self.commercial_cache[key] = terms
        return self.commercial_cache[key]

    def defaults(self, server: ServerSpec, kind: TopologyKind = TopologyKind.SINGLE) -> ServingSpec:
        """The serving settings a request naming none gets on this server: the one serving-defaults path
        the API, the page and the CLI take (engine/defaults.py serving_defaults), with the workload's context
        when it states one."""
        key = (server.slug, kind)
        if key not in self.defaults_cache:
            given = ("max_model_len",) if self.w.context is not None else ()
            base = ServingSpec(max_model_len=self.w.context) if self.w.context is not None else ServingSpec()
            self.defaults_cache[key] = serving_defaults(
                self.q.model, server, kind, base, given, self.w.needs_vision, speculators=self.speculators()
            )
        return self.defaults_cache[key]

    def context(self, server: ServerSpec, kind: TopologyKind = TopologyKind.SINGLE) -> int:
        """The context (``--max-model-len``) a candidate on this server serves: the workload's, else the
        serving default, raised to one whole request (input + output) when the default is shorter."""
        if self.w.context is not None:
            return self.w.context
        return max(self.defaults(server, kind).max_model_len, self.w.input_tokens + self.w.output_tokens)

    def serving(
        self, server: ServerSpec, util: float, kv: str, seqs: int, kind: TopologyKind = TopologyKind.SINGLE
    ) -> ServingSpec:
        """The serving defaults with what the search chooses: utilisation, KV dtype, batch, context."""
        return dataclasses.replace(
            self.defaults(server, kind),
            gpu_memory_utilization=util,
            max_model_len=self.context(server, kind),
            max_num_seqs=seqs,
            kv_cache_dtype=KvCacheDtype(kv),
        )

    def workload(self, concurrency: int) -> WorkloadSpec:
        return WorkloadSpec(
            input_tokens=self.w.input_tokens,
            output_tokens=self.w.output_tokens,
            concurrency=concurrency,
            needs_vision=self.w.needs_vision,
            availability_target=self.w.availability_target,
            ttft_target_s=self.w.ttft_target_s,
            tpot_target_ms=self.w.tpot_target_ms,
        )

    def request(
        self,
        server: ServerSpec,
        shape: Shape,
        parallel: ParallelSpec,
        decode_parallel: ParallelSpec | None,
        serving: ServingSpec,
        concurrency: int,
        rack: RackSpec | None = None,
        commercial: CommercialSpec | None = None,
    ) -> PlanRequest:
        topology = TopologySpec(
            kind=shape.kind,
            nodes=shape.nodes,
            parallel=parallel,
            prefill_nodes=shape.prefill_nodes,
            decode_nodes=shape.decode_nodes,
            decode_parallel=decode_parallel if shape.kind == TopologyKind.DISAGGREGATED else None,
        )
        return PlanRequest(
            model=self.q.model,
            server=server,
            topology=topology,
            serving=serving,
            workload=self.workload(concurrency),
            site=self.q.site,
            rack=rack or self.default_rack,
            switches=self.q.switches,
            commercial=commercial or CommercialSpec(currency=self.c.currency),
            scenario=self.q.scenario,
            checkpoint=self.checkpoint(server),
            speculators=self.speculators(),
        )

    def speculators(self) -> tuple[SpeculatorSpec, ...]:
        """The model's catalog drafts (none from a catalog that lists none)."""
        lookup = getattr(self.catalog, "speculators", None)
        return tuple(lookup(self.q.model.slug)) if lookup else ()

    def checkpoint(self, server: ServerSpec) -> CheckpointSpec | None:
        """The model's default checkpoint on the server's platform: what the configurator sizes too."""
        stack = server.accelerator.software_stack
        if stack not in self.checkpoint_cache:
            lookup = getattr(self.catalog, "default_checkpoint", None)
            self.checkpoint_cache[stack] = lookup(self.q.model.slug, stack) if lookup else None
        return self.checkpoint_cache[stack]

    def kv_dtypes_for(self, server: ServerSpec) -> tuple[str, ...]:
        """The KV-cache dtypes offered that the server's platform runs (no FP8 on Atlas A2/A3,
        vllm-ascend issue #8102; engine/defaults.py SUPPORTED_KV_DTYPES)."""
        stack = server.accelerator.software_stack
        runnable = tuple(d for d in self.o.kv_cache_dtypes if kv_dtype_supported(stack, d))
        return runnable or ("auto",)

    def generous_serving(self, server: ServerSpec) -> ServingSpec:
        """The most memory-generous serving settings offered (group sizes are checked at these)."""
        util = max(self.o.gpu_memory_utilizations)
        dtypes = self.kv_dtypes_for(server)
        kv = "fp8" if "fp8" in dtypes else dtypes[0]
        return self.serving(server, util, kv, MAX_NUM_SEQS_LADDER[0])

    def request_json(self, s, shape: Shape, variant: Variant, req: PlanRequest, rack, inline) -> dict:
        """The configurator request (docs/api.md) that replans this candidate identically."""

        def par(p: ParallelSpec) -> dict:
            return {
                "tp": p.tp,
                "dp": p.dp,
                "pp": p.pp,
                "dp_local": p.dp_local,
                "expert_parallel": p.expert_parallel,
            }

        topology: dict[str, Any] = {
            "kind": shape.kind.value,
            "nodes": shape.nodes,
            "parallel": par(variant.parallel),
        }
        if shape.kind == TopologyKind.DISAGGREGATED:
            topology["prefill_nodes"] = shape.prefill_nodes
            topology["decode_nodes"] = shape.decode_nodes
            topology["decode_parallel"] = par(variant.decode_parallel or variant.parallel)
        sv = variant.serving
        workload: dict[str, Any] = {
            "input_tokens": self.w.input_tokens,
            "output_tokens": self.w.output_tokens,
            "concurrency": variant.concurrency,
            "needs_vision": self.w.needs_vision,
            "availability_target": self.w.availability_target,
        }
        if self.w.ttft_target_s is not None:
            workload["ttft_target_s"] = self.w.ttft_target_s
        if self.w.tpot_target_ms is not None:
            workload["tpot_target_ms"] = self.w.tpot_target_ms
        commercial: dict[str, Any] = {"currency": self.c.currency}
        if self.q.price_list:
            commercial["price_list"] = self.q.price_list
        data: dict[str, Any] = {
            "model": self.q.model.slug,
            "server": s.slug,
            "topology": topology,
            "serving": {
                "gpu_memory_utilization": sv.gpu_memory_utilization,
                "max_model_len": sv.max_model_len,
                "max_num_seqs": sv.max_num_seqs,
                "max_num_batched_tokens": sv.max_num_batched_tokens,
                "kv_cache_dtype": sv.kv_cache_dtype,
                "comm_buffer_mb": sv.comm_buffer_mb,
                "enable_prefix_caching": sv.enable_prefix_caching,
                "language_model_only": sv.language_model_only,
            },
            "workload": workload,
            "site": self.q.site.slug,
            "rack": to_jsonable(rack) if inline else rack.slug,
            "commercial": commercial,
        }
        if self.q.scenario:
            data["scenario"] = self.q.scenario
        return data
