"""The request resolver: JSON → PlanRequest, with field-named errors for bad input."""

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from configurator import reference
from configurator.engine import types as et
from configurator.requests import RequestError, request_to_inline, resolve


class FakeCatalog:
    """The catalog port, answered with a few seeded specs (configurator.reference) and fixed terms, so the
    resolver is tested on its own, not through the seed catalog's lookups."""

    def __init__(self):
        self.models = {slug: reference.model(slug) for slug in ("kimi-k3", "deepseek-v3")}
        self.servers = {slug: reference.server(slug) for slug in ("atlas-800-a3", "nf5868g8")}
        self.switch_rows = reference.switches("lingqu-630-v1", "roce-400ge-access", "mgmt-1ge")

    def model(self, slug):
        return self.models.get(slug)

    def model_from_hf_config(self, config, weight_format, weight_bytes):
        if "num_hidden_layers" not in config:
            raise ValueError("num_hidden_layers is missing")
        return reference.model("llama-3-1-8b")

    def server(self, slug):
        return self.servers.get(slug)

    def site(self, slug):
        return et.SiteSpec(slug=slug) if slug == "cn-default" else None

    def rack(self, slug):
        return et.RackSpec(slug, "42U") if slug == "rack-42u-air" else None

    def switches(self, slugs):
        rows = self.switch_rows
        return tuple(r for r in rows if slugs is None or r.slug in slugs)

    def commercial(self, *, server, price_list, on_date, currency, nodes=None, rack=None):
        if price_list not in (None, "cny-2026"):
            raise LookupError(f"unknown price list '{price_list}'.")
        return et.CommercialSpec(
            server_unit_price=Decimal("3000000"), server_lease_per_month=Decimal("125000")
        )

    def default_site(self):
        return et.SiteSpec()

    def default_rack(self):
        return et.RackSpec("rack-42u-air", "42U")


CATALOG = FakeCatalog()
TODAY = dt.date(2026, 11, 30)


def base_request(**overrides):
    case = reference.CASES["a3-4-single"]  # 4 × A3 running Kimi K3
    data = {
        **case,
        "topology": {**case["topology"], "parallel": "auto"},
        "serving": {"gpu_memory_utilization": 0.85, "max_model_len": 133120, "max_num_seqs": 16},
    }
    data.update(overrides)
    return data


def errors_of(data):
    with pytest.raises(RequestError) as info:
        resolve(data, CATALOG, today=TODAY)
    return info.value.errors


def test_auto_layout_for_k3_on_4_a3_is_dp4_tp16():
    # docs/domain.md §4 item 1: the validated minimum is DP4 / TP16 / EP64.
    req = resolve(base_request(), CATALOG, today=TODAY)
    assert (req.topology.parallel.tp, req.topology.parallel.dp, req.topology.parallel.ep) == (16, 4, 64)
    assert req.serving.gpu_memory_utilization == 0.85
    assert req.commercial.server_unit_price == Decimal("3000000")


def test_8p8d_splits_nodes_and_gives_each_side_dp8_tp16():
    # docs/domain.md §4 item 3: each side DP8 / TP16, EP128.
    req = resolve(base_request(topology={"kind": "disaggregated", "nodes": 16}), CATALOG, today=TODAY)
    topo = req.topology
    assert (topo.prefill_nodes, topo.decode_nodes) == (8, 8)
    assert (topo.parallel.dp, topo.parallel.tp) == (8, 16)
    assert (topo.decode_parallel.dp, topo.decode_parallel.tp) == (8, 16)


def test_commercial_overrides_replace_price_list_values_only_where_given():
    req = resolve(
        base_request(commercial={"server_unit_price": "2800000", "horizon_years": 5}), CATALOG, today=TODAY
    )
    assert req.commercial.server_unit_price == Decimal("2800000")
    assert req.commercial.horizon_years == 5
    assert req.commercial.server_lease_per_month == Decimal("125000")


@pytest.mark.parametrize(
    "data, field, fragment",
    [
        (base_request(model="no-such-model"), "model", "unknown model"),
        (base_request(server="x"), "server", "unknown server"),
        (base_request(topology={"kind": "single", "nodes": -1}), "topology.nodes", "between 1 and 1,024"),
        (base_request(topology={"kind": "single", "nodes": "four"}), "topology.nodes", "whole number"),
        (
            base_request(topology={"kind": "single", "nodes": 4, "parallel": {"tp": 0, "dp": 4}}),
            "topology.parallel.tp",
            "between 1",
        ),
        (
            base_request(serving={"gpu_memory_utilization": 1.5}),
            "serving.gpu_memory_utilization",
            "between 0.05 and 0.99",
        ),
        (base_request(serving={"gpu_memory_utilization": "NaN"}), "serving.gpu_memory_utilization", "finite"),
        (base_request(serving={"max_num_seqs": 2.5}), "serving.max_num_seqs", "whole number"),
        (base_request(serving={"bogus": 1}), "serving.bogus", "not a known field"),
        (base_request(topology={"kind": "ring", "nodes": 4}), "topology.kind", "must be one of"),
        (base_request(topology={"kind": "primary_standby", "nodes": 7}), "topology.nodes", "even node count"),
        (
            base_request(
                topology={"kind": "disaggregated", "nodes": 16, "prefill_nodes": 10, "decode_nodes": 8}
            ),
            "topology.decode_nodes",
            "must equal nodes",
        ),
        (base_request(commercial={"horizon_years": 0}), "commercial.horizon_years", "between 1 and 15"),
        (base_request(commercial={"discount_rate": 3}), "commercial.discount_rate", "between 0 and 1"),
        (base_request(commercial={"server_unit_price": -1}), "commercial.server_unit_price", "between 0"),
        (base_request(commercial={"price_list": "old"}), "commercial.price_list", "unknown price list"),
        (base_request(commercial={"date": "30/11/2026"}), "commercial.date", "YYYY-MM-DD"),
        (base_request(model={"hf_config": {"model_type": "llama"}}), "model.hf_config", "num_hidden_layers"),
        (base_request(extra=1), "extra", "not a known field"),
        ({"server": "atlas-800-a3", "topology": {"nodes": 4}}, "model", "required"),
    ],
)
def test_bad_input_names_the_field(data, field, fragment):
    errors = errors_of(data)
    assert field in errors, errors
    assert any(fragment in m for m in errors[field]), errors[field]


def test_non_object_request_is_refused():
    assert errors_of([1, 2]) == {"request": ["must be a JSON object."]}


def test_inline_round_trip_replans_the_same_request():
    req = resolve(base_request(), CATALOG, today=TODAY)
    inline = request_to_inline(req)
    # The inline form names no catalog slug that needs looking up: an empty catalog resolves it.
    again = resolve(inline, _EmptyCatalog(), today=TODAY)
    assert again == req


class _EmptyCatalog(FakeCatalog):
    def __init__(self):
        self.models, self.servers, self.switch_rows = {}, {}, ()


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    section=st.sampled_from(
        ["topology", "serving", "workload", "commercial", "site", "rack", "launch", "performance"]
    ),
    value=JSONISH,
)
def test_hostile_values_in_any_section_never_raise_anything_but_request_error(section, value):
    data = base_request()
    data[section] = value
    try:
        req = resolve(data, CATALOG, today=TODAY)
    except RequestError as exc:
        assert exc.errors and all(isinstance(m, str) for msgs in exc.errors.values() for m in msgs)
    else:
        assert isinstance(req, et.PlanRequest)


@pytest.mark.parametrize(
    "data, field",
    [
        (base_request(model="kimi\x00k3"), "model"),
        (base_request(server="atlas\x00"), "server"),
        (base_request(switches=["lingqu\x00"]), "switches"),
        (base_request(commercial={"price_list": "cny\x002026"}), "commercial.price_list"),
        (base_request(launch={"model_path": "/data/\x00"}), "launch.model_path"),
    ],
)
def test_nul_characters_are_refused_before_any_lookup(data, field):
    # PostgreSQL refuses NUL in text; the resolver must answer with a field error first.
    assert field in errors_of(data)
