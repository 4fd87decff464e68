"""The embeddable widget in Chromium, on a host page served from another origin than the app.

The host page has hostile CSS and embeds `<script src="{app}/widget.js">`; the widget runs in a Shadow DOM,
streams answers from the real ASGI app (the LLM is the wire-level OpenAI fake, streaming slowly), keeps the
conversation in sessionStorage across navigation, and refuses to work on an origin its widget id does not allow.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache

from backend.answering.models import Question
from backend.gurus.models import Guru
from backend.pipeline.sanitize import neutralise_line
from backend.widget.models import WidgetId
from tests.browser.widget_fixtures import (
    CODE,
    FIRST_QUESTION,
    FOLLOW_UP,
    FOLLOW_UP_SHOWN,
    HOSTILE_CSS,
    MOBILE,
    OFF_TOPIC,
    RED,
    REFUSED,
    XSS_IMG,
    HostSite,
)
from tests.browser.widget_support import (
    ask_in_widget,
    growth_steps,
    shadow_active,
    stored_conversation,
    stream_bodies,
    style_of,
    wait_finished,
)
from tests.factories import GuruFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.support.browser import clipboard_text, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

# The model's title holds a tag: it is shown (and stored) neutralised, inert even where markdown is rendered.
FOLLOW_UP_TITLE = neutralise_line(FOLLOW_UP_SHOWN)

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# ---- tests -----------------------------------------------------------------------------------------------------


def test_widget_streams_cited_answers_and_keeps_the_conversation(
    page: Page, asgi_live_server: str, widget_guru: Guru, widget_llm: OpenAIFakeServer, page_errors: list[str],
    host_sites: Callable[[], HostSite], screenshot: Callable[..., Path],
) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[site.origin])
    url = site.page("index.html", asgi_live_server, widget.key)
    site.page("other.html", asgi_live_server, widget.key)
    assert site.origin != asgi_live_server
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.origin)
    bodies = stream_bodies(page)
    page.goto(url)

    # The host page's CSS applies to the host page but not inside the widget.
    launcher = page.get_by_role("button", name="Ask AI")
    expect(launcher).to_be_visible()
    assert style_of(page.locator("h1"), "color") == RED
    assert style_of(launcher, "font-size") == "15px" and style_of(launcher, "color") != RED
    expect(launcher).to_have_attribute("aria-expanded", "false")

    # Open: focus moves into the panel; the guru's name, intro and colour come from GET /widget/guru/.
    launcher.click()
    dialog = page.get_by_role("dialog", name="Celery Guru")
    expect(dialog).to_be_visible()
    expect(launcher).to_have_attribute("aria-expanded", "true")
    assert shadow_active(page) == "og-input"
    expect(page.locator(".intro")).to_have_text("Ask me about Celery tasks.\n<b>Not bold</b> & friends.")
    assert style_of(page.locator(".og"), "--accent").strip() == "#7c3aed"
    assert style_of(page.locator(".intro"), "font-size") == "15px"

    # 1. The answer streams in visibly, then sources and the trust meter.
    ask_in_widget(page, FIRST_QUESTION, 1)
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    first = wait_finished(page, 1)
    steps = growth_steps(page)
    assert steps >= 2, f"the answer did not grow incrementally: {steps} growth steps"
    expect(first.locator(".q")).to_have_text(FIRST_QUESTION)
    expect(first.locator(".md code.language-python")).to_have_text(CODE)
    expect(first.locator(".md li")).to_have_count(2)
    source = first.locator(".refs li").first
    expect(source.locator(".ref-title")).to_contain_text("Celery manual")
    link = source.locator("a.ref-title")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", re.compile(r"\bnoopener\b"))
    assert (link.get_attribute("href") or "").startswith(asgi_live_server + "/")  # resolved against the app
    expect(first.locator(".trust-value")).to_have_text(re.compile(r"^9\d%$"))  # a 0.9 grade, calibrated
    expect(first.locator(".trust")).to_have_attribute("data-level", "high")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    assert style_of(first.locator(".md p").first, "color") != RED
    # A citation scrolls to its source inside the widget; the host page's URL does not change.
    first.locator(".md a.cite").first.click()
    expect(source).to_have_class(re.compile(r"\bflash\b"))
    assert page.url == url
    # The copy button that markdown.js adds works inside the shadow root.
    copy = first.locator(".code-copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard_text(page, CODE) == CODE
    # Its fallback (no Clipboard API) borrows the focus for a hidden textarea; the widget takes it back.
    page.evaluate("async () => { await navigator.clipboard.writeText('');"
                  " Object.defineProperty(window, 'isSecureContext', {value: false}); }")
    expect(copy).to_have_text("Copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard_text(page, CODE) == CODE
    assert shadow_active(page) == "code-copy"
    screenshot("desktop-open")

    # 2. A follow-up keeps the session; HTML in the question and the answer stays inert text.
    ask_in_widget(page, FOLLOW_UP, 2)
    second = wait_finished(page, 2)
    expect(second.locator(".q")).to_have_text(FOLLOW_UP_TITLE)
    expect(second.locator(".md")).to_contain_text(XSS_IMG)
    expect(second.locator(".md")).to_contain_text("x stay inert.")
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".turn img, .turn [onerror]").count() == 0
    hrefs = page.locator(".md a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
    assert hrefs and all(h.startswith(("#og-ref-", "http://", "https://")) for h in hrefs), hrefs

    session_id = str(Question.objects.filter(guru=widget_guru).order_by("pk").first().binge_id)  # type: ignore[union-attr]
    assert [body["question"] for body in bodies] == [FIRST_QUESTION, FOLLOW_UP]
    assert "session_id" not in bodies[0] and bodies[1]["session_id"] == session_id
    stored = stored_conversation(page, widget.key)
    assert stored["sessionId"] == session_id
    assert [turn["q"] for turn in stored["turns"]] == [FIRST_QUESTION, FOLLOW_UP_TITLE]
    assert stored["turns"][0]["text"].startswith("Call **`self.retry()`** inside a *bound* task [1].")
    assert stored["turns"][0]["refs"][0]["title"].startswith("Celery manual")

    # 3. After a reload the conversation is rendered again from sessionStorage and the next question continues it.
    page.reload()
    page.get_by_role("button", name="Ask AI").click()
    expect(page.locator(".turn")).to_have_count(2)
    expect(page.locator(".turn .q")).to_have_text([FIRST_QUESTION, FOLLOW_UP_TITLE])
    expect(page.locator(".turn").first.locator(".md code.language-python")).to_have_text(CODE)
    expect(page.locator(".turn").first.locator(".trust-value")).to_have_text(re.compile(r"^9\d%$"))
    expect(page.locator(".turn").first.locator(".refs li")).not_to_have_count(0)
    assert page.locator(".turn img").count() == 0 and page.evaluate("window.__pwned") is None
    ask_in_widget(page, OFF_TOPIC, 3)
    third = wait_finished(page, 3)
    expect(third.locator(".trust")).to_have_attribute("data-level", "none")
    expect(third.locator(".trust-badge")).to_have_text("Not covered by the sources")
    expect(third.locator(".refs li")).to_have_count(0)
    assert bodies[2] == {"question": OFF_TOPIC, "session_id": session_id}

    # Another page of the same site: still the same conversation.
    page.goto(f"{site.origin}/other.html")
    page.get_by_role("button", name="Ask AI").click()
    expect(page.locator(".turn")).to_have_count(3)

    # Focus trap: Tab from the last control wraps to the first, Shift+Tab back to the last.
    page.get_by_label("Your question").focus()
    page.keyboard.press("Tab")
    assert shadow_active(page) == "send"
    page.keyboard.press("Tab")
    assert page.evaluate("document.getElementById('openguru-widget').shadowRoot.activeElement.textContent") == "New"
    page.keyboard.press("Shift+Tab")
    assert shadow_active(page) == "send"

    # Esc closes and focus returns to the launcher.
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()
    assert shadow_active(page) == "launcher"

    # Mobile: the panel takes the whole screen.
    page.set_viewport_size(MOBILE)
    page.get_by_role("button", name="Ask AI").click()
    box = page.get_by_role("dialog").bounding_box()
    assert box and box["x"] == 0 and box["y"] == 0 and box["width"] == MOBILE["width"]
    assert box["height"] == MOBILE["height"]
    screenshot("mobile-open")
    assert page_errors == []


def test_widget_refuses_an_origin_that_is_not_allowed(
    page: Page, asgi_live_server: str, widget_guru: Guru, widget_llm: OpenAIFakeServer,
    host_sites: Callable[[], HostSite], screenshot: Callable[..., Path],
) -> None:
    allowed, other = host_sites(), host_sites()
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[allowed.origin])
    bodies = stream_bodies(page)
    page.goto(other.page("index.html", asgi_live_server, widget.key))
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("alert").filter(has_text=REFUSED)).to_be_visible()
    expect(page.get_by_label("Your question")).to_be_disabled()
    page.evaluate("window.OpenGuruWidget.ask('How do I retry a task?')")
    expect(page.locator(".turn")).to_have_count(0)
    screenshot("refused")

    # A stream refused on its own (the origin was dropped after the page loaded) says the same, with no answer.
    widget.allowed_origins = [other.origin]
    widget.save()
    page.reload()
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("dialog", name="Celery Guru")).to_be_visible()
    widget.allowed_origins = [allowed.origin]
    widget.save()
    ask_in_widget(page, FIRST_QUESTION, 1)
    turn = wait_finished(page, 1)
    expect(turn.locator(".notice.error")).to_have_text(REFUSED)
    expect(turn.locator(".md")).to_be_hidden()
    expect(page.locator(".banner")).to_have_text(REFUSED)
    assert len(bodies) == 1
    assert Question.objects.count() == 0
    assert widget_llm.script.requests == []


def test_widget_rate_limit_and_network_errors(
    page: Page, asgi_live_server: str, widget_guru: Guru, host_sites: Callable[[], HostSite],
) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[site.origin], per_ip_rate_limit_per_minute=1)
    page.goto(site.page("index.html", asgi_live_server, widget.key))
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("dialog", name="Celery Guru")).to_be_visible()

    # The server cannot be reached at all: a network error, not a refusal.
    page.route(f"{asgi_live_server}/**", lambda route: route.abort())
    ask_in_widget(page, "hello", 1)
    turn = wait_finished(page, 1)
    expect(turn.locator(".notice.error")).to_have_text(
        "Could not reach the server. Check your connection and try again.")
    expect(page.locator(".banner")).to_be_hidden()
    page.unroute(f"{asgi_live_server}/**")

    refused = None
    for number in range(2, 5):  # a minute boundary may reset the counter once
        ask_in_widget(page, f"hello number {number}", number)
        turn = wait_finished(page, number)
        if turn.locator(".notice.error").count():
            refused = turn.locator(".notice.error")
            break
    assert refused is not None, "no question was refused"
    expect(refused).to_have_attribute("role", "alert")
    wait = re.search(r"^Too many questions right now\. Please wait (\d+) seconds?", refused.text_content() or "")
    assert wait, refused.text_content()
    if int(wait.group(1)) >= 3:  # the send button counts down until Retry-After has passed
        expect(page.locator(".send")).to_be_disabled()
        expect(page.locator(".send")).to_have_text(re.compile(r"Wait \d+ s"))


def test_widget_options_and_dark_mode(
    page: Page, asgi_live_server: str, host_sites: Callable[[], HostSite], page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    guru = GuruFactory(slug="docs", name="Docs Guru", base_color="#7c3aed")
    site = host_sites()
    widget = WidgetId.objects.create(guru=guru, allowed_origins=[site.origin])
    (site.root / "icon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 10 10'>"
                                        "<circle cx='5' cy='5' r='5' fill='#0a7d33'/></svg>", encoding="utf-8")
    options = ("data-text='Help me' data-name='Docs helper' data-bg-color='#0a7d33' data-light-mode='dark' "
               "data-position='bottom-left' data-margins='{\"bottom\": 40, \"right\": 30}' data-icon-url='icon.svg'")
    # A strict CSP on the host page: no inline styles (bar its own, by hash), scripts and requests only to the app.
    css_hash = base64.b64encode(hashlib.sha256(HOSTILE_CSS.encode()).digest()).decode()
    csp = (f"default-src 'none'; script-src {asgi_live_server}; connect-src {asgi_live_server}; "
           f"img-src 'self' {asgi_live_server}; style-src 'sha256-{css_hash}'")
    head = f"<meta http-equiv='Content-Security-Policy' content=\"{csp}\">"
    page.goto(site.page("index.html", asgi_live_server, widget.key, options, head))
    launcher = page.get_by_role("button", name="Help me")
    expect(launcher).to_be_visible()
    box = launcher.bounding_box()
    assert box and box["x"] == 30 and round(box["y"] + box["height"]) == 900 - 40
    launcher.click()
    dialog = page.get_by_role("dialog", name="Docs helper")
    expect(dialog).to_be_visible()
    expect(page.locator(".icon")).to_be_visible()
    assert (page.locator(".icon").get_attribute("src") or "") == f"{site.origin}/icon.svg"
    assert style_of(page.locator(".og"), "--accent").strip() == "#0a7d33"
    assert style_of(page.locator(".panel"), "background-color") == "rgb(22, 25, 30)"
    panel_box = dialog.bounding_box()
    assert panel_box and panel_box["x"] == 30
    screenshot("dark-bottom-left")

    # auto (the default) follows the system colour scheme.
    page.emulate_media(color_scheme="dark")
    page.goto(site.page("auto.html", asgi_live_server, widget.key))
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("dialog", name="Docs Guru")).to_be_visible()
    assert style_of(page.locator(".panel"), "background-color") == "rgb(22, 25, 30)"
    page.emulate_media(color_scheme="light")
    assert style_of(page.locator(".panel"), "background-color") == "rgb(255, 255, 255)"
    page.keyboard.press("Escape")
    assert shadow_active(page) == "launcher"
    assert page_errors == []


def test_widget_feedback_votes_on_an_answer(
    page: Page, asgi_live_server: str, widget_guru: Guru, widget_llm: OpenAIFakeServer, page_errors: list[str],
    host_sites: Callable[[], HostSite], screenshot: Callable[..., Path],
) -> None:
    site = host_sites()
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[site.origin])
    page.goto(site.page("index.html", asgi_live_server, widget.key, "data-light-mode='dark'"))
    page.get_by_role("button", name="Ask AI").click()
    expect(page.get_by_role("dialog", name="Celery Guru")).to_be_visible()
    ask_in_widget(page, FIRST_QUESTION, 1)
    expect(page.locator(".turn").first.locator(".vote")).to_be_hidden()  # not while the answer streams
    turn = wait_finished(page, 1)
    question = Question.objects.get(guru=widget_guru)
    up = turn.get_by_role("button", name="Helpful", exact=True)
    down = turn.get_by_role("button", name="Not helpful")
    status = turn.get_by_role("group", name="Rate this answer").get_by_role("status")
    expect(up).to_have_attribute("aria-pressed", "false")

    up.click()
    expect(status).to_have_text("Thanks for your feedback!")
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(down).to_have_attribute("aria-pressed", "false")
    question.refresh_from_db()
    assert question.feedback == 1
    assert style_of(up, "border-color") != style_of(down, "border-color")  # the chosen one stands out
    screenshot("voted-dark")

    # Clicking the chosen one again clears the vote.
    up.click()
    expect(status).to_have_text("Vote removed.")
    expect(up).to_have_attribute("aria-pressed", "false")
    question.refresh_from_db()
    assert question.feedback is None

    # A thumbs down survives a page navigation (the vote is kept with the conversation in sessionStorage).
    down.click()
    expect(down).to_have_attribute("aria-pressed", "true")
    question.refresh_from_db()
    assert question.feedback == -1
    page.reload()
    page.get_by_role("button", name="Ask AI").click()
    restored = page.locator(".turn").first
    expect(restored.get_by_role("button", name="Not helpful")).to_have_attribute("aria-pressed", "true")
    expect(restored.get_by_role("button", name="Helpful", exact=True)).to_have_attribute("aria-pressed", "false")
    assert page_errors == []
