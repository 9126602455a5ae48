"""The calibration loop end to end: a `vllm bench serve` result imported on a quote is promoted by a
catalog administrator, `manage.py calibrate` refits with it, and the band of the plan's hardware
family changes; a result whose model does not match its plan is refused, naming the mismatch.

The sample quote is the seeded 16 × A3 8P8D Kimi K3 plan (documents/pdf/sample.py); the bench file is
the result dict of vLLM's ``vllm/benchmarks/serve.py`` (tests/quotes/test_benchmark_import.py BENCH).
"""

from __future__ import annotations

import hashlib
import json

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command

from configurator import calibration as cal
from configurator.engine import serving_model as sm
from documents.pdf.sample import sample_quote_create
from quotes.benchmarks.calibration_models import PromotedMeasurement
from quotes.benchmarks.importer import parse_benchmark
from quotes.benchmarks.models import MeasuredBenchmark
from quotes.benchmarks.promotion import PromotionRefused, promote

from .test_benchmark_import import BENCH

pytestmark = pytest.mark.django_db


def _bench(revision, user, **changes):
    data = {k: v for k, v in {**BENCH, **changes}.items()}
    raw = json.dumps(data, allow_nan=True)
    figures = parse_benchmark(raw)
    return MeasuredBenchmark.objects.create(
        revision=revision,
        uploaded_by=user,
        filename="b.json",
        figures=figures,
        sha256=hashlib.sha256(raw.encode()).hexdigest(),
    )


@pytest.fixture
def admin_user(users):
    """The demo catalog administrator, with the permissions the role set-up gives it."""
    return users["catalog"]


@pytest.fixture
def second_admin(django_user_model, users):
    from django.contrib.auth.models import Group

    from accounts import roles

    user = django_user_model.objects.create_user("catalog-2", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=roles.CATALOG_ADMIN))
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
    client.force_login(admin_user)  # the demo catalog admin, as the role set-up leaves it
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


def test_poisoned_duplicate_fileless_and_off_load_measurements_are_refused_with_the_reason(
    engineer, admin_user
):
    revision = sample_quote_create(by=engineer, language="en")
    # The sample plans Kimi K3 on 16 × A3 at 8 K in / 1 K out; BENCH measured it at 403.3 tok/s.
    for tps in (1e-9, 1e11):
        poisoned = _bench(revision, engineer, output_throughput=tps)
        with pytest.raises(PromotionRefused) as err:
            promote(poisoned, admin_user)
        message = str(err.value)
        assert message.startswith("implausible against its own plan: throughput: measured")
        assert "outside 0.25–4 × the estimate" in message
        assert "second reviewer" in message
    # A measurement at 1,000 users against the plan's load, and one of 100 / 10-token requests.
    off_load = _bench(revision, engineer, max_concurrency=1000)
    with pytest.raises(PromotionRefused, match=r"load: measured at 1,000 users, the plan is for 16"):
        promote(off_load, admin_user)
    short = _bench(revision, engineer, total_input_tokens=320 * 100, total_output_tokens=320 * 10)
    with pytest.raises(PromotionRefused) as err:
        promote(short, admin_user)
    assert "input length: measured 100 tokens per request, the plan has 8,192" in str(err.value)
    assert "output length: measured 10 tokens per request, the plan has 1,024" in str(err.value)
    # No file behind it (no SHA-256 recorded).
    fileless = _bench(revision, engineer)
    fileless.sha256 = ""
    fileless.save()
    with pytest.raises(PromotionRefused, match=r"file: the measurement has no uploaded file"):
        promote(fileless, admin_user)
    # The same bytes uploaded twice: the first joins the set, the second is refused by its SHA-256.
    first, again = _bench(revision, engineer), _bench(revision, engineer)
    assert first.sha256 == again.sha256
    promote(first, admin_user)
    with pytest.raises(PromotionRefused, match=r"file: the same file \(SHA-256 [0-9a-f]{12}…\) is already"):
        promote(again, admin_user)
    assert list(PromotedMeasurement.objects.values_list("benchmark_id", flat=True)) == [first.pk]


def test_an_implausible_measurement_needs_a_reason_and_a_second_reviewer(engineer, admin_user, second_admin):
    from quotes.benchmarks.promotion import confirm, promoted_records

    revision = sample_quote_create(by=engineer, language="en")
    # 20 × BENCH's 403.3 tok/s: five times beyond the 4 × an estimate may be off.
    far = _bench(revision, engineer, output_throughput=403.3 * 20)
    with pytest.raises(PromotionRefused, match="implausible"):
        promote(far, admin_user, reason="too short")
    promoted = promote(far, admin_user, reason="Measured twice with speculative decoding on; log attached.")
    assert promoted.awaiting_review and promoted.implausible.startswith("throughput: measured 8,066")
    assert promoted_records() == []  # calibrate does not read it yet
    with pytest.raises(PromotionRefused, match="someone other than who uploaded and promoted it"):
        confirm(promoted, admin_user)
    with pytest.raises(PromotionRefused, match="someone other than"):
        confirm(promoted, engineer)  # the uploader
    confirm(promoted, second_admin)
    assert [r["id"] for r in promoted_records()] == [promoted.record["id"]]


def test_after_the_role_set_up_only_the_catalog_admin_holds_promotion_rights(users):
    from django.contrib.auth.models import Group

    from accounts import roles

    def codenames(role):
        return set(Group.objects.get(name=role).permissions.values_list("codename", flat=True))

    for role in (roles.SALES_ENGINEER, roles.SALES_MANAGER):
        assert not {c for c in codenames(role) if c.endswith("_promotedmeasurement")}, role
        assert "add_measuredbenchmark" in codenames(role)  # they still upload to their own quotes
    admin = codenames(roles.CATALOG_ADMIN)
    assert {
        "add_promotedmeasurement",
        "change_promotedmeasurement",
        "delete_promotedmeasurement",
        "view_promotedmeasurement",
        "view_measuredbenchmark",
    } <= admin
    assert "view_quote" not in admin and "change_measuredbenchmark" not in admin
    assert users["catalog"].has_perm("quotes.add_promotedmeasurement")
    assert not users["manager"].has_perm("quotes.add_promotedmeasurement")


def test_the_admin_action_passes_the_measured_hardware_and_layout(client, engineer, admin_user):
    client.force_login(admin_user)
    revision = sample_quote_create(by=engineer, language="en")
    bench = _bench(revision, engineer)
    response = client.post(
        "/admin/quotes/measuredbenchmark/",
        {
            "action": "promote_to_calibration",
            "_selected_action": [bench.pk],
            "server": "hgx-h200-8gpu",
            "tp": "8",
            "nodes": "",
            "dp": "",
            "reason": "",
        },
        follow=True,
    )
    page = response.content.decode()
    assert "hardware: measured on &#x27;hgx-h200-8gpu&#x27;" in page
    assert "layout: measured tp 8, the plan has 16" in page
    assert not PromotedMeasurement.objects.exists()
