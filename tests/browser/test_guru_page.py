"""The public guru page in Chromium against the real ASGI app: streamed cited answers, follow-ups, refusals."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.answering.models import Question
from backend.gurus.examples import guru_example_add
from backend.gurus.models import Guru
from backend.sources.models import SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.factories import GuruFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.fakes.pdfs import write_pdf
from tests.support.browser import playwright_sync_api, save_screenshot

if TYPE_CHECKING:
    from playwright.sync_api import Page, Request, Route

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

FULL_PAGE_STYLE = ".ask-form { position: static; }"  # a sticky box would cover the thread in a full-page capture
STREAMING = re.compile(r"\bstreaming\b")
SSE_JS = Path(__file__).resolve().parents[2] / "frontend" / "static" / "js" / "sse.js"

CORPUS = [
    ["Retrying tasks", "A task can be retried by calling self.retry() inside a bound task.",
     "The countdown argument sets how many seconds to wait before the retry.",
     "max_retries limits how many times a task is retried before it fails for good."],
    ["Choosing a broker", "Celery needs a message broker to send and receive messages.",
     "RabbitMQ and Redis are the supported brokers for production use.",
     "The broker URL is configured with the broker_url setting."],
]
FIRST_QUESTION = "How do I retry a task after a few seconds?"
FOLLOW_UP = "and how many times at most?"
OFF_TOPIC = "What is the capital of Peru?"
FIRST_ANSWER = (
    "Call **`self.retry()`** inside a *bound* task [1]. Two options matter:\n\n"
    "- `countdown`: how many seconds to wait before the retry [1]\n"
    "- `max_retries`: how many times the task is retried before it fails for good [1]\n\n"
    "```python\n@app.task(bind=True, max_retries=3)\ndef send_report(self, to):\n    try:\n        deliver(to)\n"
    "    except IOError as exc:\n        raise self.retry(exc=exc, countdown=5)\n```\n"
)
FOLLOW_UP_ANSWER = ("At most `max_retries` times [1]; after that the task fails for good. "
                    "<img src=x onerror=window.__pwned=1> [x](javascript:window.__pwned=1)")


class PageScript(ReplyScript):
    """The fake LLM's replies chosen by request shape, so the test does not depend on the call order."""

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)  # records the request
        last = request.messages[-1][1] if request.messages else ""
        off_topic = "Peru" in last
        properties = (request.json_schema or {}).get("properties", {})
        if "grades" in properties:
            score = 0.02 if off_topic else 0.9
            return ScriptedReply(json={"grades": [{"id": i, "score": score} for i in range(50)]})
        if "prettified" in properties:
            return ScriptedReply(json=_understanding(off_topic))
        if request.stream:
            text = FOLLOW_UP_ANSWER if "at most" in last else FIRST_ANSWER
            return ScriptedReply(text=text, chunks=14, chunk_delay=0.1)
        return ScriptedReply(text="Retrying Celery tasks")


def _understanding(off_topic: bool) -> dict[str, Any]:
    if off_topic:
        return {"prettified": OFF_TOPIC, "intent": "question", "answer_length": "short", "in_scope": False,
                "retrieval_query": "capital of Peru", "reply": ""}
    return {"prettified": "How many times is a task retried at most?", "intent": "question",
            "answer_length": "short", "in_scope": True, "retrieval_query": "max_retries how many times retried",
            "reply": ""}


@pytest.fixture
def fake_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> Iterator[OpenAIFakeServer]:
    """The OpenAI provider pointed at the wire-level fake, streaming its answers in paced chunks."""
    openai_server.script = PageScript()
    settings.OPENGURU_LLM = openai_server.llm_settings()
    yield openai_server


@pytest.fixture
def celery_guru(tmp_path: Path) -> Guru:
    """A guru with one indexed PDF (eager tasks; autocommit runs on_commit callbacks at once)."""
    cache.clear()  # rate-limit counters and cached answers live in the cache, which transactions do not reset
    guru: Guru = GuruFactory(slug="celery", name="Celery Guru", base_color="#7c3aed",
                             domain_knowledge="the Celery task queue for Python",
                             intro_text="Ask me about Celery tasks, retries and brokers.\n<b>Not bold</b> & friends.")
    pdf = write_pdf(tmp_path / "celery-manual.pdf", CORPUS)
    upload = SimpleUploadedFile("celery-manual.pdf", pdf.read_bytes(), content_type="application/pdf")
    source = source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Celery manual")
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED, source.error_message
    return guru


SAMPLER_JS = """() => {
  window.__samples = [];
  const timer = setInterval(() => {
    const answer = document.querySelector("#thread .turn:last-child .answer");
    if (!answer) return;
    const status = answer.parentElement.querySelector(".turn-status").textContent;
    const streaming = answer.classList.contains("streaming");
    window.__samples.push({length: answer.textContent.length, streaming: streaming, status: status});
    if (!streaming) clearInterval(timer);
  }, 20);
}"""


def _ask(page: Page, question: str, *, keyboard: bool = False) -> None:
    page.evaluate(SAMPLER_JS)
    box = page.get_by_label("Ask Celery Guru a question")
    box.fill(question)
    if keyboard:
        box.press("Enter")
    else:
        page.get_by_role("button", name="Ask", exact=True).click()


def _wait_finished(page: Page, turns: int) -> None:
    expect(page.locator("#thread .turn")).to_have_count(turns)
    answer = page.locator(f"#thread .turn:nth-child({turns}) .answer")
    expect(answer).not_to_have_class(STREAMING, timeout=30_000)


def _growth_steps(page: Page) -> tuple[int, list[str]]:
    samples: list[dict[str, Any]] = page.evaluate("window.__samples")
    lengths = [s["length"] for s in samples if s["streaming"]]
    steps = sum(1 for before, after in zip(lengths, lengths[1:], strict=False) if after > before)
    return steps, [s["status"] for s in samples]


def _ask_bodies(page: Page) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []

    def record(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/ask/"):
            bodies.append(request.post_data_json)

    page.on("request", record)
    return bodies


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_ask_stream_follow_up_and_off_topic(
    page: Page, asgi_live_server: str, celery_guru: Guru, fake_llm: OpenAIFakeServer, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    bodies = _ask_bodies(page)
    page.goto(f"{asgi_live_server}/g/celery/")
    expect(page.get_by_role("heading", name="Celery Guru", level=1)).to_be_visible()
    expect(page.locator(".guru-intro")).to_have_text("Ask me about Celery tasks, retries and brokers.\n"
                                                     "<b>Not bold</b> & friends.")
    accent = page.evaluate("getComputedStyle(document.getElementById('guru-page')).getPropertyValue('--accent')")
    assert accent.strip() == "#7c3aed"

    # 1. A covered question: stages, then the answer grows delta by delta, then references and trust.
    _ask(page, FIRST_QUESTION)
    expect(page.locator("#ask-button")).to_be_disabled()
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    _wait_finished(page, 1)
    steps, statuses = _growth_steps(page)
    assert steps >= 2, f"the answer did not grow incrementally: {steps} growth steps"
    assert any(s.startswith(("Searching", "Ranking", "Checking", "Writing", "Understanding")) for s in statuses)
    first = page.locator("#thread .turn").nth(0)
    expect(first.locator(".answer code.language-python")).to_contain_text("self.retry(exc=exc, countdown=5)")
    expect(first.locator(".answer li")).to_have_count(2)
    cite = first.locator(".answer a.cite").first
    expect(cite).to_have_attribute("href", "#ref-1-1")
    reference = first.locator("#ref-1-1")
    expect(reference.locator(".ref-title")).to_contain_text("Celery manual")
    expect(reference.locator(".ref-kind")).to_have_attribute("data-kind", "PDF")
    assert (reference.text_content() or "").count("page 1") == 1  # the locator is not repeated after the title
    href = reference.locator("a.ref-title").get_attribute("href") or ""
    assert href.startswith(asgi_live_server + "/") and "#page=1" in href
    expect(first.locator(".trust-value")).to_have_text(re.compile(r"^9\d%$"))  # a 0.9 grade, calibrated
    expect(first.locator(".trust")).to_have_attribute("data-level", "high")
    expect(page.locator("#ask-button")).to_be_enabled()
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    cite.click()
    expect(page).to_have_url(f"{asgi_live_server}/g/celery/#ref-1-1")
    screenshot("answer", style=FULL_PAGE_STYLE)

    # 2. A follow-up from the keyboard continues the session; hostile markdown in the answer stays inert.
    _ask(page, FOLLOW_UP, keyboard=True)
    _wait_finished(page, 2)
    second = page.locator("#thread .turn").nth(1)
    expect(second.locator(".turn-question")).to_have_text("How many times is a task retried at most?")
    expect(second.locator(".answer")).to_contain_text("<img src=x onerror=window.__pwned=1>")
    assert page.evaluate("window.__pwned") is None
    assert second.locator(".answer img, .answer [onerror]").count() == 0

    # 3. Off topic, still in the same session: the "not covered" state, no sources.
    _ask(page, OFF_TOPIC)
    _wait_finished(page, 3)
    third = page.locator("#thread .turn").nth(2)
    expect(third).to_have_class("turn out-of-context")
    expect(third.locator(".trust")).to_have_attribute("data-level", "none")
    expect(third.locator(".trust-badge")).to_have_text("Not covered by the sources")
    expect(third.locator(".reference")).to_have_count(0)
    expect(third.locator(".answer")).to_contain_text("couldn't find this")
    screenshot("thread", style=FULL_PAGE_STYLE)

    session_id = str(Question.objects.filter(guru=celery_guru).order_by("pk").first().binge_id)  # type: ignore[union-attr]
    assert [body["question"] for body in bodies] == [FIRST_QUESTION, FOLLOW_UP, OFF_TOPIC]
    assert [body["session_id"] for body in bodies] == [None, session_id, session_id]
    assert page_errors == []

    # What visitors asked is never suggested to the next visitor; only examples a maintainer published are.
    page.goto(f"{asgi_live_server}/g/celery/")
    expect(page.get_by_label("Ask Celery Guru a question")).to_be_visible()
    expect(page.locator(".examples")).to_have_count(0)
    assert FIRST_QUESTION not in page.content()
    guru_example_add(guru=celery_guru, text="Which brokers are supported?")
    page.goto(f"{asgi_live_server}/g/celery/")
    chip = page.locator(".example-chip")
    expect(chip).to_have_count(1)
    chip.click()
    expect(page.get_by_label("Ask Celery Guru a question")).to_have_value("Which brokers are supported?")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot("mobile-empty")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_stop_keeps_the_partial_answer(
    page: Page, asgi_live_server: str, celery_guru: Guru, fake_llm: OpenAIFakeServer,
    screenshot: Callable[..., Path],
) -> None:
    page.goto(f"{asgi_live_server}/g/celery/")
    _ask(page, FIRST_QUESTION)
    turn = page.locator("#thread .turn").first
    expect(turn.locator(".answer")).to_contain_text("self.retry()")
    screenshot("streaming")
    page.get_by_role("button", name="Stop").click()
    expect(turn.locator(".turn-notice")).to_have_text("Stopped. The answer above is incomplete.")
    expect(page.locator("#ask-button")).to_be_enabled()
    expect(turn.locator(".answer")).not_to_have_class(STREAMING)
    partial = turn.locator(".answer").text_content() or ""
    assert "self.retry()" in partial and "countdown=5" not in partial
    page.wait_for_timeout(1_500)  # nothing more arrives after Stop
    assert turn.locator(".answer").text_content() == partial
    screenshot("stopped")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_rate_limit_shows_retry_after(
    page: Page, asgi_live_server: str, celery_guru: Guru, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_WEB_RATE_LIMIT = 1
    page.goto(f"{asgi_live_server}/g/celery/")
    refused = None
    for number in range(1, 4):  # a minute boundary may reset the counter once
        _ask(page, f"hello number {number}")
        _wait_finished(page, number)
        notice = page.locator(f"#thread .turn:nth-child({number}) .turn-notice.error")
        if notice.count():
            refused = notice
            break
    assert refused is not None, "no question was refused"
    expect(refused).to_contain_text("Too many questions right now. Please wait")
    expect(refused).to_have_attribute("role", "alert")
    wait = re.search(r"wait (\d+) second", refused.text_content() or "")
    assert wait, refused.text_content()
    if int(wait.group(1)) >= 3:  # the button counts down until Retry-After has passed
        expect(page.locator("#ask-button")).to_be_disabled()
        expect(page.locator("#ask-button")).to_contain_text(re.compile(r"Wait \d+ s"))
    save_screenshot(page, "test_rate_limit_shows_retry_after")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_vanished_session_starts_a_new_conversation(page: Page, asgi_live_server: str, celery_guru: Guru) -> None:
    bodies = _ask_bodies(page)

    def forget_session(route: Route) -> None:
        body = route.request.post_data_json
        if body.get("session_id"):
            body["session_id"] = "00000000-0000-0000-0000-000000000000"
        route.continue_(post_data=json.dumps(body))

    page.route("**/ask/", forget_session)
    page.goto(f"{asgi_live_server}/g/celery/")
    for number, question in enumerate([FIRST_QUESTION, FOLLOW_UP, FOLLOW_UP], start=1):
        _ask(page, question)
        _wait_finished(page, number)
    expect(page.locator("#thread .turn:nth-child(2) .turn-notice.error")).to_contain_text(
        "Your next question will start a new conversation.")
    expect(page.locator("#thread .turn:nth-child(3) .turn-notice")).to_be_hidden()
    assert [body["session_id"] is None for body in bodies] == [True, False, True]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_thumbs_up_and_down_are_stored(
    page: Page, asgi_live_server: str, celery_guru: Guru, fake_llm: OpenAIFakeServer, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    page.goto(f"{asgi_live_server}/g/celery/")
    _ask(page, FIRST_QUESTION)
    turn = page.locator("#thread .turn").first
    expect(turn.locator(".feedback")).to_be_hidden()  # only under a finished answer
    _wait_finished(page, 1)
    question = Question.objects.get(guru=celery_guru)
    helpful, unhelpful = turn.get_by_role("button", name="Helpful", exact=True), turn.get_by_role(
        "button", name="Not helpful")
    status = turn.locator(".feedback-status")
    for button, pressed, stored in [(helpful, helpful, 1), (unhelpful, unhelpful, -1), (unhelpful, None, None)]:
        button.click()
        expect(status).to_have_text("Vote removed." if stored is None else "Thanks for your feedback!")
        expect(helpful).to_have_attribute("aria-pressed", "true" if pressed is helpful else "false")
        expect(unhelpful).to_have_attribute("aria-pressed", "true" if pressed is unhelpful else "false")
        question.refresh_from_db()
        assert question.feedback == stored
        if stored == 1:
            screenshot("voted", style=FULL_PAGE_STYLE)
    assert page_errors == []


SSE_CHUNKS = [  # CRLF split between chunks, a comment, a field name split mid-word, multi-line data, no event name
    'event: question\ndata: {"question_id": 7, "slug": "x", "session_id": "s", "question": "Q"}\r',
    "\n\r\n: a comment\nevent: del", 'ta\ndata: {"text": "Hel', 'lo"}\n\nevent: delta\n', 'data: {"text": "ü"}\n',
    '\nevent: done\ndata: {"multi":\ndata: true}\n\ndata: {"no": "name"}',
]


@pytest.mark.browser
def test_sse_parser_handles_chunks_split_anywhere(page: Page) -> None:
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_script_tag(content=SSE_JS.read_text(encoding="utf-8"))
    events = page.evaluate("""(chunks) => {
      const events = [];
      const parser = window.OpenGuruSSE.createParser((name, data) => events.push([name, JSON.parse(data)]));
      chunks.forEach((chunk) => parser.push(chunk));
      parser.end();
      return events;
    }""", SSE_CHUNKS)
    assert events == [
        ["question", {"question_id": 7, "slug": "x", "session_id": "s", "question": "Q"}],
        ["delta", {"text": "Hello"}],
        ["delta", {"text": "ü"}],
        ["done", {"multi": True}],
        ["message", {"no": "name"}],
    ]


@pytest.mark.browser
def test_sse_reading_stops_at_the_last_event_when_the_server_is_slow_to_close(page: Page) -> None:
    # A server can keep the stream open a moment after `done`; until reading ends, the page refuses the next question.
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_script_tag(content=SSE_JS.read_text(encoding="utf-8"))
    outcome = page.evaluate("""async () => {
      let cancelled = false;
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('event: delta\\ndata: {"text": "a"}\\n\\n'));
          controller.enqueue(new TextEncoder().encode('event: done\\ndata: {}\\n\\n'));
        },
        cancel() { cancelled = true; },
      });
      const names = [];
      const read = window.OpenGuruSSE.read(body, (name) => names.push(name), () => names.includes("done"));
      const settled = await Promise.race([read.then(() => "returned"),
                                          new Promise((resolve) => setTimeout(() => resolve("still reading"), 5000))]);
      return {settled: settled, names: names, cancelled: cancelled};
    }""")
    assert outcome == {"settled": "returned", "names": ["delta", "done"], "cancelled": True}
