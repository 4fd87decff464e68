"""Every channel through the same scenarios — an answer and its follow-up, a refusal, an unknown session, the
model failing mid-answer, the asker going away — with the outcomes compared (issue #15, acceptance item 2).

The channels: the guru page (SSE), the API in its three modes (JSON, `stream: true` markdown, SSE), the widget's
two protocols (our SSE stream, Gurubase's markdown then `fetch_existing`) and the plain-Python consumer bots and
MCP use. tests/channels/parity_support.py turns each one's wire output into one Outcome record."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.core.cache import cache
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import AnswerState, Channel
from backend.answering.services import NOT_COVERED
from backend.api.services import api_key_create
from backend.core.errors import PUBLIC_MESSAGES
from backend.gurus.models import Guru
from backend.widget.services import widget_id_create
from tests.channels.parity_support import (
    ALL,
    ANSWER,
    CONSUMER,
    HTTP_CHANNELS,
    ORIGIN,
    STREAMING,
    ChannelScript,
    InProcess,
    Keys,
    Outcome,
    Wire,
    consumer_hang_up,
    hang_up,
    settled_since,
)
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import QUESTION, make_indexed_guru
from tests.support.restartable_server import eventually

pytestmark = [pytest.mark.django_db(transaction=True),  # streams run in their own thread and connection
              pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")]

FOLLOW_UP = "and the delay?"
UNCOVERED_QUESTION = "How do I bake sourdough bread?"
UNKNOWN_SESSION = "00000000-0000-0000-0000-000000000000"
STORED_AS = {**{channel.name: channel.stored_as for channel in HTTP_CHANNELS}, CONSUMER: Channel.MCP}
WIDGET = {channel.name for channel in HTTP_CHANNELS if channel.path.startswith("/widget/")}
Check = Callable[[Outcome], list[str]]


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    cache.clear()  # rate-limit counters live in the shared cache, which outlives a test's transaction
    yield
    cache.clear()


@pytest.fixture
def model(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> OpenAIFakeServer:
    """The OpenAI provider pointed at the fake server, which answers by request shape (ChannelScript)."""
    openai_server.script = ChannelScript()
    settings.OPENGURU_LLM = openai_server.llm_settings()
    return openai_server


@pytest.fixture
def guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    return make_indexed_guru(django_capture_on_commit_callbacks)


@pytest.fixture
def keys(guru: Guru) -> Keys:
    api_key = api_key_create(user=guru.maintainers.get(), name="parity", guru=guru, rate_limit_per_minute=1000)
    widget = widget_id_create(guru=guru, name="parity", allowed_origins=[ORIGIN], rate_limit_per_minute=1000,
                              per_ip_rate_limit_per_minute=1000)
    return Keys(guru.slug, api_key.raw, widget.key)


@pytest.fixture
def channels(guru: Guru, keys: Keys, model: OpenAIFakeServer) -> InProcess:
    return InProcess(guru, keys)


def expect(outcomes: list[Outcome], check: Check) -> None:
    """Every channel's problems at once, so one run shows where the channels disagree."""
    problems = [f"{outcome.channel}: {problem}" for outcome in outcomes for problem in check(outcome)]
    assert not problems, "\n".join(problems)


def _same_answer(first: Outcome) -> Check:
    def check(o: Outcome) -> list[str]:
        seen = (o.text, o.references, o.trust, o.out_of_context)
        wanted = (first.text, first.references, first.trust, first.out_of_context)
        return [
            *([f"error {o.error} (status {o.status})"] if o.error or o.status not in (200, None) else []),
            *([f"answered {seen}, the first channel {wanted}"] if seen != wanted else []),
            *([f"streamed {o.text!r} but fetch_existing gave {o.fetch_status} {o.fetched_text!r}"]
              if o.wire is Wire.MARKDOWN and (o.fetch_status, o.fetched_text) != (200, o.text) else []),
            *_stored_complete(o),
        ]

    return check


def _stored_complete(o: Outcome) -> list[str]:
    if len(o.stored) != 1:
        return [f"stored {len(o.stored)} questions"]
    row = o.row
    seen = (row.state, row.channel, row.pk, str(row.binge_id))
    wanted = (AnswerState.COMPLETE, STORED_AS[o.channel], o.question_id, o.session_id)
    return [] if seen == wanted else [f"stored (state, channel, id, session) {seen}, said {wanted}"]


def test_an_answer_is_the_same_on_every_channel_and_its_session_continues(channels: InProcess) -> None:
    outcomes = [channels.ask(name, QUESTION) for name in ALL]
    first = outcomes[0]
    assert first.text == ANSWER and first.references == (("Manual — page 1", first.references[0][1]),)
    # A 0.9 grade of a passage holding the question's terms: the trust score (0-100 on these channels) is above it.
    assert first.references[0][1].startswith("/sources/") and 90 <= first.trust <= 100
    expect(outcomes, _same_answer(first))

    def continues(o: Outcome) -> list[str]:
        follow_up = channels.ask(o.channel, FOLLOW_UP, o.session_id)
        if follow_up.error or len(follow_up.stored) != 1:
            return [f"the follow-up failed: {follow_up.error}, stored {len(follow_up.stored)}"]
        row = follow_up.row
        seen = (follow_up.session_id, str(row.binge_id), row.parent_id, row.state, follow_up.text)
        wanted = (o.session_id, o.session_id, o.question_id, AnswerState.COMPLETE, ANSWER)
        return [] if seen == wanted else [f"follow-up (session, stored session, parent, state, text) {seen}, "
                                          f"wanted {wanted}"]

    expect(outcomes, continues)


def test_a_question_the_sources_do_not_cover_is_refused_on_every_channel(channels: InProcess,
                                                                          guru: Guru) -> None:
    refusal = NOT_COVERED.format(guru=guru.name)

    def refused(o: Outcome) -> list[str]:
        seen = (o.status, o.error, o.text, o.references, o.out_of_context, o.trust)
        wanted = (200 if o.status is not None else None, None, refusal, (), True, 0)
        problems = [] if seen == wanted else [f"(status, error, text, references, out_of_context, trust) {seen}"]
        stored = [(q.state, q.out_of_context, q.references) for q in o.stored]
        return problems + ([] if stored == [(AnswerState.COMPLETE, True, [])] else [f"stored {stored}"])

    expect([channels.ask(name, UNCOVERED_QUESTION) for name in ALL], refused)


def _one_error_shape(o: Outcome, status: int, code: str) -> list[str]:
    """The error body of every HTTP channel: {"code", "msg"} (+ "error_id", "detail"; the widget keeps "error")."""
    body = o.error or {}
    allowed = {"code", "msg", "error_id", "detail"} | ({"error"} if o.channel in WIDGET else set())
    problems = [] if (o.status, body.get("code")) == (status, code) else [f"{o.status} {body}"]
    if not o.content_type.startswith("application/json"):
        problems.append(f"content type {o.content_type!r}")
    if not (isinstance(body.get("msg"), str) and body["msg"]) or not set(body) <= allowed:
        problems.append(f"not the one error shape: {body}")
    if o.channel in WIDGET and body.get("error") != body.get("msg"):
        problems.append(f"Gurubase's `error` field is not the message: {body}")
    return problems


def test_an_unknown_session_is_not_found_on_every_channel_before_any_stream(channels: InProcess) -> None:
    outcomes = [channels.ask(name, QUESTION, UNKNOWN_SESSION) for name in ALL]
    said = (outcomes[0].error or {}).get("msg")

    def not_found(o: Outcome) -> list[str]:
        problems = [f"stored {len(o.stored)} questions"] if o.stored else []
        if (o.error or {}).get("msg") != said:
            problems.append(f"says {(o.error or {}).get('msg')!r} where the guru page says {said!r}")
        if o.wire is Wire.PYTHON:
            return problems + ([] if (o.error or {}).get("code") == "not_found" else [f"error {o.error}"])
        return problems + _one_error_shape(o, 404, "not_found")

    expect(outcomes, not_found)


def _failed_mid_stream(o: Outcome) -> list[str]:
    error = o.error or {}
    if o.wire is Wire.JSON:
        problems = _one_error_shape(o, 503, "model_unavailable")
        if set(error) != {"code", "msg", "error_id"}:
            problems.append(f"the 503 body is not {{code, msg, error_id}}: {error}")
    else:
        problems = [] if o.status in (200, None) else [f"status {o.status} {error}"]
        wanted = {"code": "model_unavailable", "msg": PUBLIC_MESSAGES["model_unavailable"]}
        if {name: error.get(name) for name in wanted} != wanted or len(str(error.get("error_id", ""))) != 12:
            problems.append(f"ended with {error}, not {{code, msg, error_id}} of model_unavailable")
        if not o.text.startswith("Call"):
            problems.append(f"the answer's first pieces were not sent before the error: {o.text!r}")
        if o.wire is Wire.SSE and (o.events[-1:] != ["error"] or set(error) != {"code", "msg", "error_id"}):
            problems.append(f"the stream did not end with one error event {{code, msg, error_id}}: {o.events}")
    stored = [(q.state, q.error_code, q.error_id, q.content) for q in o.stored]
    if stored != [(AnswerState.FAILED, "model_unavailable", error.get("error_id"), "")]:
        problems.append(f"stored {stored}, the channel said error id {error.get('error_id')}")
    return problems


def test_the_model_failing_mid_answer_ends_every_channel_with_its_error_and_the_same_id(
    channels: InProcess, model: OpenAIFakeServer
) -> None:
    model.script = ChannelScript(chunks=8)
    model.cut_stream_after = 3  # the model's connection drops after three pieces of every answer
    expect([channels.ask(name, QUESTION) for name in ALL], _failed_mid_stream)


@pytest.mark.slow
def test_an_asker_going_away_mid_answer_cancels_it_on_every_streaming_channel(
    guru: Guru, keys: Keys, model: OpenAIFakeServer, asgi_live_server: str
) -> None:
    model.script = ChannelScript(" ".join(f"word{i}" for i in range(80)), chunks=80, chunk_delay=0.05)
    asked = [(channel.name, hang_up(asgi_live_server, keys, channel, QUESTION)) for channel in STREAMING]
    asked.append((CONSUMER, consumer_hang_up(guru, QUESTION)))
    problems = []
    for name, before in asked:
        row = settled_since(before, f"the question asked through {name} to settle")
        if (row.state, row.error_code, row.content, row.trust_score) != (AnswerState.CANCELLED, "cancelled", "", None):
            problems.append(f"{name}: stored {row.state} {row.error_code} {row.content[:40]!r}")
    assert not problems, "\n".join(problems)
    # Generation stopped too: every model stream was closed by us long before its 80 pieces were sent.
    streamed = len([r for r in model.script.requests if r.stream])
    eventually(lambda: len(model.stream_outcomes) == streamed, "every model stream to end")
    assert all(o.client_disconnected and o.events_sent < o.events_total // 2 for o in model.stream_outcomes)
