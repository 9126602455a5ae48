"""Figures of the economics over load: the API break-even (engine/economics.py).

The money inputs are the decimal strings the plan JSON has always carried, so the formulas are
read, not evaluated, over them; the concurrencies are interpolated along the performance curve.
"""

from ..book import FigureDef, SourceKind, Unit

DEFS = (
    FigureDef(
        "economics.break_even_concurrency",
        Unit.COUNT_USERS,
        "Concurrency from which self-hosting is cheaper than the API",
        "私有化部署开始低于 API 成本的并发数",
        "lowest concurrency with {annual_cost} ≤ API cost of the same tokens"
        " (at {utilisation}, linear between curve points; none: the API is cheaper at every load)",
        context=("basis",),
    ),
    FigureDef(
        "economics.seed_claim_concurrency",
        Unit.COUNT_USERS,
        "Concurrency from which the saving reaches the seed's claimed 60 %",
        "节省达到原方案所称 60% 时的并发数",
        "lowest concurrency with 1 − annual cost ÷ API cost ≥ {claimed_saving}"
        " (linear between curve points; none: never reached)",
        context=("basis",),
        source=SourceKind.SEED,
    ),
    FigureDef(
        "economics.throughput_multiple_for_break_even",
        Unit.TIMES,
        "Throughput multiple (at full load) needed to match the API's cost",
        "与 API 成本持平所需的吞吐倍数（满负载）",
        "round(annual_cost / api_cost_at_full_load, 1)",
    ),
    FigureDef(
        "economics.load_share",
        Unit.FRACTION,
        "Share of the design capacity the stated load uses",
        "报价负载占设计容量的比例",
        "round(concurrency / design_concurrency, 6)",
    ),
    *(
        FigureDef(
            f"economics.{point}.cost_per_m_{side}",
            Unit.MONEY_PER_M_TOKENS,
            f"Cost per million {side} tokens at the {label_en}",
            f"{label_zh}每百万{side_zh} Token 成本",
            f"{{annual_cost}} × {{{side}_cost_share}} ÷ ({side} tokens a year at {{concurrency}} concurrent requests"
            f" and {{utilisation}} utilisation)",
            context=("output_tokens_per_s",) if side == "output" else ("input_tokens_per_output_token",),
        )
        for point, label_en, label_zh in (
            ("design", "design capacity", "设计容量下"),
            # the design capacity if the hardware runs as slow as the band's worst public source
            # (DesignPoint.concurrency_low, output_tokens_per_s_low)
            ("design_conservative", "conservative end of the design capacity", "设计容量保守端"),
            ("stated", "stated load", "报价负载下"),
        )
        for side, side_zh in (("input", "输入"), ("output", "输出"))
    ),
)
