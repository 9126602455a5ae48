"""Every URL, as every role: the status each one gets.

Roles: anonymous, sales engineer A (owns the quote, team East China), sales
engineer B (other team), sales manager (team East China) and catalog admin.
A URL added to the project without a row here fails ``test_every_url_is_in_the_matrix``.
The admin site is covered by its own rows (index and one catalog table).
"""

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from configurator.web.presets import preset_data
from quotes.models import Quote

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "engineer", "engineer2", "manager", "catalog")
LOGIN = "login"  # a redirect to the log-in page
REQUEST = {"model": "kimi-k3", "server": "atlas-800-a3", "topology": {"kind": "single", "nodes": 4}}


def everyone(status):
    return dict.fromkeys(ROLES, status)


def sales(ok, *, anonymous=LOGIN, other_team=404, catalog=None, manager=None):
    """Sales engineer A and the manager get ``ok``; engineer B (other team)
    ``other_team``; the catalog admin 403 for pages of the sales roles unless
    told otherwise."""
    return {
        "anonymous": anonymous,
        "engineer": ok,
        "engineer2": other_team,
        "manager": ok if manager is None else manager,
        "catalog": 403 if catalog is None else catalog,
    }


# name → (method, kwargs(ctx) or None, data(ctx) or None, expected statuses by role)
MATRIX = {
    "healthz": ("GET", None, None, everyone(200)),
    "login": ("GET", None, None, {**everyone(302), "anonymous": 200}),
    "logout": ("POST", None, None, {**everyone(302)}),
    "set_language": ("POST", None, lambda c: {"language": "en", "next": "/"}, everyone(302)),
    "password_change": ("GET", None, None, {**everyone(200), "anonymous": LOGIN}),
    "password_change_done": ("GET", None, None, {**everyone(200), "anonymous": LOGIN}),
    # API tokens call the planning API, the sales roles': the catalog admin has none (403).
    "api_tokens": ("GET", None, None, {**everyone(200), "anonymous": LOGIN, "catalog": 403}),
    # Nobody's token 999999: a 404 for every sales role (their own tokens only).
    "api_token_revoke": (
        "POST",
        lambda c: {"pk": 999999},
        None,
        {**everyone(404), "anonymous": LOGIN, "catalog": 403},
    ),
    # A catalog admin lands in the admin (issue 17), and may preview catalog rows (read-only).
    "configurator:home": ("GET", None, None, sales(200, other_team=200, catalog=302)),
    "configurator:preview": ("GET", None, None, sales(200, other_team=200, catalog=200)),
    "configurator:acknowledge": (
        "POST",
        None,
        lambda c: {"code": "memory.max_num_seqs_not_full_length", "reason": "matrix"},
        sales(200, other_team=200),
    ),
    "configurator:update": ("POST", None, lambda c: {}, sales(200, other_team=200)),
    # The smallest catalog deployment that meets the targets, loaded after the results (sales roles).
    "configurator:alternative": ("POST", None, lambda c: {}, sales(200, other_team=200)),
    "configurator:advice": ("POST", None, lambda c: {}, sales(200, other_team=200)),
    # An opened "why?" of an updated results panel: the form as posted and the figure's key.
    "configurator:why": (
        "POST",
        None,
        lambda c: {**preset_data(None), "figure": "performance.ttft_s"},
        sales(200, other_team=200),
    ),
    "configurator:preset": ("GET", None, None, sales(200, other_team=200)),
    "configurator:apply_fix": ("POST", None, lambda c: {"fix": "{}"}, sales(200, other_team=200)),
    "configurator:bundle": (
        "POST",
        None,
        lambda c: {"request_json": json.dumps(REQUEST)},
        sales(200, other_team=200),
    ),
    "configurator:api_plan": (
        "POST_JSON",
        None,
        lambda c: REQUEST,
        {**sales(200, other_team=200, anonymous=401)},
    ),
    "configurator:planner": ("GET", None, None, sales(200, other_team=200)),
    "configurator:planner_results": ("POST", None, lambda c: {}, sales(200, other_team=200)),
    "configurator:planner_preset": ("GET", None, None, sales(200, other_team=200)),
    "configurator:planner_open": (
        "POST",
        None,
        lambda c: {"request_json": json.dumps(REQUEST)},
        sales(200, other_team=200),
    ),
    "configurator:api_recommend": (
        "POST_JSON",
        None,
        lambda c: {"model": "kimi-k3", "scenario": "government-policy-qa"},
        sales(200, other_team=200, anonymous=401),
    ),
    # A catalog admin sees an empty quote list (no quotes of their own) and 404 on any quote.
    # Quotes are the sales roles' (issue 27: the catalog admin reached /quotes/).
    "quotes:list": ("GET", None, None, sales(200, other_team=200)),
    "quotes:customers": ("GET", None, None, sales(200, other_team=200)),
    "quotes:create": ("POST", None, lambda c: {}, sales(400, other_team=400)),
    # Which quote a saved configurator form made: nobody made one with this key (their own only).
    "quotes:created_by_key": (
        "GET",
        lambda c: {"key": "0" * 32},
        None,
        sales(404, other_team=404, catalog=404),
    ),
    # Quote pages: the owner and the team's manager; another team and the catalog
    # admin get 404, so ids and numbers cannot be probed.  Empty POSTs are 400
    # (the form's version field is missing), never a 500.
    "quotes:detail": ("GET", lambda c: {"pk": c["quote"].pk}, None, sales(200, catalog=404)),
    "quotes:edit": ("GET", lambda c: {"pk": c["quote"].pk}, None, sales(200, catalog=404)),
    "quotes:compare": ("GET", lambda c: {"pk": c["quote"].pk}, None, sales(302, catalog=404)),
    "quotes:transition": ("POST", lambda c: {"pk": c["quote"].pk}, lambda c: {}, sales(400, catalog=404)),
    "quotes:revise": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(400, catalog=404)),
    "quotes:issue": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(400, catalog=404)),
    # Only a manager of the team decides on discounts; the engineer is refused.
    "quotes:approve": (
        "POST",
        lambda c: {"pk": c["revision"].pk},
        lambda c: {},
        sales(403, manager=400, catalog=404),
    ),
    "quotes:reject": (
        "POST",
        lambda c: {"pk": c["revision"].pk},
        lambda c: {},
        sales(403, manager=400, catalog=404),
    ),
    # No PDF rendered yet: 409 with a message, for those who may see the quote.
    "quotes:pdf": ("GET", lambda c: {"pk": c["revision"].pk}, None, sales(409, catalog=404)),
    "quotes:pdf_status": ("GET", lambda c: {"pk": c["revision"].pk}, None, sales(200, catalog=404)),
    "quotes:pdf_render": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(302, catalog=404)),
    "quotes:pdf_retry": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(302, catalog=404)),
    "quotes:pdf_internal": ("GET", lambda c: {"pk": c["revision"].pk}, None, sales(200, catalog=404)),
    "quotes:xlsx": ("GET", lambda c: {"pk": c["revision"].pk}, None, sales(200, catalog=404)),
    "quotes:bundle": ("GET", lambda c: {"pk": c["revision"].pk}, None, sales(200, catalog=404)),
    # Attaching a measured bench result: editors of the quote; an empty POST is a 400 naming the file.
    "quotes:benchmark": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(400, catalog=404)),
    # The sales workflow (issue 18).  Revising opens the configurator for editors only.
    "quotes:configure": ("GET", lambda c: {"pk": c["revision"].pk}, None, sales(200, catalog=404)),
    "quotes:configure_save": (
        "POST",
        None,
        lambda c: {"revision": c["revision"].pk, "request_json": "{not json"},
        sales(400, catalog=404),
    ),
    "quotes:clone": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(400, catalog=404)),
    # Creating a link sends the draft quote (R1 is issued); the quote page shows the link once.  (The
    # seeded 4 x A3's NIC cards on request are listed as excluded from the totals; only a server,
    # switch, optics or rack line on request needs approval before it is sent.)
    "quotes:share_create": (
        "POST",
        lambda c: {"pk": c["revision"].pk},
        lambda c: {},
        sales(302, catalog=404),
    ),
    "quotes:share_revoke": (
        "POST",
        lambda c: {"pk": _share(c, "to revoke")[0].pk},
        lambda c: {},
        sales(302, catalog=404),
    ),
    "quotes:replan": ("POST", lambda c: {"pk": c["revision"].pk}, lambda c: {}, sales(302, catalog=404)),
    # The pipeline is the managers'.
    "quotes:pipeline": ("GET", None, None, sales(403, manager=200, other_team=403)),
    "quotes:pipeline_csv": ("GET", None, None, sales(403, manager=200, other_team=403)),
    "quotes:notifications": ("GET", None, None, sales(200, other_team=200)),
    "quotes:price_impact": ("GET", None, None, sales(200, other_team=200)),
    # The customer's pages need no log-in: the token is the key, for everyone alike.  The PDF
    # is not rendered here (404); empty acceptance and question forms are 400s with a message.
    "quotes:share_page": ("GET", lambda c: {"token": _share(c)[1]}, None, everyone(200)),
    "quotes:share_pdf": ("GET", lambda c: {"token": _share(c)[1]}, None, everyone(404)),
    "quotes:share_accept": ("POST", lambda c: {"token": _share(c)[1]}, lambda c: {}, everyone(400)),
    "quotes:share_question": ("POST", lambda c: {"token": _share(c)[1]}, lambda c: {}, everyone(400)),
}


def _share(c, name="customer"):
    """A customer link to the context's revision (one per name and context): (link, token)."""
    key = f"share {name}"
    if key not in c:
        import datetime as dt
        import secrets

        from django.utils import timezone

        from quotes.workflow.models import ShareLink, token_digest

        token = secrets.token_urlsafe(32)
        link = ShareLink.objects.create(
            revision=c["revision"],
            token_sha256=token_digest(token),
            created_by=c["users"]["engineer"],
            expires_at=timezone.now() + dt.timedelta(days=1),
        )
        c[key] = (link, token)
    return c[key]


ADMIN = {
    "/admin/": {"anonymous": 302, "engineer": 302, "engineer2": 302, "manager": 302, "catalog": 200},
    "/admin/catalog/llmmodel/": {
        "anonymous": 302,
        "engineer": 302,
        "engineer2": 302,
        "manager": 302,
        "catalog": 200,
    },
    "/admin/quotes/quote/": {
        "anonymous": 302,
        "engineer": 302,
        "engineer2": 302,
        "manager": 302,
        "catalog": 403,
    },
    # The calibration set is the catalog admin's: it sees the measured benchmarks and the promoted
    # measurements; the sales roles are not staff and never reach the admin.
    "/admin/quotes/measuredbenchmark/": {
        "anonymous": 302,
        "engineer": 302,
        "engineer2": 302,
        "manager": 302,
        "catalog": 200,
    },
    "/admin/quotes/promotedmeasurement/": {
        "anonymous": 302,
        "engineer": 302,
        "engineer2": 302,
        "manager": 302,
        "catalog": 200,
    },
}


def url_names(patterns=None, namespace=None):
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            ns = p.namespace or namespace
            if ns == "admin":
                continue
            yield from url_names(p.url_patterns, ns)
        elif isinstance(p, URLPattern) and p.name:
            yield f"{namespace}:{p.name}" if namespace else p.name


def test_every_url_is_in_the_matrix():
    assert set(url_names()) - set(MATRIX) == set(), "add the new URL to MATRIX with its status per role"
    assert set(MATRIX) - set(url_names()) == set(), "MATRIX names a URL that no longer exists"


@pytest.fixture
def ctx(catalog, users):
    from configurator.planning.quoting import plan_for_quote
    from quotes.services.quotes import quote_create_from_configuration

    resolved, result, prices, usd_rate, currency = plan_for_quote(REQUEST)
    quote = quote_create_from_configuration(
        by=users["engineer"], customer="Matrix Bank", request_json=REQUEST, resolved_json=resolved,
        result_json=result, prices_json=prices, usd_rate=usd_rate, currency=currency, language="en",
    )  # fmt: skip
    quote = quote if isinstance(quote, Quote) else quote[0]
    return {"quote": quote, "revision": quote.revisions.order_by("index").last(), "users": users}


def _status(client, method, url, data):
    if method == "GET":
        return client.get(url).status_code, None
    if method == "POST_JSON":
        r = client.post(url, data=json.dumps(data or {}), content_type="application/json")
        return r.status_code, None
    r = client.post(url, data or {})
    return r.status_code, r.get("Location")


@pytest.mark.parametrize("role", ROLES)
def test_every_url_answers_each_role_as_expected(client, ctx, role):
    if role != "anonymous":
        client.force_login(ctx["users"][role])
    failures = []
    for name, (method, kwargs, data, expected) in MATRIX.items():
        url = reverse(name, kwargs=kwargs(ctx) if kwargs else None)
        if name == "configurator:preset":
            url += "?scenario=finance-research"
        status, _ = (None, None)
        response = (
            client.get(url)
            if method == "GET"
            else client.post(url, data=json.dumps(data(ctx)), content_type="application/json")
            if method == "POST_JSON"
            else client.post(url, data(ctx) if data else {})
        )
        status = response.status_code
        want = expected[role]
        if want == LOGIN:
            ok = status == 302 and "/accounts/login/" in response["Location"]
        else:
            ok = status == want
        if not ok:
            failures.append(f"{name} ({method}) as {role}: got {status}, expected {want}")
        if name == "logout" and role != "anonymous":
            client.force_login(ctx["users"][role])
    for url, expected in ADMIN.items():
        status = client.get(url).status_code
        if status != expected[role]:
            failures.append(f"{url} as {role}: got {status}, expected {expected[role]}")
    assert not failures, "\n".join(failures)


def test_engineer_of_another_team_cannot_reach_a_quote_by_number_or_id(client, ctx):
    client.force_login(ctx["users"]["engineer2"])
    quote = ctx["quote"]
    assert client.get(reverse("quotes:detail", kwargs={"pk": quote.pk})).status_code == 404
    listing = client.get(reverse("quotes:list"), {"q": quote.number}).content.decode()
    assert reverse("quotes:detail", kwargs={"pk": quote.pk}) not in listing
    assert "Matrix Bank" not in listing
    assert client.get(reverse("quotes:xlsx", kwargs={"pk": ctx["revision"].pk})).status_code == 404
