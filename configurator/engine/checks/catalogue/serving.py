"""Checks of the serving settings proposed for the hardware (engine/serving_advice.py)."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant

DEFS = (
    CheckDef(
        "performance.serving_settings_recommended",
        "performance",
        Severity.OK,
        "Recommended serving settings for this hardware: {config_en}max_num_seqs {max_num_seqs} per DP rank, "
        "max_num_batched_tokens {max_num_batched_tokens}{split_en}, speculative decoding {spec_en}; "
        "they carry {concurrency} concurrent requests ({output_tps:,.0f} output tokens/s) "
        "{within_en} ({seed_en}).",
        "本硬件的推荐服务参数：{config_zh}每个 DP rank max_num_seqs {max_num_seqs}，max_num_batched_tokens "
        "{max_num_batched_tokens}{split_zh}，投机解码{spec_zh}；{within_zh}可承载 {concurrency} 路并发"
        "（输出 {output_tps:,.0f} tokens/s）（{seed_zh}）。",
        field="serving.max_num_seqs",
        fix=Fix("Use the recommended serving settings.", "采用推荐的服务参数。", change="change"),
        severities=(Severity.WARNING,),
        variants={
            # No setting meets the latency targets: the running sequences that at least carry the load.
            "carry_the_load": Variant(
                "max_num_seqs {need} per DP rank lets the {dp_ranks} DP ranks run the {conc} concurrent "
                "requests at once (the KV cache holds {kv_fit} per DP rank); the latency targets "
                "are out of this hardware's reach either way (the request's max_num_seqs: {request_max_num_seqs}); "
                "speculative decoding {spec_en}.",
                "将每个 DP rank 的 max_num_seqs 设为 {need}，{dp_ranks} 个 DP rank 即可同时运行 {conc} 路并发"
                "（KV 缓存每个 DP rank 可容纳 {kv_fit} 条）；无论如何该硬件均达不到时延目标"
                "（原 max_num_seqs：{request_max_num_seqs}）；投机解码{spec_zh}。",
                severity=Severity.WARNING,
            )
        },
        source="docs/performance.md §8 and §9",
    ),
)
