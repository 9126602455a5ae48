import pytest
from django.urls import reverse

from configurator.services import preset_data
from tests.configurator.test_why_on_demand import P8D8, _htmx, engineer_client  # noqa

pytestmark = pytest.mark.django_db


def test_dbg(engineer_client):
    data = {**preset_data(None), **P8D8}
    page = engineer_client.post("/", data).content.decode()
    res = page.split('<section id="results"', 1)[1]
    body = _htmx(engineer_client, reverse("configurator:update"), data).content.decode()
    open("/tmp/fix23_page.html", "w").write(res)
    open("/tmp/fix23_upd.html", "w").write(body)
