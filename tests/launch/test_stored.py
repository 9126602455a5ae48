"""A bundle rebuilt from a stored plan (quotes keep ``result_json["launch"]``) is the same bundle."""

from __future__ import annotations

import json

import pytest

from configurator.engine import fixtures as F
from configurator.engine.launch import build_launch
from configurator.engine.layout import resolve_layout
from configurator.engine.serialize import to_jsonable
from quotes.exports import launch_result_from_dict

NEW_FIELDS = ("recipe", "deviations", "served_name", "devices_per_node", "workload", "max_num_seqs")


@pytest.mark.parametrize(
    "build", [F.request_k3_a3_8p8d, F.request_k3_a3_8node_pair, F.request_k3_nf5868g8_2node]
)
def test_a_stored_launch_renders_the_same_files(build):
    req = build()
    result = build_launch(req, resolve_layout(req))
    stored = json.loads(json.dumps(to_jsonable(result)))
    assert launch_result_from_dict(stored).files == result.files


def test_a_plan_stored_before_recipes_still_renders_with_the_generic_recipe():
    req = F.request_k3_a3_4node()
    stored = json.loads(json.dumps(to_jsonable(build_launch(req, resolve_layout(req)))))
    stored["context"] = {k: v for k, v in stored["context"].items() if k not in NEW_FIELDS}
    files = launch_result_from_dict(stored).files
    assert "ascend-generic" in files["README.md"]
    assert "--device /dev/davinci15" in files["docker/node-00-cluster-master.sh"].replace("'", "")
