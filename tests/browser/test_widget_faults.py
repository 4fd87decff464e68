"""The widget in Chromium when answering fails: a vanished conversation (now a 404 before the stream starts) starts
a new one, and a model failure shows the safe message with its error id (issue #12 items 3 and 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.models import Question
from backend.core.errors import PUBLIC_MESSAGES
from backend.gurus.models import Guru
from backend.widget.models import WidgetId
from tests.browser.widget_fixtures import FIRST_QUESTION, FOLLOW_UP, HostSite
from tests.browser.widget_support import ask_in_widget, stream_bodies, wait_finished
from tests.fakes.openai_server import OpenAIFakeServer
from tests.support.browser import playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

expect = playwright_sync_api().expect

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _open(page: Page, app: str, guru: Guru, host_sites: Callable[[], HostSite]) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=guru, allowed_origins=[site.origin])
    page.goto(site.page("index.html", app, widget.key))
    page.get_by_role("button", name="Ask AI").click()


def test_a_vanished_conversation_starts_a_new_one(
    page: Page, asgi_live_server: str, widget_guru: Guru, widget_llm: OpenAIFakeServer,
    host_sites: Callable[[], HostSite],
) -> None:
    bodies = stream_bodies(page)

    def forget_session(route: Route) -> None:
        body = route.request.post_data_json
        if body.get("session_id"):
            body["session_id"] = "00000000-0000-0000-0000-000000000000"
        route.continue_(post_data=json.dumps(body))

    page.route("**/widget/stream/", forget_session)
    _open(page, asgi_live_server, widget_guru, host_sites)
    for number, question in enumerate([FIRST_QUESTION, FOLLOW_UP, FOLLOW_UP], start=1):
        ask_in_widget(page, question, number)
        wait_finished(page, number)
    expect(page.locator(".turn").nth(1).locator(".notice")).to_contain_text("new conversation")
    assert ["session_id" in body for body in bodies] == [False, True, False]


def test_a_model_failure_shows_the_safe_message_and_its_error_id(
    page: Page, asgi_live_server: str, widget_guru: Guru, openai_server: OpenAIFakeServer,
    host_sites: Callable[[], HostSite], settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_LLM = openai_server.llm_settings()
    openai_server.script.push(*[ScriptedReply(status=500)] * 4)
    _open(page, asgi_live_server, widget_guru, host_sites)
    ask_in_widget(page, FIRST_QUESTION, 1)
    notice = wait_finished(page, 1).locator(".notice")
    expect(notice).to_contain_text(PUBLIC_MESSAGES["model_unavailable"], timeout=30_000)
    expect(notice).to_contain_text(f"(error id {Question.objects.get().error_id})")
