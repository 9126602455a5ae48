"""The calibration loop end to end: a `vllm bench serve` result imported on a quote is promoted by a
catalog administrator, `manage.py calibrate` refits with it, and the band of the plan's hardware
family changes; a result whose model does not match its plan is refused, naming the mismatch.

The sample quote is the seeded 16 × A3 8P8D Kimi K3 plan (quotes/pdf/sample.py); the bench file is
the result dict of vLLM's ``vllm/benchmarks/serve.py`` (tests/quotes/test_benchmark_import.py BENCH).
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command

from configurator import calibration as cal
from configurator.engine import serving_model as sm
from quotes.benchmark_import import parse_benchmark
from quotes.benchmark_models import MeasuredBenchmark
from quotes.calibration_models import PromotedMeasurement
from quotes.calibration_promotion import PromotionRefused, promote
from quotes.pdf.sample import sample_quote_create

from .test_benchmark_import import BENCH

pytestmark = pytest.mark.django_db


def _bench(revision, user, **changes):
    data = {k: v for k, v in {**BENCH, **changes}.items()}
    figures = parse_benchmark(json.dumps(data, allow_nan=True))
    return MeasuredBenchmark.objects.create(
        revision=revision, uploaded_by=user, filename="b.json", figures=figures
    )


@pytest.fixture
def admin_user(django_user_model):
    user = django_user_model.objects.create_user("catalog-admin", password="x")
    user.user_permissions.add(Permission.objects.get(codename="add_promotedmeasurement"))
    return user


def test_import_promote_calibrate_moves_the_band_of_the_plans_family(
    engineer, admin_user, tmp_path, monkeypatch
):
    fit_file = tmp_path / "fit.json"
    monkeypatch.setenv("PERFORMANCE_CALIBRATION_FILE", str(fit_file))
    revision = sample_quote_create(by=engineer, language="en")
    # The sample plans 8 K in / 1 K out; BENCH measured 8,192 / 1,024 at max_concurrency 16.
    bench = _bench(revision, engineer)

    call_command("calibrate", output=str(fit_file))
    before = json.loads(fit_file.read_text())["families"]["ascend-a3"]

    promoted = promote(bench, admin_user)
    assert promoted.record["provenance"]["benchmark_id"] == bench.pk
    assert promoted.record["workload"] == {"input_tokens": 8192, "output_tokens": 1024, "concurrency": 16}

    call_command("calibrate", output=str(fit_file))
    after = json.loads(fit_file.read_text())["families"]["ascend-a3"]
    # One more source and record for the A3 family; the band now includes its cross-validated ratio.
    assert after["sources"] == before["sources"] + 1
    assert after["records"] == before["records"] + 1
    rows = cal.cross_validate(cal.load_records() + [promoted.record]).of("ascend-a3")
    ratio = next(r.ratio for r in rows if r.record_id == promoted.record["id"])
    assert after["band_low"] <= round(ratio, 2) <= after["band_high"]
    assert (after["band_low"], after["band_high"], after["layer_overhead_s"]) != (
        before["band_low"],
        before["band_high"],
        before["layer_overhead_s"],
    )
    # The engine reads the new file: its band for the family is the refitted one.
    low, high, _ = sm.error_band("ascend-a3")
    assert (low, high) == (after["band_low"], after["band_high"])


def test_a_measurement_of_another_model_is_refused_naming_the_model(engineer, admin_user):
    revision = sample_quote_create(by=engineer, language="en")
    bench = _bench(revision, engineer, model_id="Qwen/Qwen3-32B", tokenizer_id="Qwen/Qwen3-32B")
    with pytest.raises(PromotionRefused, match=r"model: the result measured 'Qwen/Qwen3-32B'"):
        promote(bench, admin_user)
    assert not PromotedMeasurement.objects.exists()


def test_a_measurement_of_other_hardware_or_lengths_is_refused_naming_them(engineer, admin_user):
    revision = sample_quote_create(by=engineer, language="en")
    bench = _bench(revision, engineer, total_input_tokens=320 * 2048)
    with pytest.raises(PromotionRefused) as err:
        promote(bench, admin_user, conditions={"server": "hgx-h200-8gpu", "tp": 8})
    message = str(err.value)
    assert "hardware: measured on 'hgx-h200-8gpu'" in message
    assert "layout: measured tp 8, the plan has 16" in message
    assert "input length: measured 2,048 tokens per request, the plan has 8,192" in message


def test_the_admin_action_promotes_for_a_catalog_administrator_and_refuses_a_mismatch(
    client, engineer, admin_user
):
    admin_user.is_staff = True
    admin_user.save()
    admin_user.user_permissions.add(Permission.objects.get(codename="view_measuredbenchmark"))
    client.force_login(admin_user)
    revision = sample_quote_create(by=engineer, language="en")
    good = _bench(revision, engineer)
    other = _bench(revision, engineer, model_id="Qwen/Qwen3-32B", tokenizer_id="Qwen/Qwen3-32B")
    url = "/admin/quotes/measuredbenchmark/"
    response = client.post(
        url, {"action": "promote_to_calibration", "_selected_action": [good.pk, other.pk]}, follow=True
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "promoted; run manage.py calibrate to refit." in page
    assert "model: the result measured" in page
    assert list(PromotedMeasurement.objects.values_list("benchmark_id", flat=True)) == [good.pk]


def test_without_the_permission_the_action_is_not_offered(client, engineer):
    engineer.is_staff = True
    engineer.save()
    engineer.user_permissions.add(Permission.objects.get(codename="view_measuredbenchmark"))
    client.force_login(engineer)
    response = client.get("/admin/quotes/measuredbenchmark/")
    assert response.status_code == 200  # the changelist is shown, without the action
    page = response.content.decode()
    assert 'id="changelist"' in page
    assert "promote_to_calibration" not in page
