"""The analytics and settings pages in Chromium: charts drawn as inline SVG, no console errors, screenshots."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.utils import timezone

from backend.answering.citations import citations_record
from backend.answering.models import Channel, Question
from backend.gurus.models import Guru
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.support.browser import log_in_as, playwright_sync_api, save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
CHANNELS = [Channel.WEB, Channel.WEB, Channel.API, Channel.WIDGET, Channel.SLACK]


def _questions(guru: Guru) -> None:
    """A month of varied traffic (some quiet days) citing a few sources, one with a hostile title."""
    titles = ["Retrying tasks", "Choosing a broker", "Periodic tasks with beat", "<script>alert(1)</script>"]
    sources = [DataSourceFactory(guru=guru, title=title) for title in titles]
    noon = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0)
    for day in range(30):
        count = 0 if day in (5, 6, 12) else 3 + (day * 7) % 11
        rows = [
            Question(guru=guru, user_question="q", question="q", slug=f"q-{day}-{i}", content="a",
                     out_of_context=(i + day) % 5 == 0, trust_score=0.45 + ((i * 3 + day) % 10) / 20,
                     latency_ms=900 + 37 * i, channel=CHANNELS[(i + day) % 5], feedback=[1, None, -1, None][i % 4],
                     references=[{"n": 1, "source_id": sources[(i * day) % 4 if i % 3 else 0].pk}])
            for i in range(count)
        ]
        created = Question.objects.bulk_create(rows)
        Question.objects.filter(pk__in=[q.pk for q in created]).update(created_at=noon - timedelta(days=day))
        for question in created:
            question.created_at = noon - timedelta(days=day)
            citations_record(question, question.references)  # as the answer flow does


def test_analytics_page_draws_its_charts(page: Page, asgi_live_server: str, page_errors: list[str]) -> None:
    user = UserFactory(username="ana")
    guru = GuruFactory(slug="celery", name="Celery")
    guru.maintainers.add(user)
    _questions(guru)
    log_in_as(page, asgi_live_server, user)

    page.goto(f"{asgi_live_server}/dashboard/g/celery/analytics/")
    charts = page.locator("svg.chart[role=img]")
    expect(charts).to_have_count(5)
    for index in range(5):
        expect(charts.nth(index)).to_be_visible()
        assert charts.nth(index).bounding_box()["height"] > 100  # type: ignore[index]
    expect(page.locator("#chart-per-day rect, svg.chart-bars rect").first).to_be_visible()
    assert page.locator("svg.chart-bars").first.locator("rect").count() == 27  # 30 days, 3 of them quiet
    expect(page.get_by_text("<script>alert(1)</script>").first).to_be_visible()  # shown as text, not run
    save_screenshot(page, "dashboard-analytics-30-days")

    page.get_by_role("link", name="7 days").click()
    expect(page.get_by_role("img", name="Questions per day, last 7 days")).to_be_visible()
    save_screenshot(page, "dashboard-analytics-7-days")
    assert page_errors == []


def test_settings_pages_render(page: Page, asgi_live_server: str, page_errors: list[str]) -> None:
    user = UserFactory(username="root", is_staff=True)
    guru = GuruFactory(slug="celery", name="Celery")
    guru.maintainers.add(user)
    log_in_as(page, asgi_live_server, user)

    page.goto(f"{asgi_live_server}/dashboard/g/celery/settings/")
    page.get_by_label("Trust score threshold").fill("1.5")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".errorlist")).to_contain_text("less than or equal to 1")
    save_screenshot(page, "dashboard-settings-guru")

    page.goto(f"{asgi_live_server}/dashboard/settings/")
    page.get_by_label("Chunk size (tokens)").fill("200")
    page.get_by_role("button", name="Save", exact=True).click()  # not "Save chat model" of the provider form
    expect(page.locator(".message.warning")).to_contain_text("Split sizes changed")
    save_screenshot(page, "dashboard-settings-instance")
    assert page_errors == []


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] \
        and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


@pytest.mark.parametrize(("label", "viewport"), [("normal", {"width": 1280, "height": 900}),
                                                 ("narrow", {"width": 390, "height": 844})])
def test_the_cost_heading_has_its_own_card(
    page: Page, asgi_live_server: str, label: str, viewport: dict[str, int],
) -> None:
    user = UserFactory(username="ana")
    guru = GuruFactory(slug="celery", name="Celery")
    guru.maintainers.add(user)
    _questions(guru)
    log_in_as(page, asgi_live_server, user)
    page.set_viewport_size(viewport)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/analytics/")
    channels = page.locator("section.card", has=page.get_by_role("heading", name="Channels", exact=True))
    cost = page.get_by_role("heading", name="Cost", exact=True)
    expect(channels).to_have_count(1)
    expect(cost).to_be_visible()
    card, heading = channels.bounding_box(), cost.bounding_box()
    assert card is not None and heading is not None
    assert not _overlap(card, heading), (card, heading)
    cost_card = page.locator("section.card", has=cost)
    box = cost_card.bounding_box()
    assert box is not None and not _overlap(card, box) and box["y"] >= card["y"] + card["height"]
    expect(cost_card).to_contain_text("USD of model usage in this period")
    cost_card.scroll_into_view_if_needed()
    save_screenshot(page, f"dashboard-analytics-cost-{label}")
