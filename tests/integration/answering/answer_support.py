"""Helpers of the answer error, cache and stream-fault tests: an indexed guru, scripted grades, SSE parsing."""

from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.events import AnswerEvent, EventKind
from backend.answering.services import AskRequest, answer_stream
from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from backend.sources.services import source_create
from tests.factories import GuruFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes

MANUAL = [["Retrying tasks", "Call self.retry() inside a bound task to retry it.",
           "The countdown argument sets the delay before the retry in seconds.",
           "max_retries limits how many times a task is retried before it fails for good."]]
QUESTION = "How do I retry a task?"


def make_indexed_guru(capture: DjangoCaptureOnCommitCallbacks, slug: str = "docs") -> Guru:
    """A guru over a one-page manual, in the test profile's in-memory store, with a maintainer "keeper"."""
    with capture(execute=True):
        guru: Guru = GuruFactory(slug=slug, name="Docs Guru", domain_knowledge="the Celery task queue")
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with capture(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Manual")
    guru.maintainers.add(UserFactory(username="keeper"))
    return guru


def grades(score: float) -> ScriptedReply:
    """A grader that finds the best context relevant (`score`) and the others not, as a selective model does.

    The answer is generated beside the grade from the contexts the reranker predicts it keeps; a grade that
    keeps others (e.g. every context at 0.9) sends a second answer request, which a one-reply script lacks.
    """
    return ScriptedReply(json={"grades": [{"id": i, "score": score if i == 0 else 0.0} for i in range(10)]})


def ask(guru: Guru, question: str = QUESTION, session_id: str | None = None) -> list[AnswerEvent]:
    return list(answer_stream(AskRequest(guru=guru, question=question, channel="WEB", session_id=session_id)))


def of_kind(stream: list[AnswerEvent], kind: EventKind) -> list[dict[str, Any]]:
    return [e.data for e in stream if e.kind is kind]


def sse_events(body: bytes | str) -> list[tuple[str, dict[str, Any]]]:
    text = body.decode() if isinstance(body, bytes) else body
    events = []
    for block in text.split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
            events.append((lines["event"], json.loads(lines["data"])))
    return events


RETRY_PAGES = {
    "Retrying": ["Retrying tasks", "Call self.retry() inside a bound task to retry the task."],
    "Countdown": ["Retry countdown", "The countdown argument sets how many seconds a task retry waits."],
    "Limits": ["Retry limits", "max_retries limits how many times a task is retried before it fails."],
    "Backoff": ["Retry backoff", "retry_backoff makes each task retry wait longer than the previous retry."],
}


def add_retry_sources(guru: Guru, capture: DjangoCaptureOnCommitCallbacks | None = None) -> None:
    """Four one-page manuals about retries, and a fifth source holding the first one's text again: its file
    has a blank second page (an identical file is refused), its text is the same. Each is indexed at once
    (in `capture`, when the test runs in a transaction)."""
    copy = ("Retrying (copy)", [RETRY_PAGES["Retrying"], []])
    for title, pages in [*((t, [p]) for t, p in RETRY_PAGES.items()), copy]:
        upload = SimpleUploadedFile(f"{title}.pdf", pdf_bytes(pages), content_type="application/pdf")
        with capture(execute=True) if capture is not None else nullcontext():
            source = source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title=title)
        source.refresh_from_db()
        assert source.status == "INDEXED", source.error_message
