"""Verdicts from the engine only (issue 17): 8 × Atlas 800 A2 with image input
is an error in the configurator, the JSON API and the auto-planner alike.

Catalog seed: Kimi K3 is validated on the Atlas 800 A2 for text only (the
8 × A2 deployment runs with --language-model-only, docs/domain.md §4), so images
need another server.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from configurator import reference
from configurator.engine.capability import capability_checks
from configurator.engine.types import Severity
from configurator.planning.plans import plan_from_json
from configurator.web import presentation
from configurator.web.presets import preset_data

pytestmark = pytest.mark.django_db

A2_IMAGES = {
    "model": "kimi-k3",
    "server": "atlas-800-a2",
    "topology": {"kind": "single", "nodes": 8},
    "serving": {"max_model_len": 32768},
    "workload": {"needs_vision": True},
}


@pytest.fixture
def engineer_client(client, catalog, users):
    client.force_login(users["engineer"])
    client.cookies["django_language"] = "en"
    return client


def test_the_engine_refuses_image_input_on_a_text_only_server():
    from dataclasses import replace

    # the seeded 8 × A2 text-only case asking for images; the seed marks Kimi K3 text-only on the A2
    # (catalog/seed/models.yaml kimi-k3 text_only_servers)
    case = reference.CASES["a2-8-text-only-modelslim"]
    req = reference.request({**case, "workload": {"needs_vision": True}})
    assert req.model.text_only_servers == (req.server.slug,) == ("atlas-800-a2",)
    (c,) = capability_checks(req)
    assert c.code == "model.text_only_server" and c.severity == Severity.ERROR and c.area == "model"
    assert capability_checks(reference.request(case)) == []
    # the rule is the model's list or the server's own text-only flag (engine/capability.py): with
    # neither, the same request may take images
    free = replace(req, model=replace(req.model, text_only_servers=()))
    assert capability_checks(replace(free, server=replace(req.server, validated_text_only=False))) == []


def test_the_api_says_error(engineer_client):
    response = engineer_client.post(
        reverse("configurator:api_plan"), A2_IMAGES, content_type="application/json"
    )
    body = response.json()
    assert body["ok"] is False
    assert "model.text_only_server" in [c["code"] for c in body["checks"] if c["severity"] == "error"]


def test_the_configurator_says_error_with_a_model_badge_not_memory(engineer_client):
    data = preset_data(None)
    data.update(server="atlas-800-a2", nodes="8", max_model_len="32768", needs_vision="on")
    body = engineer_client.post("/", data).content.decode()
    assert 'data-code="model.text_only_server"' in body
    assert "This deployment does not work as configured" in body
    assert 'class="badge error" data-area="model"' in body
    assert 'class="badge ok" data-area="memory"' in body or 'class="badge warning" data-area="memory"' in body


def test_the_planner_rejects_the_a2_for_images(engineer_client):
    response = engineer_client.post(
        reverse("configurator:api_recommend"),
        json.dumps({"scenario": "multimodal-knowledge-base"}),
        content_type="application/json",
    )
    body = response.json()
    assert all(c["server"] != "atlas-800-a2" for c in body["candidates"])
    a2 = [r for r in body["rejected_families"] if r["server"] == "atlas-800-a2"]
    assert a2 and a2[0]["code"] == "planner.text_only_server"


def test_a_model_error_is_a_model_badge():
    checks = [{"code": "model.max_model_len_exceeds_context", "severity": "error", "area": "model"}]
    badges = {v["area"]: v["severity"] for v in presentation.verdicts(checks, "en")}
    assert badges["model"] == "error" and badges["memory"] == "ok"


def test_the_saved_request_keeps_the_rule_after_replanning(catalog):
    """A quote replans the fully inline request: the text-only list travels with the model."""
    from configurator.io.requests import request_to_inline

    request, result = plan_from_json(A2_IMAGES)
    assert not result.ok
    inline = request_to_inline(request)
    assert inline["model"]["text_only_servers"] == ["atlas-800-a2"]
    _, again = plan_from_json(inline)
    assert "model.text_only_server" in [c.code for c in again.checks]
