"""A bundle rebuilt from a stored plan (quotes keep ``result_json["launch"]``) is the same bundle."""

from __future__ import annotations

import json

import pytest

from configurator.engine.launch import build_launch, bundle_files
from configurator.engine.layout import resolve_layout
from configurator.engine.serialize import to_jsonable
from documents.exports import launch_result_from_dict
from documents.pdf.sample import sample_request

NEW_FIELDS = ("recipe", "deviations", "served_name", "devices_per_node", "workload", "max_num_seqs")


# The seeded cases with the sample proposal's launch section (documents/pdf/sample.py).
@pytest.mark.parametrize("name", ["8p8d", "8node-standby", "nf5868g8"])
def test_a_stored_launch_renders_the_same_files(name):
    req = sample_request(name)
    result = build_launch(req, resolve_layout(req))
    stored = json.loads(json.dumps(to_jsonable(result)))
    assert bundle_files(launch_result_from_dict(stored)) == bundle_files(result)


def test_a_plan_stored_before_recipes_still_renders_with_the_generic_recipe():
    req = sample_request("4node")
    stored = json.loads(json.dumps(to_jsonable(build_launch(req, resolve_layout(req)))))
    stored["context"] = {k: v for k, v in stored["context"].items() if k not in NEW_FIELDS}
    files = bundle_files(launch_result_from_dict(stored))
    assert "ascend-generic" in files["README.md"]
    assert "--device /dev/davinci15" in files["docker/node-00-cluster-master.sh"].replace("'", "")
