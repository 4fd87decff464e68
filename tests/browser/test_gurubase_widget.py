"""Gurubase's published widget script, in Chromium, on a host page of another origin, against our live server.

The script is Gurubase's (Gurubase/gurubase-widget `src/widget.js`) and may not be committed here: point
OPENGURU_GURUBASE_WIDGET_JS at a copy (the test skips without one). The libraries it loads from CDNs (marked,
DOMPurify, highlight.js) come from Debian's packages (apt-get install libjs-marked node-dompurify
libjs-highlight.js); the test never reaches the internet. Both hosts get names (Chromium maps them to 127.0.0.1)
because the newer build refuses icon URLs on localhost addresses.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import RecordedRequest, ScriptedReply
from backend.answering.models import Question
from backend.gurus.examples import guru_example_add
from backend.gurus.models import Guru
from backend.widget.models import WidgetId
from tests.browser.widget_fixtures import FIRST_QUESTION, FOLLOW_UP, FOLLOW_UP_ANSWER, HostSite, WidgetScript
from tests.fakes.openai_server import OpenAIFakeServer
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Request, Response, Route

expect = playwright_sync_api().expect

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCRIPT = os.environ.get("OPENGURU_GURUBASE_WIDGET_JS", "")
APP_HOST, SITE_HOST = "guru.test", "docs.test"
CDN_FILES = {  # what the widget fetches from CDNs → Debian's copies
    "marked/marked.min.js": Path("/usr/share/javascript/marked/marked.min.js"),
    "purify.min.js": Path("/usr/share/nodejs/dompurify/dist/purify.js"),
    "highlight.min.js": Path("/usr/share/javascript/highlight.js/highlight.min.js"),
}
# highlight.js 9 (Debian's) names highlightElement highlightBlock.
HLJS_SHIM = b"\nif (window.hljs && !hljs.highlightElement) hljs.highlightElement = hljs.highlightBlock;\n"
# Debian 12's DOMPurify security patch (2.4.1+deb12u1) checks an undefined `shadowNode` in sanitize(): drop it.
PURIFY_BUG = b"if (shadowNode.__depth >= MAX_NESTING_DEPTH || numberIsNaN(shadowNode.__depth)) {"
EXAMPLES = ["How many times is a task retried at most?", "Which brokers does Celery support?",
            "How do I schedule a periodic task?", FIRST_QUESTION]
CLEAN_FOLLOW_UP = "At most `max_retries` times [1]."
BUILD = Path(SCRIPT).stem  # names the screenshots, so two builds' runs keep theirs
VOTES = b"record_vote" in Path(SCRIPT).read_bytes() if SCRIPT and Path(SCRIPT).is_file() else False  # newer builds

if not SCRIPT or not Path(SCRIPT).is_file():
    pytest.skip("GURUBASE WIDGET TEST SKIPPED: set OPENGURU_GURUBASE_WIDGET_JS to a copy of Gurubase's src/widget.js "
                "(it may not be committed here)", allow_module_level=True)
if missing := [str(path) for path in CDN_FILES.values() if not path.is_file()]:
    pytest.skip(f"GURUBASE WIDGET TEST SKIPPED: {', '.join(missing)} missing (apt-get install libjs-marked "
                "node-dompurify libjs-highlight.js)", allow_module_level=True)


class InertScript(WidgetScript):
    """The widget tests' script, but a follow-up without raw HTML: the 2025 build puts marked's output in
    innerHTML unsanitised, so `<img src=x>` would be a (Gurubase-side) failed request on the host page."""

    def next(self, request: RecordedRequest) -> ScriptedReply:
        reply = super().next(request)
        return dataclasses.replace(reply, text=CLEAN_FOLLOW_UP) if reply.text == FOLLOW_UP_ANSWER else reply


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Chromium resolving the two test host names to 127.0.0.1 (overrides tests.support.browser's fixture)."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import _ignore_loop_in_django_checks

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing")
    manager = sync_playwright().start()
    import asyncio

    undo = _ignore_loop_in_django_checks(asyncio.get_running_loop())
    rules = f"--host-resolver-rules=MAP {APP_HOST} 127.0.0.1, MAP {SITE_HOST} 127.0.0.1"
    try:
        launched = manager.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, rules])
        yield launched
        launched.close()
    finally:
        manager.stop()
        undo()


def _cdn(route: Route) -> None:
    """Serve the widget's CDN libraries from local copies; stylesheets (themes) as empty CSS."""
    path = urlsplit(route.request.url).path
    for suffix, local in CDN_FILES.items():
        if path.endswith(suffix):
            body = local.read_bytes().replace(PURIFY_BUG, b"if (false) {")
            body += HLJS_SHIM if suffix == "highlight.min.js" else b""
            route.fulfill(status=200, body=body, content_type="application/javascript")
            return
    if path.endswith(".css"):
        route.fulfill(status=200, body=b"", content_type="text/css")
        return
    route.abort()


@dataclasses.dataclass
class Traffic:
    failed: list[str] = dataclasses.field(default_factory=list)
    urls: list[str] = dataclasses.field(default_factory=list)


def watch(page: Page) -> Traffic:
    """Every request the page makes, and every one that failed or got an error status."""
    traffic = Traffic()

    def on_response(response: Response) -> None:
        if response.status >= 400:
            traffic.failed.append(f"{response.status} {response.request.method} {response.url}")

    def on_failed(request: Request) -> None:
        traffic.failed.append(f"failed {request.method} {request.url}: {request.failure}")

    page.on("request", lambda request: traffic.urls.append(f"{request.method} {request.url}"))
    page.on("response", on_response)
    page.on("requestfailed", on_failed)
    for cdn in ("https://cdn.jsdelivr.net/**", "https://cdnjs.cloudflare.com/**", "https://unpkg.com/**"):
        page.route(cdn, _cdn)
    return traffic


def named(url: str, host: str) -> str:
    return url.replace("127.0.0.1", host, 1)


@pytest.fixture
def gurubase_page(settings: SettingsWrapper, asgi_live_server: str, widget_guru: Guru,
                  widget_llm: OpenAIFakeServer, host_sites: Callable[[], HostSite]) -> tuple[str, WidgetId]:
    """A host page on docs.test embedding Gurubase's script, its base URL our server's /api on guru.test."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, APP_HOST]
    widget_llm.script = InertScript()
    for text in EXAMPLES:
        guru_example_add(guru=widget_guru, text=text)
    site = host_sites()
    origin, app = named(site.origin, SITE_HOST), named(asgi_live_server, APP_HOST)
    widget = WidgetId.objects.create(guru=widget_guru, allowed_origins=[origin])
    shutil.copyfile(SCRIPT, site.root / "gurubase-widget.js")
    # Both spellings of the base URL attribute: the 2025 build reads data-baseUrl, the newer data-base-url.
    (site.root / "index.html").write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Host docs</title></head><body>"
        "<h1>Host documentation</h1>"
        f"<script async src='/gurubase-widget.js' id='guru-widget-id' data-widget-id='{widget.key}' "
        f"data-baseUrl='{app}/api' data-base-url='{app}/api' data-light-mode='light'></script></body></html>",
        encoding="utf-8")
    return f"{origin}/index.html", widget


def ask(page: Page, question: str) -> None:
    box = page.locator("#questionInput")
    box.fill(question)
    box.press("Enter")


def test_gurubase_widget_works_fully_against_us(page: Page, gurubase_page: tuple[str, WidgetId],
                                                page_errors: list[str], screenshot: Callable[..., Path]) -> None:
    url, widget = gurubase_page
    traffic = watch(page)
    page.goto(url)
    page.locator(".chat-button").click()
    ask(page, FIRST_QUESTION)

    first = page.locator(".bot-message").first
    try:
        expect(first.locator(".markdown-content")).to_contain_text("self.retry()", timeout=30_000)
    except AssertionError as exc:
        screenshot(f"{BUILD}-no-answer")
        raise AssertionError(f"no answer shown; errors={page_errors} failed={traffic.failed}") from exc
    expect(first.locator(".reference-item").first).to_be_visible(timeout=30_000)
    expect(page.locator("[class*='trust-score']").first).to_be_visible()
    expect(page.locator(".example-question").first).to_be_visible()
    suggestions = page.locator(".example-question").all_inner_texts()
    assert FIRST_QUESTION not in suggestions and set(suggestions) <= set(EXAMPLES), suggestions
    icons = first.locator(".reference-icon")
    loaded = icons.evaluate_all("(imgs) => imgs.map(i => [i.currentSrc, i.complete && i.naturalWidth > 0])")
    assert loaded and all(ok for _, ok in loaded), loaded
    assert all(src.startswith(f"http://{APP_HOST}:") and src.endswith(".svg") for src, _ in loaded), loaded
    screenshot(f"{BUILD}-first-answer")

    if VOTES:  # the newer build shows thumbs only when fetch_existing says can_receive_feedback
        upvote = first.locator(".vote-button.upvote")
        with page.expect_response(lambda r: r.url.endswith("/record_vote/") and r.request.method == "POST") as sent:
            upvote.click()
        assert sent.value.status == 200
        voted = Question.objects.filter(guru=widget.guru).order_by("created_at").first()
        assert voted is not None and voted.feedback == 1 and voted.slug == sent.value.request.post_data_json[
            "content_slug"]

    ask(page, FOLLOW_UP)
    expect(page.locator(".bot-message")).to_have_count(2, timeout=30_000)
    second = page.locator(".bot-message").last
    # A one-paragraph answer: the widget renders nothing before a line break, so our stream opens with one.
    expect(second.locator("#bot-response")).to_contain_text("At most max_retries times", timeout=30_000)
    expect(second.locator(".reference-item").first).to_be_visible(timeout=30_000)
    follow_up = Question.objects.filter(guru=widget.guru, parent__isnull=False).get()
    assert follow_up.parent is not None and follow_up.parent.slug == Question.objects.filter(
        guru=widget.guru).order_by("created_at").first().slug  # type: ignore[union-attr]
    screenshot(f"{BUILD}-follow-up")

    assert not traffic.failed, traffic.failed
    assert not page_errors, page_errors
    assert any("/follow_up/examples/" in request for request in traffic.urls)

