"""Figures of the total cost of ownership (the ``engine/tco`` package).

Money is put to the cent (``tco.money.cents``), so an expression over inputs shown to the cent agrees
with the value to the cent.
"""

from ..book import FigureDef, SourceKind, Unit

M = Unit.MONEY

DEFS = (
    # ---- capex
    FigureDef(
        "tco.capex.servers",
        M,
        "Servers",
        "服务器",
        "nodes * server_unit_price",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.capex.switches",
        M,
        "Switches",
        "交换机",
        "Σ over switch models of {counts} × unit price in {prices} (an unpriced model at 0)",
    ),
    FigureDef(
        "tco.capex.optics",
        M,
        "Optical modules",
        "光模块",
        "optics * optics_unit_price + media_cost",
        # media_cost = Σ media count × media unit price (an unpriced medium at 0)
        context=("media", "media_unit_prices"),
    ),
    FigureDef(
        "tco.capex.racks",
        M,
        "Racks and PDUs",
        "机柜及 PDU",
        "Σ over {racks} by the cooling each needs × that rack's unit price"
        " ({rack_unit_price} for the rack type requested, {by_cooling} for the others)",
    ),
    FigureDef(
        "tco.capex.installation",
        M,
        "Installation",
        "安装实施",
        "installation",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.capex.gateway",
        M,
        "Gateway / load balancer",
        "网关 / 负载均衡",
        "gateways * gateway_unit_price",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.capex.storage",
        M,
        "Shared storage for the model checkpoint",
        "模型权重共享存储",
        # tb = ceil(copies × checkpoint bytes ÷ 10¹²), 0 when storage is not priced
        "ceil(copies * checkpoint_bytes / 10**12) * storage_price_per_tb",
        context=("tb",),
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.capex.discount",
        M,
        "Quote discount",
        "报价折扣",
        "subtotal * quote_discount",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.capex.total",
        M,
        "Capital expenditure (purchase)",
        "采购总价（资本支出）",
        # subtotal = servers + switches + optics + racks + installation + gateway + storage
        "subtotal - discount",
    ),
    # ---- annual costs
    FigureDef(
        "tco.it_load_kw",
        Unit.KW,
        "IT load (maximum input)",
        "IT 负载（最大输入功率）",
        "it_kw",
    ),
    FigureDef(
        "tco.annual.electricity",
        M,
        "Electricity per year",
        "年电费",
        "((it_kw - standby_kw) * power_load_factor + standby_kw * standby_power_load_factor) * hours * pue"
        " * price_per_kwh",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.annual.om",
        M,
        "O&M per year",
        "年运维费",
        formulas={"per_year": "om_per_year", "percent_of_capex": "om_percent_of_capex * capex"},
        context=("om_per_year", "om_percent_of_capex", "capex"),
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.annual.software_support",
        M,
        "Software and support per year",
        "年软件及技术支持费",
        "software_support_per_year",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.annual.colocation",
        M,
        "Colocation per year",
        "年机柜托管费",
        # site_currency_rate converts the site's currency to the quote's (1 when they are the same)
        "racks * colocation_per_rack_month * site_currency_rate * 12",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.annual.depreciation",
        M,
        "Depreciation per year (information, not a cash flow)",
        "年折旧（仅供参考，非现金支出）",
        "capex / depreciation_years",
    ),
    FigureDef(
        "tco.annual.buy_opex",
        M,
        "Running cost per year (buy)",
        "年运营成本（采购模式）",
        "om + software_support + electricity + colocation",
    ),
    FigureDef(
        "tco.annual.lease_rent",
        M,
        "Lease rent per year",
        "年租金",
        "nodes * server_lease_per_month * 12",
        source=SourceKind.INPUT,
    ),
    FigureDef(
        "tco.annual.lease_total",
        M,
        "Lease cost per year",
        "年租赁总成本",
        # lease_electricity is 0 when the lease includes power, lease_om 0 when it includes O&M
        "lease_rent + colocation + software_support + lease_electricity + lease_om",
        context=("lease_includes_power", "lease_includes_om"),
    ),
    FigureDef(
        "tco.lease_upfront",
        M,
        "Bought on the lease side too: network, racks, installation",
        "租赁模式下同样需采购：网络、机柜、安装",
        "capex - servers * (1 - quote_discount)",
    ),
    FigureDef(
        "tco.residual_value",
        M,
        "Residual value of the servers at the end of the horizon",
        "测算期末服务器残值",
        "servers * (1 - quote_discount) * residual_value_fraction",
        source=SourceKind.INPUT,
    ),
    # ---- horizon
    FigureDef(
        "tco.buy_total",
        M,
        "{horizon}-year total cost, buy",
        "{horizon} 年总拥有成本（采购）",
        "capex + horizon_years * (om + software_support + electricity + colocation) - residual_value",
    ),
    FigureDef(
        "tco.buy_total_without_residual",
        M,
        "{horizon}-year total cost, buy, without the residual value",
        "{horizon} 年总拥有成本（采购，不计残值）",
        "buy_total + residual_value",
    ),
    FigureDef(
        "tco.lease_total",
        M,
        "{horizon}-year total cost, lease",
        "{horizon} 年总成本（租赁）",
        # electricity and lease_om are 0 when the lease includes them
        "lease_upfront + horizon_years * (lease_rent + software_support + lease_om + electricity + colocation)",
    ),
    FigureDef(
        "tco.npv_buy",
        M,
        "Net present cost, buy",
        "采购模式成本净现值",
        "{capex} + Σ over m = 1 … {months} of {buy_monthly} ÷ (1 + {monthly_rate})^m"
        " − {residual_value} ÷ (1 + {monthly_rate})^{months},"
        " monthly rate = (1 + {discount_rate})^(1/12) − 1",
    ),
    FigureDef(
        "tco.npv_lease",
        M,
        "Net present cost, lease",
        "租赁模式成本净现值",
        "{lease_upfront} + Σ over m = 1 … {months} of {lease_monthly} ÷ (1 + {monthly_rate})^m,"
        " monthly rate = (1 + {discount_rate})^(1/12) − 1",
    ),
    FigureDef(
        "tco.break_even_month",
        Unit.MONTHS,
        "Break-even month (cumulative buy ≤ cumulative lease)",
        "盈亏平衡点（采购累计成本 ≤ 租赁累计成本的月份）",
        "first m with {capex} + m × {buy_monthly} (− {residual_value} in the last month, m = {months})"
        " ≤ {lease_upfront} + m × {lease_monthly}",
    ),
    # ---- tokens
    FigureDef(
        "tco.tokens.input_m_per_year",
        Unit.M_TOKENS,
        "Input tokens per year (millions)",
        "年输入 Token 量（百万）",
        "tokens_per_s * seconds_per_year * utilisation / 1000000",
    ),
    FigureDef(
        "tco.tokens.output_m_per_year",
        Unit.M_TOKENS,
        "Output tokens per year (millions)",
        "年输出 Token 量（百万）",
        "tokens_per_s * seconds_per_year * utilisation / 1000000",
    ),
    FigureDef(
        "tco.tokens.input_cost_share",
        Unit.FRACTION,
        "Share of cost charged to input tokens (their share of accelerator time)",
        "分摊到输入 Token 的成本比例（按其占用的算力时间）",
        "round(prefill_time_share, 6)",
    ),
    FigureDef(
        "tco.tokens.{basis}.annual_cost",
        M,
        "Annual cost basis ({basis})",
        "年化成本（{basis_zh}）",
        "horizon_total / horizon_years",
    ),
    FigureDef(
        "tco.tokens.{basis}.cost_per_m_{side}",
        Unit.MONEY_PER_M_TOKENS,
        "Cost per million {side} tokens ({basis})",
        "每百万{side_zh} Token 成本（{basis_zh}）",
        "annual_cost * share / m_tokens",
        approximate="m_tokens is shown to 0.01 M tokens; the cost divides the tokens before rounding",
    ),
    FigureDef(
        "tco.tokens.api_cost_per_year",
        M,
        "The same tokens bought from the public API",
        "同等 Token 量按官方 API 价格的年费用",
        # the API prices are converted to the quote's currency at usd_rate
        "input_m_tokens * api_price_input_per_m + output_m_tokens * api_price_output_per_m",
        context=("api_currency", "usd_rate"),
        # each model's own price list: the sources of its catalog record's API prices (tco/tokens.py)
        source=SourceKind.PUBLIC,
        approximate="the M tokens are shown to 0.01 M tokens; the cost multiplies the tokens before rounding",
    ),
    FigureDef(
        "tco.tokens.{basis}.saving_vs_api",
        Unit.FRACTION,
        "Saving against the API ({basis}); the seed claims 60–70 %",
        "相对 API 的成本节省（{basis_zh}）；原方案称可下降 60–70%",
        "1 - annual_cost / api_cost",
    ),
    # The public API's price per million tokens in the plan's currency (the page's API row and bar).
    FigureDef(
        "tco.tokens.api_price_{side}_per_m",
        Unit.MONEY_PER_M_TOKENS,
        "Public API price per million {side} tokens",
        "公有 API 每百万{side_zh} Token 价格",
        "api_price * currency_factor",
        context=("api_currency",),
        approximate="rounded to the cent",
    ),
    # The lease side's O&M: 0 when the lessor operates the servers (commercial.lease_includes_om), else
    # the same as buying.
    FigureDef(
        "tco.annual.lease_om",
        M,
        "O&M per year, lease",
        "租赁方案年运维费",
        formulas={"included": "0", "separate": "om"},
        context=("lease_includes_om",),
    ),
    # The lease side's electricity: 0 when the lease includes power, else the same as buying.
    FigureDef(
        "tco.annual.lease_electricity",
        M,
        "Electricity per year, lease",
        "租赁方案年电费",
        formulas={"included": "0", "separate": "electricity"},
        context=("lease_includes_power",),
    ),
    # One row of the sensitivity table: the blended cost per million tokens with one input at −20 %
    # and +20 %, every other input unchanged (engine/tco/tokens.py ``sensitivity``).
    FigureDef(
        "tco.sensitivity.{parameter}.{basis}",
        Unit.MONEY_PER_M_TOKENS,
        "Blended cost per million tokens ({basis}), {parameter_en} ±20 %",
        "每百万 Token 综合成本（{basis_zh}），{parameter_zh} ±20%",
        "{cost_at_base} at {base_value}; {cost_at_low} at {low_value} and {cost_at_high} at {high_value}, "
        "every other input unchanged",
    ),
)
