"""The instance's own pages (the dashboard's live preview) may use any active widget id; other origins may not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.http import HttpResponse
from django.test import Client

from backend.widget.models import WidgetId
from tests.factories import GuruFactory

pytestmark = pytest.mark.django_db

OWN = "http://testserver"  # the Django test client's host


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def widget() -> WidgetId:
    return WidgetId.objects.create(guru=GuruFactory(), allowed_origins=["https://docs.example.com"])


def get_guru(key: str, **headers: str) -> HttpResponse:
    return Client().get("/widget/guru/", headers={"Authorization": key, **headers})  # type: ignore[no-any-return]


def test_own_origin_is_allowed_without_being_listed(widget: WidgetId) -> None:
    response = get_guru(widget.key, Origin=OWN)
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == OWN


def test_same_origin_get_without_origin_header(widget: WidgetId) -> None:
    # Browsers omit Origin on same-origin GETs but always send Sec-Fetch-Site, which no page script can set.
    response = get_guru(widget.key, **{"Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 200 and "Access-Control-Allow-Origin" not in response


@pytest.mark.parametrize("headers", [
    {},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "none"},
    {"Origin": "https://testserver"},  # another scheme is another origin
    {"Origin": "http://testserver:8080"},
    {"Origin": "http://testserver.evil.com"},
    {"Origin": "http://evil.testserver"},
    {"Origin": "null", "Sec-Fetch-Site": "same-origin"},
    {"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"},  # the Origin header wins
])
def test_everything_else_is_still_refused(widget: WidgetId, headers: dict[str, str]) -> None:
    response = get_guru(widget.key, **headers)
    assert response.status_code == 403 and response.json()["code"] == "origin_not_allowed"
    assert "Access-Control-Allow-Origin" not in response


def test_a_spoofed_host_is_refused(widget: WidgetId) -> None:
    response = Client().get("/widget/guru/", headers={"Authorization": widget.key, "Origin": "http://evil.com"},
                            HTTP_HOST="evil.com")
    assert response.status_code == 400  # not in ALLOWED_HOSTS


def test_inactive_widgets_stay_refused_on_the_own_origin(widget: WidgetId) -> None:
    WidgetId.objects.filter(pk=widget.pk).update(active=False)
    assert get_guru(widget.key, Origin=OWN).status_code == 401
    assert get_guru("not-a-key", Origin=OWN).status_code == 401


def test_own_origin_does_not_open_preflights_to_anyone(widget: WidgetId) -> None:
    # Same-origin requests are never preflighted, so preflights keep answering only listed origins.
    response = Client().options("/widget/ask/", headers={"Origin": "https://evil.example",
                                                         "Access-Control-Request-Method": "POST"})
    assert response.status_code == 403
