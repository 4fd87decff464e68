"""Pytest plugin for the widget's Chromium tests: the guru, the fake LLM's script, host pages on other origins."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.gurus.models import Guru
from backend.sources.models import SourceKind, SourceStatus
from backend.sources.services import source_create
from tests.factories import GuruFactory
from tests.fakes.openai_server import OpenAIFakeServer
from tests.fakes.pdfs import write_pdf

if TYPE_CHECKING:
    pass



HOSTILE_CSS = "* { color: red !important; font-size: 40px !important; display: block } head { display: none }"
REFUSED = "This site is not allowed to use this widget."
RED = "rgb(255, 0, 0)"
MOBILE = {"width": 390, "height": 844}

CORPUS = [
    ["Retrying tasks", "A task can be retried by calling self.retry() inside a bound task.",
     "The countdown argument sets how many seconds to wait before the retry.",
     "max_retries limits how many times a task is retried before it fails for good."],
    ["Choosing a broker", "Celery needs a message broker to send and receive messages.",
     "RabbitMQ and Redis are the supported brokers for production use."],
]
FIRST_QUESTION = "How do I retry a task after a few seconds?"
FOLLOW_UP = "and how many times at most? <b>bold?</b>"
FOLLOW_UP_SHOWN = "How many times is a task retried at most? <img src=x onerror=window.__pwned=3>"
OFF_TOPIC = "What is the capital of Peru?"
CODE = "@app.task(bind=True, max_retries=3)\ndef send_report(self, to):\n    raise self.retry(countdown=5)"
FIRST_ANSWER = (
    "Call **`self.retry()`** inside a *bound* task [1]. Two options matter:\n\n"
    "- `countdown`: how many seconds to wait before the retry [1]\n"
    "- `max_retries`: how many times the task is retried before it fails for good [1]\n\n"
    f"```python\n{CODE}\n```\n"
)
XSS_IMG = '<img src=x onerror="window.__pwned=1">'
FOLLOW_UP_ANSWER = f"At most `max_retries` times [1]. {XSS_IMG} and [x](javascript:window.__pwned=2) stay inert."


class WidgetScript(ReplyScript):
    """The fake LLM's replies chosen by request shape, so the test does not depend on the call order."""

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)  # records the request
        last = request.messages[-1][1] if request.messages else ""
        off_topic = "Peru" in last
        follow_up = "at most" in last
        properties = (request.json_schema or {}).get("properties", {})
        if "grades" in properties:
            return ScriptedReply(json={"grades": [{"id": i, "score": 0.02 if off_topic else 0.9} for i in range(50)]})
        if "prettified" in properties:
            return ScriptedReply(json=_understanding(off_topic, follow_up))
        if request.stream:
            return ScriptedReply(text=FOLLOW_UP_ANSWER if follow_up else FIRST_ANSWER, chunks=14, chunk_delay=0.1)
        return ScriptedReply(text="Retrying Celery tasks")


def _understanding(off_topic: bool, follow_up: bool) -> dict[str, Any]:
    if off_topic:
        return {"prettified": OFF_TOPIC, "intent": "question", "answer_length": "short", "in_scope": False,
                "retrieval_query": "capital of Peru", "reply": ""}
    prettified = FOLLOW_UP_SHOWN if follow_up else FIRST_QUESTION
    return {"prettified": prettified, "intent": "question", "answer_length": "short", "in_scope": True,
            "retrieval_query": "retry a task countdown max_retries", "reply": ""}


@pytest.fixture
def widget_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> Iterator[OpenAIFakeServer]:
    """The OpenAI provider pointed at the wire-level fake, streaming its answers in paced chunks."""
    openai_server.script = WidgetScript()
    settings.OPENGURU_LLM = openai_server.llm_settings()
    yield openai_server


@pytest.fixture
def widget_guru(tmp_path: Path) -> Guru:
    """A guru with one indexed PDF (eager tasks; autocommit runs on_commit callbacks at once)."""
    cache.clear()  # rate-limit counters live in the cache, which transactions do not reset
    guru: Guru = GuruFactory(slug="celery", name="Celery Guru", base_color="#7c3aed",
                             domain_knowledge="the Celery task queue for Python",
                             intro_text="Ask me about Celery tasks.\n<b>Not bold</b> & friends.")
    pdf = write_pdf(tmp_path / "celery-manual.pdf", CORPUS)
    upload = SimpleUploadedFile("celery-manual.pdf", pdf.read_bytes(), content_type="application/pdf")
    source = source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Celery manual")
    source.refresh_from_db()
    assert source.status == SourceStatus.INDEXED, source.error_message
    return guru


# ---- host sites: plain http.server threads, each on its own port, so each is its own origin --------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        pass


@dataclass
class HostSite:
    origin: str
    root: Path

    def page(self, name: str, app: str, key: str, attributes: str = "", head: str = "") -> str:
        """Write a host page embedding the widget and return its URL."""
        (self.root / name).write_text(
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>{head}"
            f"<title>Host docs</title><style>{HOSTILE_CSS}</style></head><body>"
            "<h1>Host documentation</h1><p>Some page content.</p><a href='other.html'>Next page</a>"
            f"<script async src='{app}/widget.js' id='guru-widget-id' data-widget-id='{key}' {attributes}></script>"
            "</body></html>", encoding="utf-8")
        return f"{self.origin}/{name}"


@pytest.fixture
def host_sites(tmp_path: Path) -> Iterator[Callable[[], HostSite]]:
    """Start static sites on demand; each one's origin differs from the app's and from the others'."""
    servers: list[ThreadingHTTPServer] = []

    def start() -> HostSite:
        root = tmp_path / f"site-{len(servers)}"
        root.mkdir()
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
        threading.Thread(target=server.serve_forever, name=f"host-site-{len(servers)}", daemon=True).start()
        servers.append(server)
        return HostSite(origin=f"http://127.0.0.1:{server.server_address[1]}", root=root)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


# ---- helpers ---------------------------------------------------------------------------------------------------
