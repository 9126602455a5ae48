"""A saved request as the configurator form's data, and the request the form makes of it: a quote's
configuration reopened on the page, a proven fix applied."""

from __future__ import annotations

from typing import Any

from .forms import ConfiguratorForm
from .presets import preset_data


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def form_data_from_request(request_json: dict) -> dict[str, str]:
    """Form data that reproduces a saved request (reopen a quote's configuration,
    apply a proven fix).  Whatever the JSON holds, the answer is form data: a
    value of the wrong shape is left out and the form then says what is wrong."""
    data = preset_data(None)
    if not isinstance(request_json, dict):
        return data
    fields = ConfiguratorForm.base_fields
    for key in ("model", "server", "site", "rack", "scenario", "checkpoint"):
        if isinstance(request_json.get(key), str):
            data[key] = request_json[key]
    rack = request_json.get("rack")
    if isinstance(rack, dict) and isinstance(rack.get("slug"), str):
        data["rack"] = rack["slug"]  # a catalog rack with its power capped (the form's rack_max_kw)
        if isinstance(rack.get("max_kw"), (int, float)) and not isinstance(rack["max_kw"], bool):
            data["rack_max_kw"] = str(rack["max_kw"])
    topo = _obj(request_json.get("topology"))
    data["topology"] = str(topo.get("kind", data["topology"]))
    data["nodes"] = str(topo.get("nodes", data["nodes"]))
    for key in ("prefill_nodes", "decode_nodes", "pair_switches"):
        if topo.get(key) and not isinstance(topo[key], (dict, list)):
            data[key] = str(topo[key])
    parallel = topo.get("parallel", "auto")
    if isinstance(parallel, dict):
        data["parallel_mode"] = "manual"
        for key in ("tp", "dp", "pp", "dp_local"):
            if key in parallel and not isinstance(parallel[key], (dict, list)):
                data[key] = str(parallel[key])
        if not parallel.get("expert_parallel", True):
            data.pop("expert_parallel", None)
        decode = topo.get("decode_parallel")
        if isinstance(decode, dict):
            data["decode_tp"] = str(decode.get("tp", ""))
            data["decode_dp"] = str(decode.get("dp", ""))
    for section in ("serving", "workload", "commercial"):
        for key, value in _obj(request_json.get(section)).items():
            if key not in fields:
                continue
            if isinstance(value, bool):
                if key in ("enable_prefix_caching", "language_model_only"):  # three states: blank, on, off
                    data[key] = "on" if value else "off"
                elif value:
                    data[key] = "on"
                else:
                    data.pop(key, None)
            elif value is not None and not isinstance(value, (dict, list)):
                data[key] = str(value)
    serving = _obj(request_json.get("serving"))
    speculative = _obj(serving.get("speculative"))
    if "speculative" in serving:  # stated: its method ("off" when empty), draft and tokens
        data["speculative_method"] = str(speculative.get("method") or "off")
        if isinstance(speculative.get("draft"), str) and speculative["draft"]:
            data["speculative_draft"] = speculative["draft"]
        if (
            isinstance(speculative.get("num_speculative_tokens"), int)
            and speculative["num_speculative_tokens"]
        ):
            data["num_speculative_tokens"] = str(speculative["num_speculative_tokens"])
    for role in ("prefill", "decode"):
        for key, value in _obj(serving.get(role)).items():
            if f"{role}_{key}" in fields and isinstance(value, int) and not isinstance(value, bool):
                data[f"{role}_{key}"] = str(value)
    launch = _obj(request_json.get("launch"))
    ips = launch.get("node_ips")
    if isinstance(ips, list) and all(isinstance(ip, str) for ip in ips):
        data["node_ips"] = "\n".join(ips)
    for key in ("data_nic", "model_path"):
        if isinstance(launch.get(key), str) and launch[key]:
            data[key] = launch[key]
    return data


def form_request(request_json: dict) -> dict | None:
    """The request the configurator form produces for ``request_json`` (None if
    the form refuses it): what applying a configuration on the page plans."""
    form = ConfiguratorForm(form_data_from_request(request_json))
    if not form.is_valid():
        return None
    return form.to_request()
