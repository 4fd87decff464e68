"""Channel adapters of the parity tests: each channel's wire output folded into one comparable Outcome."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
from django.test import Client

from backend.adapters.llm.fake import RecordedRequest, ReplyScript, ScriptedReply
from backend.answering.events import AnswerEvent, EventKind
from backend.answering.models import AnswerState, Channel, Question
from backend.answering.services import AskRequest, answer_stream
from backend.channels import consumer
from backend.gurus.models import Guru
from tests.integration.answering.answer_support import sse_events
from tests.support.restartable_server import eventually

ORIGIN = "https://docs.example.com"
ANSWER = "Call self.retry() inside a bound task to retry it [1]."
UNCOVERED = "sourdough"  # the fake model grades every context irrelevant to a question naming this
UNDERSTOOD = {"prettified": "What delay does a task retry wait?", "intent": "question", "answer_length": "short",
              "in_scope": True, "retrieval_query": "retry countdown delay seconds", "reply": ""}
# How a raw-markdown stream ends when the answer failed after its first byte (answering.events.error_marker).
MARKER = re.compile(r"\n\n---\n\[OpenGuru error: (?P<code>[^\]]+)\] (?P<msg>.*?)"
                    r"(?: \(error id (?P<error_id>[0-9a-f]+)\))?\n\Z", re.S)


class ChannelScript(ReplyScript):
    """The fake model, answering by request shape (the grade and the answer streamed beside it come in either
    order): grades every context relevant (irrelevant for an UNCOVERED question), understands a follow-up,
    and streams `answer` in `chunks` pieces `chunk_delay` seconds apart."""

    def __init__(self, answer: str = ANSWER, *, chunks: int = 6, chunk_delay: float = 0.0) -> None:
        super().__init__()
        self.answer, self.chunks, self.chunk_delay = answer, chunks, chunk_delay

    def next(self, request: RecordedRequest) -> ScriptedReply:
        super().next(request)  # records the request (nothing is queued)
        properties = (request.json_schema or {}).get("properties", {})
        if "grades" in properties:
            asked = " ".join(text for _, text in request.messages).lower()
            score = 0.0 if UNCOVERED in asked else 0.9
            return ScriptedReply(json={"grades": [{"id": i, "score": score} for i in range(50)]})
        if "prettified" in properties:
            return ScriptedReply(json=UNDERSTOOD)
        if request.stream:
            return ScriptedReply(text=self.answer, chunks=self.chunks, chunk_delay=self.chunk_delay)
        return ScriptedReply(text="OK")


class Wire(str, enum.Enum):
    SSE = "sse"
    MARKDOWN = "markdown"  # Gurubase's raw stream; ids and references come from `fetch_existing`
    JSON = "json"
    PYTHON = "python"  # backend.channels.consumer, as bots and MCP use it


@dataclass(frozen=True)
class Keys:
    """What the channels authenticate with: the guru's slug, an API key of its maintainer and a widget id."""

    slug: str
    api_key: str
    widget_key: str


Body = Callable[[str, str | None], dict[str, Any]]


def _plain(question: str, session_id: str | None) -> dict[str, Any]:
    return {"question": question, **({"session_id": session_id} if session_id else {})}


def _api_markdown(question: str, session_id: str | None) -> dict[str, Any]:
    return {**_plain(question, session_id), "stream": True}


def _api_fetch(question: str, session_id: str | None) -> dict[str, Any]:
    return {**_plain(question, session_id), "fetch_existing": True}


def _gurubase_widget(question: str, session_id: str | None) -> dict[str, Any]:
    return {"question": question, "binge_id": session_id, "parent_slug": None, "fetch_existing": False}


def _widget_fetch(question: str, session_id: str | None) -> dict[str, Any]:
    return {"question": question, "binge_id": session_id, "fetch_existing": True}


def _page_headers(keys: Keys) -> dict[str, str]:
    return {"Accept": "text/event-stream"}  # as the page's script sends it (its CSRF token is added on top)


def _api_headers(keys: Keys) -> dict[str, str]:
    return {"X-API-KEY": keys.api_key}


def _api_sse_headers(keys: Keys) -> dict[str, str]:
    return {**_api_headers(keys), "Accept": "text/event-stream"}


def _widget_headers(keys: Keys) -> dict[str, str]:
    return {"Authorization": keys.widget_key, "Origin": ORIGIN}


@dataclass(frozen=True)
class HttpChannel:
    """One HTTP channel: where it asks, what it sends, how its answer comes back and how the question is stored."""

    name: str
    path: str
    wire: Wire
    stored_as: str
    body: Body
    headers: Callable[[Keys], dict[str, str]]
    fetch: Body | None = None  # markdown channels: the `fetch_existing` call that completes the answer
    csrf: bool = False  # the guru page: a CSRF token from the page's cookie

    def url(self, keys: Keys) -> str:
        return self.path.format(slug=keys.slug)


_ANSWER_PATH = "/api/v1/{slug}/answer/"
HTTP_CHANNELS = (
    HttpChannel("guru page", "/g/{slug}/ask/", Wire.SSE, Channel.WEB, _plain, _page_headers, csrf=True),
    HttpChannel("API json", _ANSWER_PATH, Wire.JSON, Channel.API, _plain, _api_headers),
    HttpChannel("API stream:true", _ANSWER_PATH, Wire.MARKDOWN, Channel.API, _api_markdown, _api_headers,
                fetch=_api_fetch),
    HttpChannel("API sse", _ANSWER_PATH, Wire.SSE, Channel.API, _plain, _api_sse_headers),
    HttpChannel("widget stream", "/widget/stream/", Wire.SSE, Channel.WIDGET, _plain, _widget_headers),
    HttpChannel("widget ask", "/widget/ask/", Wire.MARKDOWN, Channel.WIDGET, _gurubase_widget, _widget_headers,
                fetch=_widget_fetch),
)
STREAMING = tuple(channel for channel in HTTP_CHANNELS if channel.wire is not Wire.JSON)
CONSUMER = "python consumer"
ALL = (*(channel.name for channel in HTTP_CHANNELS), CONSUMER)


@dataclass
class Outcome:
    """What one channel said about one question, in one vocabulary, and the question rows the call stored."""

    channel: str
    wire: Wire
    status: int | None = None  # None for the Python consumer
    content_type: str = ""
    text: str = ""
    references: tuple[tuple[str, str], ...] = ()  # the cited ones: (title, link path)
    trust: int | None = None  # percent, as the API shows it
    session_id: str | None = None
    question_id: int | None = None
    out_of_context: bool | None = None
    error: dict[str, Any] | None = None  # the error body, event, marker line or consumer `.error`
    fetched_text: str | None = None  # markdown channels: the content `fetch_existing` returned
    fetch_status: int | None = None  # and the status it answered with
    events: list[str] = field(default_factory=list)  # SSE event names in order
    stored: list[Question] = field(default_factory=list)

    @property
    def row(self) -> Question:
        assert len(self.stored) == 1, f"{self.channel}: stored {len(self.stored)} questions"
        return self.stored[0]


def _link(link: str) -> str:
    """A reference link without scheme and host: the API makes ours absolute, SSE sends them as paths."""
    parts = urlsplit(link)
    return parts.path + (f"#{parts.fragment}" if parts.fragment else "")


def _cited(references: list[dict[str, Any]] | None) -> tuple[tuple[str, str], ...]:
    return tuple((str(r.get("title", "")), _link(str(r.get("link", ""))))
                 for r in references or [] if r.get("cited", True))


def _folded(outcome: Outcome, answer: consumer.Answer) -> Outcome:
    """The outcome of a stream of answer events, as the plain-Python consumer folds them."""
    outcome.text, outcome.session_id = answer.text, answer.session_id
    outcome.question_id = answer.question_id or None
    if answer.done:
        outcome.references, outcome.trust = _cited(answer.references), round((answer.trust_score or 0) * 100)
        outcome.out_of_context = answer.out_of_context
    if answer.error is not None:
        outcome.error = asdict(answer.error)
    return outcome


def _from_sse(outcome: Outcome, raw: bytes) -> None:
    answer = consumer.Answer()
    for name, data in sse_events(raw):
        outcome.events.append(name)
        answer.feed(AnswerEvent(EventKind(name), data))
        if name == "error":
            outcome.error = data  # exactly as sent, to check its fields
    _folded(outcome, answer)


def _from_json(outcome: Outcome, data: dict[str, Any]) -> None:
    outcome.text, outcome.references = str(data.get("content", "")), _cited(data.get("references"))
    outcome.trust, outcome.session_id = data.get("trust_score"), data.get("session_id")
    outcome.question_id, outcome.out_of_context = data.get("question_id"), data.get("out_of_context")


def _from_markdown(outcome: Outcome, raw: bytes, *, opened: bool) -> None:
    text = raw.decode()
    if opened:
        # The widget's stream opens with a line break Gurubase's renderer waits for (widget/markdown_stream.py).
        assert text.startswith("\n"), text[:40]
        text = text[1:]
    marker = MARKER.search(text)
    if marker is not None:
        text = text[:marker.start()]
        outcome.error = {name: value for name, value in marker.groupdict().items() if value is not None}
    outcome.text = text


def decode(channel: HttpChannel, status: int, content_type: str, raw: bytes) -> Outcome:
    """The outcome of one response (before any `fetch_existing`)."""
    outcome = Outcome(channel.name, channel.wire, status=status, content_type=content_type)
    if status != 200:
        outcome.error = json.loads(raw) if content_type.startswith("application/json") else {"raw": raw[:80]}
    elif channel.wire is Wire.SSE:
        _from_sse(outcome, raw)
    elif channel.wire is Wire.JSON:
        _from_json(outcome, json.loads(raw))
    else:
        _from_markdown(outcome, raw, opened=channel.path == "/widget/ask/")
    return outcome


def _last_pk() -> int:
    return Question.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def stored_since(pk: int) -> list[Question]:
    return list(Question.objects.filter(pk__gt=pk).order_by("pk"))


def settled_since(pk: int, what: str) -> Question:
    """The first question stored after `pk`, once it is no longer being answered (polled, never slept for)."""
    def settled() -> bool:
        first = stored_since(pk)[:1]
        return bool(first) and first[0].state != AnswerState.PENDING

    eventually(settled, what)
    return stored_since(pk)[0]


class InProcess:
    """Asks through Django's test client (the views' real code; the model is the fake server)."""

    def __init__(self, guru: Guru, keys: Keys) -> None:
        self.guru, self.keys = guru, keys

    def ask(self, name: str, question: str, session_id: str | None = None) -> Outcome:
        before = _last_pk()
        outcome = self._consume(question, session_id) if name == CONSUMER else self._post(
            next(c for c in HTTP_CHANNELS if c.name == name), question, session_id)
        outcome.stored = stored_since(before)
        return outcome

    def _consume(self, question: str, session_id: str | None) -> Outcome:
        request = AskRequest(guru=self.guru, question=question, channel=Channel.MCP, session_id=session_id)
        return _folded(Outcome(CONSUMER, Wire.PYTHON), consumer.ask(request))

    def _post(self, channel: HttpChannel, question: str, session_id: str | None) -> Outcome:
        # A view that crashes is a 500 outcome of its channel, reported beside the others, not the test's error.
        client = Client(enforce_csrf_checks=True, raise_request_exception=False)
        headers = channel.headers(self.keys)
        if channel.csrf:
            client.get(f"/g/{self.keys.slug}/")  # sets the csrftoken cookie, as the page does for its script
            headers["X-CSRFToken"] = client.cookies["csrftoken"].value
        response = client.post(channel.url(self.keys), data=json.dumps(channel.body(question, session_id)),
                               content_type="application/json", headers=headers)
        raw = b"".join(response)  # a streamed body is read to its end, as a client would
        outcome = decode(channel, response.status_code, response.get("Content-Type", ""), raw)
        if channel.fetch is not None and outcome.status == 200 and outcome.error is None:
            fetched = client.post(channel.url(self.keys), data=json.dumps(channel.fetch(question, session_id)),
                                  content_type="application/json", headers=headers)
            outcome.fetch_status = fetched.status_code
            if fetched.status_code == 200 and fetched.get("Content-Type", "").startswith("application/json"):
                text = outcome.text
                _from_json(outcome, fetched.json())
                outcome.fetched_text, outcome.text = outcome.text, text
        return outcome


def hang_up(base: str, keys: Keys, channel: HttpChannel, question: str) -> int:
    """Ask over a real connection, read a few pieces of the answer, then close it as a closed tab does; the pk
    of the last question stored before the call."""
    before = _last_pk()
    with httpx.Client(base_url=base, timeout=30) as client:
        headers = channel.headers(keys)
        if channel.csrf:
            client.get(f"/g/{keys.slug}/")
            headers["X-CSRFToken"] = client.cookies["csrftoken"]
        with client.stream("POST", channel.url(keys), json=channel.body(question, None), headers=headers) as response:
            assert response.status_code == 200, f"{channel.name}: {response.status_code}"
            if channel.wire is Wire.SSE:
                deltas = 0
                for line in response.iter_lines():
                    deltas += line == "event: delta"
                    if deltas >= 3:
                        break
            else:
                received = b""
                for chunk in response.iter_bytes():
                    received += chunk
                    if len(received.split()) >= 3:  # three words of the answer
                        break
    return before


def consumer_hang_up(guru: Guru, question: str) -> int:
    """A bot whose user goes away after a few pieces of the answer: it stops reading and closes the events; the
    pk of the last question stored before."""
    before = _last_pk()
    events = cast(Generator[AnswerEvent, None, None],
                  answer_stream(AskRequest(guru=guru, question=question, channel=Channel.MCP)))
    for event, answer in consumer.follow(events):
        if event.kind is EventKind.DELTA and len(answer.text.split()) >= 3:
            break
    events.close()
    return before
