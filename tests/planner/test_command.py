"""manage.py recommend REQUEST.json prints the /api/recommend answer."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from .helpers import NO_TARGETS

pytestmark = pytest.mark.django_db


def test_recommend_prints_json(seeded, tmp_path):
    path = tmp_path / "request.json"
    path.write_text(
        json.dumps(
            {
                "scenario": "multimodal-knowledge-base",
                "constraints": {"domestic_only": True},
                "workload": NO_TARGETS,  # the scenario's TPOT 50 ms is out of A3's reach (helpers.py)
            }
        )
    )
    out = StringIO()
    call_command("recommend", str(path), "--no-evaluated", stdout=out)
    body = json.loads(out.getvalue())
    assert body["candidates"][0]["server"] == "atlas-800-a3"
    assert "evaluated" not in body


def test_recommend_reports_field_errors(seeded, tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "kimi-k3", "constraints": {"max_capex": -1}}))
    with pytest.raises(CommandError, match="constraints.max_capex"):
        call_command("recommend", str(path), stdout=StringIO())
    path.write_text("{oops")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("recommend", str(path), stdout=StringIO())
