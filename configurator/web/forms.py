"""The configurator form: what the engineer types, turned into a plan request.

The form validates types and ranges field by field; ``to_request()`` builds
the same JSON request the API takes (docs/api.md), so the page, the API, the
CLI and the quote snapshots share one format.  Errors the request resolver
finds are mapped back onto the form fields by ``add_request_errors()``.
"""

from __future__ import annotations

import ipaddress
from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from catalog import selectors
from configurator.engine import site_values as sv
from configurator.engine.defaults import SERVING_DEFAULTS, SERVING_RANGES
from configurator.engine.types import TopologyKind
from configurator.engine.vocabulary import is_zh

TOPOLOGY_CHOICES = [
    (TopologyKind.SINGLE.value, _("Single cluster")),
    (TopologyKind.PRIMARY_STANDBY.value, _("Primary/standby pair (HA)")),
    (TopologyKind.TENANT_PAIR.value, _("Tenant-isolated pair / canary")),
    (TopologyKind.DISAGGREGATED.value, _("Prefill/decode disaggregation (xPyD)")),
]
PAIR_SWITCH_CHOICES = [
    ("shared", _("Shared by both clusters")),
    ("separate", _("Separate for each cluster")),
]
PARALLEL_CHOICES = [("auto", _("Auto (proposed layout)")), ("manual", _("Manual"))]
KV_DTYPE_CHOICES = [("auto", _("BF16 (model default)")), ("fp8", _("FP8"))]
PREFIX_CACHING_CHOICES = [("", _("Default (launch recipe, else on)")), ("on", _("On")), ("off", _("Off"))]
LANGUAGE_ONLY_CHOICES = [
    ("", _("Default (on for a server validated for text only)")),
    ("on", _("On")),
    ("off", _("Off")),
]
SPECULATIVE_CHOICES = [
    ("", _("Default (the catalog's draft where the engine version runs one)")),
    ("off", _("Off")),
    ("mtp", _("MTP head")),
    ("draft_model", _("Draft model")),
    ("eagle", _("EAGLE head")),
    ("eagle3", _("EAGLE-3 head")),
    ("dspark", _("DSpark draft")),
    ("ngram", _("N-gram (prompt lookup)")),
    ("suffix", _("Suffix decoding")),
]


class CatalogChoiceField(forms.ModelChoiceField):
    """A catalog choice looked up in the per-process cache of the current
    catalog version (``port.cache``) instead of one query per field and
    request; ``catalog_version`` is set by the form once per request."""

    catalog_version: int | None = None

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if self.catalog_version is None:
            return super().to_python(value)
        from configurator.port import cache as catalog_cache

        key = ("choices", self.queryset.model._meta.label_lower, self.to_field_name)
        rows = catalog_cache.cached(
            self.catalog_version, key, lambda: {str(getattr(o, self.to_field_name)): o for o in self.queryset}
        )
        found = rows.get(str(value))
        if found is None:
            raise forms.ValidationError(
                self.error_messages["invalid_choice"], code="invalid_choice", params={"value": value}
            )
        return found


def _int(label, *, min_value, max_value, required=True, initial=None, help_text=""):
    return forms.IntegerField(
        label=label,
        min_value=min_value,
        max_value=max_value,
        required=required,
        initial=initial,
        help_text=help_text,
        widget=forms.NumberInput(attrs={"step": 1}),
    )


def _dec(label, *, min_value, max_value, required=True, initial=None, places=4, help_text=""):
    return forms.DecimalField(
        label=label,
        min_value=Decimal(str(min_value)),
        max_value=Decimal(str(max_value)),
        required=required,
        initial=initial,
        decimal_places=places,
        help_text=help_text,
        widget=forms.NumberInput(attrs={"step": "any"}),
    )


class ConfiguratorForm(forms.Form):
    """Every input of the configurator page."""

    scenario = CatalogChoiceField(
        selectors.scenarios(),
        to_field_name="slug",
        required=False,
        label=_("Scenario"),
        empty_label=_("— none —"),
    )
    model = CatalogChoiceField(
        selectors.llm_models(), to_field_name="slug", label=_("Model"), empty_label=None
    )
    server = CatalogChoiceField(
        selectors.servers(),
        to_field_name="slug",
        label=_("Server"),
        empty_label=None,
    )
    checkpoint = forms.ModelChoiceField(
        selectors.checkpoints(),
        to_field_name="slug",
        required=False,
        label=_("Checkpoint (weights loaded)"),
        empty_label=_("The model's default for the platform"),
    )
    topology = forms.ChoiceField(choices=TOPOLOGY_CHOICES, label=_("Topology"))
    nodes = _int(_("Nodes"), min_value=1, max_value=1024, initial=4)
    prefill_nodes = _int(_("Prefill nodes"), min_value=0, max_value=1024, required=False)
    decode_nodes = _int(_("Decode nodes"), min_value=0, max_value=1024, required=False)

    pair_switches = forms.ChoiceField(
        choices=PAIR_SWITCH_CHOICES,
        label=_("Parameter-plane switches of a pair"),
        initial="shared",
        required=False,
    )

    parallel_mode = forms.ChoiceField(choices=PARALLEL_CHOICES, label=_("Parallel layout"), initial="auto")
    tp = _int(_("TP"), min_value=1, max_value=1024, required=False)
    dp = _int(_("DP"), min_value=1, max_value=1024, required=False)
    pp = _int(_("PP"), min_value=1, max_value=128, required=False)
    dp_local = _int(_("DP ranks per node"), min_value=1, max_value=64, required=False)
    decode_tp = _int(_("Decode TP"), min_value=1, max_value=1024, required=False)
    decode_dp = _int(_("Decode DP"), min_value=1, max_value=1024, required=False)
    expert_parallel = forms.BooleanField(label=_("Expert parallelism"), required=False, initial=True)

    # Serving values left blank are left out of the request: the one serving-defaults path fills them
    # (engine/defaults.py serving_defaults: the launch recipe's value for this model and server, else
    # vLLM's), as the API and manage.py plan do.  The placeholder shows the value the plan will use.
    gpu_memory_utilization = _dec(
        _("Memory utilisation"),
        min_value=SERVING_RANGES["gpu_memory_utilization"][0],
        max_value=SERVING_RANGES["gpu_memory_utilization"][1],
        required=False,
        places=3,
    )
    max_model_len = _int(
        _("Max model length (tokens)"),
        min_value=SERVING_RANGES["max_model_len"][0],
        max_value=SERVING_RANGES["max_model_len"][1],
        required=False,
    )
    max_num_seqs = _int(
        _("Max sequences per DP rank"),
        min_value=SERVING_RANGES["max_num_seqs"][0],
        max_value=SERVING_RANGES["max_num_seqs"][1],
        required=False,
    )
    max_num_batched_tokens = _int(
        _("Max batched tokens"),
        min_value=SERVING_RANGES["max_num_batched_tokens"][0],
        max_value=SERVING_RANGES["max_num_batched_tokens"][1],
        required=False,
    )
    kv_cache_dtype = forms.ChoiceField(
        choices=KV_DTYPE_CHOICES, label=_("KV cache dtype"), initial=SERVING_DEFAULTS.kv_cache_dtype.value
    )
    # The engine version the memory budget follows (engine/engine_versions.py); empty: the launch
    # recipe's, the same default the API and manage.py plan take.
    vllm_version = forms.CharField(
        label=_("Engine version (vLLM / vLLM-Ascend)"),
        required=False,
        max_length=32,
        help_text=_("Empty: the version of the launch recipe."),
    )
    comm_buffer_mb = _int(
        _("Communication buffer (MB)"),
        min_value=SERVING_RANGES["comm_buffer_mb"][0],
        max_value=SERVING_RANGES["comm_buffer_mb"][1],
        required=False,
    )
    # Three states: the default (the recipe's, else on), on, off.
    enable_prefix_caching = forms.ChoiceField(
        choices=PREFIX_CACHING_CHOICES, label=_("Prefix caching"), required=False, initial=""
    )
    language_model_only = forms.ChoiceField(
        choices=LANGUAGE_ONLY_CHOICES, label=_("Language model only (no vision)"), required=False, initial=""
    )

    input_tokens = _int(_("Input tokens per request"), min_value=1, max_value=16_777_216, initial=8192)
    output_tokens = _int(_("Output tokens per request"), min_value=1, max_value=16_777_216, initial=1024)
    concurrency = _int(_("Concurrent requests"), min_value=1, max_value=1_000_000, initial=16)
    needs_vision = forms.BooleanField(label=_("Image input needed"), required=False)
    # Latency targets (P50 and P90) and speculative decoding: engine/performance/, docs/performance.md
    ttft_target_s = _dec(
        _("TTFT target P50 (s)"), min_value=0.001, max_value=86_400, required=False, places=3
    )
    ttft_p90_target_s = _dec(
        _("TTFT target P90 (s)"), min_value=0.001, max_value=86_400, required=False, places=3
    )
    tpot_target_ms = _dec(
        _("TPOT target P50 (ms)"), min_value=0.01, max_value=100_000, required=False, places=2
    )
    tpot_p90_target_ms = _dec(
        _("TPOT target P90 (ms)"), min_value=0.01, max_value=100_000, required=False, places=2
    )
    speculative_tokens = _int(
        _("MTP / speculative draft tokens"), min_value=0, max_value=16, required=False, initial=0
    )
    speculative_acceptance_rate = _dec(
        _("Draft-token acceptance rate"), min_value=0, max_value=1, required=False, places=3
    )
    # Speculative decoding as vLLM launches it (serving.speculative, engine/speculative.py): blank takes the
    # defaults (the catalog's draft where the engine version runs one), "off" turns it off.
    speculative_method = forms.ChoiceField(
        choices=SPECULATIVE_CHOICES, label=_("Speculative decoding"), required=False, initial=""
    )
    speculative_draft = forms.SlugField(label=_("Draft (catalog)"), required=False, max_length=80)
    num_speculative_tokens = _int(_("Speculative tokens"), min_value=0, max_value=16, required=False)
    # xPyD only: each role's own batch settings (serving.prefill / serving.decode); blank keeps the shared one.
    prefill_max_num_seqs = _int(
        _("Prefill: max sequences per DP rank"),
        min_value=SERVING_RANGES["max_num_seqs"][0],
        max_value=SERVING_RANGES["max_num_seqs"][1],
        required=False,
    )
    prefill_max_num_batched_tokens = _int(
        _("Prefill: max batched tokens"),
        min_value=SERVING_RANGES["max_num_batched_tokens"][0],
        max_value=SERVING_RANGES["max_num_batched_tokens"][1],
        required=False,
    )
    decode_max_num_seqs = _int(
        _("Decode: max sequences per DP rank"),
        min_value=SERVING_RANGES["max_num_seqs"][0],
        max_value=SERVING_RANGES["max_num_seqs"][1],
        required=False,
    )
    decode_max_num_batched_tokens = _int(
        _("Decode: max batched tokens"),
        min_value=SERVING_RANGES["max_num_batched_tokens"][0],
        max_value=SERVING_RANGES["max_num_batched_tokens"][1],
        required=False,
    )
    decode_mode = forms.ChoiceField(
        choices=(("graph", _("Graph mode (captured graphs)")), ("eager", _("Eager (--enforce-eager)"))),
        label=_("Decode execution"),
        required=False,
        initial="graph",
    )
    measured_output_tokens_per_s = _dec(
        _("Measured output tokens/s (overrides the estimate)"),
        min_value=0.001,
        max_value=10**9,
        required=False,
        places=3,
    )

    site = CatalogChoiceField(selectors.sites(), to_field_name="slug", label=_("Site"), empty_label=None)
    rack = CatalogChoiceField(
        selectors.rack_types(), to_field_name="slug", label=_("Rack type"), empty_label=None
    )

    rack_max_kw = _dec(
        _("Cap rack power at (kW, optional)"), min_value=1, max_value=200, required=False, places=1
    )

    price_list = CatalogChoiceField(
        selectors.price_lists(),
        to_field_name="slug",
        required=False,
        label=_("Price list"),
        empty_label=_("— in force today —"),
    )
    server_unit_price = _dec(
        _("Server price (override)"), min_value=0, max_value=10**12, required=False, places=2
    )
    server_lease_per_month = _dec(
        _("Lease per node-month (override)"), min_value=0, max_value=10**11, required=False, places=2
    )
    om_per_year = _dec(_("O&M per year (override)"), min_value=0, max_value=10**12, required=False, places=2)
    utilisation = _dec(_("Utilisation"), min_value=0.01, max_value=1, initial=Decimal("0.6"), places=3)
    horizon_years = _int(_("Horizon (years)"), min_value=1, max_value=15, initial=3)
    discount_rate = _dec(_("Discount rate"), min_value=0, max_value=1, initial=Decimal("0.08"), places=4)

    node_ips = forms.CharField(
        label=_("Node IPs (one per line, node 0 first)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    data_nic = forms.CharField(label=_("Data NIC name"), required=False, max_length=15)
    model_path = forms.CharField(label=_("Model path on the nodes"), required=False, max_length=400)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.is_bound:
            from configurator.port import cache as catalog_cache

            version = catalog_cache.current_version()
            for field in self.fields.values():
                if isinstance(field, CatalogChoiceField):
                    field.catalog_version = version
        zh = is_zh(get_language())
        self.fields["scenario"].label_from_instance = lambda s: s.name_zh if zh else s.name_en
        # Catalog rows carry a Chinese name (the proposal prints it too); empty: the name.
        for name in ("server", "rack", "site", "checkpoint"):
            self.fields[name].label_from_instance = lambda row: (
                (getattr(row, "name_zh", "") if zh else "") or row.name
            )
        self.fields["price_list"].label_from_instance = lambda row: row.label(
            (row.name_zh if zh else "") or row.name
        )

    def clean_node_ips(self):
        raw = self.cleaned_data.get("node_ips") or ""
        ips = [line.strip() for line in raw.replace(",", "\n").splitlines() if line.strip()]
        if len(ips) > 1024:
            raise forms.ValidationError(_("At most 1,024 addresses."))
        bad = []
        for ip in ips:
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                bad.append(ip[:40])
        if bad:
            raise forms.ValidationError(_("Not an IP address: %(ips)s") % {"ips": ", ".join(bad[:5])})
        if len(set(ips)) != len(ips):
            raise forms.ValidationError(_("Each node needs its own address; some are repeated."))
        return ips

    def clean_data_nic(self):
        nic = (self.cleaned_data.get("data_nic") or "").strip()
        if nic and sv.nic_error(nic):  # the request boundary's rule (Linux dev_valid_name)
            raise forms.ValidationError(
                _("A NIC name has 1–15 letters, digits, '.', '_', '-' or '@' (no ':', '/' or spaces).")
            )
        return nic

    def clean_model_path(self):
        path = (self.cleaned_data.get("model_path") or "").strip()
        if path and sv.model_path_error(path):  # the request boundary's rule
            raise forms.ValidationError(
                _("Use an absolute path (starting with /): letters, digits and / . _ - @ + = , only.")
            )
        return path

    def clean(self):
        data = super().clean()
        checkpoint, model = data.get("checkpoint"), data.get("model")
        if checkpoint is not None and model is not None and checkpoint.model_id != model.pk:
            self.add_error("checkpoint", _("This checkpoint belongs to another model."))
        if data.get("parallel_mode") == "manual":
            for name in ("tp", "dp"):
                if data.get(name) is None and name not in self.errors:
                    self.add_error(name, _("Required for a manual layout."))
        ips = data.get("node_ips") or []
        nodes = data.get("nodes")
        if ips and nodes and len(ips) != nodes:
            self.add_error(
                "node_ips",
                _("%(n)d addresses for %(m)d nodes: give one per node, or none.")
                % {"n": len(ips), "m": nodes},
            )
        return data

    # ------------------------------------------------------------------ request

    def to_request(self) -> dict:
        """The plan request (API format) for the cleaned data."""
        d = self.cleaned_data
        topology = {"kind": d["topology"], "nodes": d["nodes"]}
        if d["topology"] in (TopologyKind.PRIMARY_STANDBY.value, TopologyKind.TENANT_PAIR.value):
            topology["pair_switches"] = d.get("pair_switches") or "shared"
        if d["topology"] == TopologyKind.DISAGGREGATED.value:
            topology["prefill_nodes"] = d.get("prefill_nodes") or 0
            topology["decode_nodes"] = d.get("decode_nodes") or 0
        if d.get("parallel_mode") == "manual":
            topology["parallel"] = {
                "tp": d["tp"],
                "dp": d["dp"],
                "pp": d.get("pp") or 1,
                "dp_local": d.get("dp_local") or 1,
                "expert_parallel": bool(d.get("expert_parallel")),
            }
            if (
                d["topology"] == TopologyKind.DISAGGREGATED.value
                and d.get("decode_tp")
                and d.get("decode_dp")
            ):
                topology["decode_parallel"] = {
                    "tp": d["decode_tp"],
                    "dp": d["decode_dp"],
                    "pp": 1,
                    "dp_local": d.get("dp_local") or 1,
                    "expert_parallel": bool(d.get("expert_parallel")),
                }
        else:
            topology["parallel"] = "auto"
        commercial = {
            "utilisation": str(d["utilisation"]),
            "horizon_years": d["horizon_years"],
            "discount_rate": str(d["discount_rate"]),
        }
        if d.get("price_list"):
            commercial["price_list"] = d["price_list"].slug
        for name in ("server_unit_price", "server_lease_per_month", "om_per_year"):
            if d.get(name) is not None:
                commercial[name] = str(d[name])
        workload = {
            "input_tokens": d["input_tokens"],
            "output_tokens": d["output_tokens"],
            "concurrency": d["concurrency"],
            "needs_vision": bool(d.get("needs_vision")),
        }
        if d.get("measured_output_tokens_per_s") is not None:
            workload["measured_output_tokens_per_s"] = str(d["measured_output_tokens_per_s"])
        for name in ("ttft_target_s", "ttft_p90_target_s", "tpot_target_ms", "tpot_p90_target_ms"):
            if d.get(name) is not None:
                workload[name] = str(d[name])
        performance = {}
        if d.get("speculative_tokens"):
            performance["speculative_tokens"] = d["speculative_tokens"]
        if d.get("speculative_acceptance_rate") is not None:
            performance["speculative_acceptance_rate"] = str(d["speculative_acceptance_rate"])
        if d.get("decode_mode") == "eager":
            performance["graph_mode"] = False
        launch = {}
        if d.get("node_ips"):
            launch["node_ips"] = list(d["node_ips"])
        if d.get("data_nic"):
            launch["data_nic"] = d["data_nic"]
        if d.get("model_path"):
            launch["model_path"] = d["model_path"]
        request = {
            "model": d["model"].slug,
            "server": d["server"].slug,
            "topology": topology,
            "serving": self._serving(d),
            "workload": workload,
            "site": d["site"].slug,
            "rack": self._rack(d),
            "commercial": commercial,
            "launch": launch,
        }
        if performance:
            request["performance"] = performance
        if d.get("scenario"):
            request["scenario"] = d["scenario"].slug
        if d.get("checkpoint"):
            request["checkpoint"] = d["checkpoint"].slug
        return request

    def show_serving(self, serving) -> None:
        """Show, in each blank serving field, the value the plan took from the serving defaults
        (engine/defaults.py serving_defaults) as its placeholder."""
        for name in ("gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
                     "comm_buffer_mb"):  # fmt: skip
            value = getattr(serving, name)
            self.fields[name].widget.attrs["placeholder"] = (
                f"{value:g}" if isinstance(value, float) else str(value)
            )

    @staticmethod
    def _serving(d) -> dict:
        """The serving section: the fields typed in; a blank one is left to the serving defaults."""
        serving: dict = {"kv_cache_dtype": d["kv_cache_dtype"]}
        if d.get("gpu_memory_utilization") is not None:
            serving["gpu_memory_utilization"] = str(d["gpu_memory_utilization"])
        for name in ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "comm_buffer_mb"):
            if d.get(name) is not None:
                serving[name] = d[name]
        for name in ("enable_prefix_caching", "language_model_only"):  # three states: blank, on, off
            if d.get(name) in ("on", "off"):
                serving[name] = d[name] == "on"
        if d.get("vllm_version", "").strip():
            serving["vllm_version"] = d["vllm_version"].strip()
        method = d.get("speculative_method") or ""
        if method == "off":
            serving["speculative"] = {"method": ""}
        elif method:
            serving["speculative"] = {
                "method": method,
                "draft": d.get("speculative_draft") or "",
                "num_speculative_tokens": d.get("num_speculative_tokens") or 0,
            }
        if d.get("topology") == TopologyKind.DISAGGREGATED.value:
            for role in ("prefill", "decode"):
                block = {
                    name: d[f"{role}_{name}"]
                    for name in ("max_num_seqs", "max_num_batched_tokens")
                    if d.get(f"{role}_{name}") is not None
                }
                if block:
                    serving[role] = block
        return serving

    @staticmethod
    def _rack(d) -> str | dict:
        """The rack's slug, or the catalog rack inline with its power capped
        (servers per rack then follow the cap: the cooling fix)."""
        if d.get("rack_max_kw") is None:
            return d["rack"].slug
        from configurator.io.requests import to_jsonable
        from configurator.port.inputs import rack_spec

        rack = to_jsonable(rack_spec(d["rack"]))
        rack["max_kw"] = float(d["rack_max_kw"])
        return rack

    # Request paths → form fields, for errors the resolver or the engine report.
    FIELD_FOR_PATH = {
        "checkpoint": "checkpoint",
        "topology.nodes": "nodes",
        "topology.prefill_nodes": "prefill_nodes",
        "topology.decode_nodes": "decode_nodes",
        "topology.parallel.tp": "tp",
        "topology.parallel.dp": "dp",
        "topology.parallel.pp": "pp",
        "topology.parallel.dp_local": "dp_local",
        "topology.parallel.expert_parallel": "expert_parallel",
        "topology.decode_parallel.tp": "decode_tp",
        "topology.decode_parallel.dp": "decode_dp",
        "topology.kind": "topology",
        "topology.pair_switches": "pair_switches",
        "model": "model",
        "server": "server",
        "site": "site",
        "rack": "rack",
        "rack.max_kw": "rack_max_kw",
        "scenario": "scenario",
        "commercial.price_list": "price_list",
        "commercial.date": "price_list",
        "launch.node_ips": "node_ips",
        "launch.data_nic": "data_nic",
        "launch.model_path": "model_path",
        "serving.speculative.method": "speculative_method",
        "serving.speculative.draft": "speculative_draft",
        "serving.speculative.num_speculative_tokens": "num_speculative_tokens",
        "serving.prefill.max_num_seqs": "prefill_max_num_seqs",
        "serving.prefill.max_num_batched_tokens": "prefill_max_num_batched_tokens",
        "serving.decode.max_num_seqs": "decode_max_num_seqs",
        "serving.decode.max_num_batched_tokens": "decode_max_num_batched_tokens",
    }

    @classmethod
    def field_for_path(cls, path: str) -> str | None:
        """The form field a request path (``serving.max_model_len``) belongs to."""
        if path in cls.FIELD_FOR_PATH:
            return cls.FIELD_FOR_PATH[path]
        last = path.rsplit(".", 1)[-1]
        return last if last in cls.base_fields else None

    @classmethod
    def describe(cls, path: str, value: Any) -> tuple[str, str]:
        """A request path and its value as a reader names them: the form field's label and, for a
        field with fixed choices, the choice's label ("topology.pair_switches", "separate" →
        "双集群的参数面交换机", "每个集群独立"); a path no field carries keeps its own name."""
        name = cls.field_for_path(path)
        field = cls.base_fields.get(name) if name else None
        if field is None:
            return path, "" if value is None else str(value)
        label = str(field.label or name)
        choices = getattr(field, "choices", None)
        if isinstance(value, bool):
            return label, str(_("yes") if value else _("no"))
        if choices and not callable(choices):
            for key, text in choices:
                if str(key) == str(value):
                    return label, str(text)
        return label, "" if value is None else str(value)

    def add_request_errors(self, errors: dict[str, list[str]]) -> None:
        for path, messages in errors.items():
            field = self.field_for_path(path)
            for message in messages:
                self.add_error(
                    field if field in self.fields else None,
                    f"{path}: {message}" if field is None else message,
                )
