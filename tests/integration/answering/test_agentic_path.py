"""The agentic path through the real answer pipeline and each provider's SDK (OpenAI, Gemini) against its fake
server on 127.0.0.1: a comparing question is researched with tool calls streamed as "thinking" steps, then graded
and answered with citations over what the tools returned; a guru that turns it off, or a failing model, keeps the
simple path."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ReplyScript, ScriptedReply
from backend.answering.events import EventKind
from backend.config.settings.components.models import llm_from_env
from backend.gurus.models import Guru
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import ask, grades, of_kind

pytestmark = pytest.mark.django_db

QUESTION = "Compare retrying a task with letting it fail: what do countdown and max_retries change?"


@pytest.fixture(params=["openai", "gemini"])
def llm(request: pytest.FixtureRequest, settings: SettingsWrapper) -> ReplyScript:
    """The guru's provider pointed at its fake server; the script its replies come from."""
    if request.param == "openai":
        server: OpenAIFakeServer = request.getfixturevalue("openai_server")
        settings.OPENGURU_LLM = server.llm_settings()
        return server.script
    gemini: FakeGeminiServer = request.getfixturevalue("gemini_server")
    settings.OPENGURU_LLM = llm_from_env({"GEMINI_API_KEY": FAKE_GEMINI_KEY, "GEMINI_BASE_URL": gemini.url})
    return gemini.script


def _tool_requests(script: ReplyScript) -> list[Any]:
    return [r for r in script.requests if r.tools]


def test_a_comparing_question_is_researched_step_by_step_then_answered_with_citations(
    indexed: Guru, llm: ReplyScript,
) -> None:
    llm.push(
        grades(0.9), ScriptedReply(text="A speculative answer.", stream=True),  # the simple path's, discarded
        ScriptedReply(text="", tool_calls=(("search", {"query": "countdown retry delay"}),
                                           ("search", {"query": "max_retries limit", "kind": "pdf"})), stream=False),
        ScriptedReply(text="", tool_calls=(("open_source", {"passage": 7}),), stream=False),  # no [7]: an error
        ScriptedReply(text="I have what I need.", stream=False),
        grades(0.9),
        ScriptedReply(text="countdown delays each retry [1]; max_retries caps them [1].", stream=True))
    stream = ask(indexed, QUESTION)

    thinking = [e for e in of_kind(stream, EventKind.STATUS) if e["stage"] == "thinking"]
    assert [t["text"] for t in thinking] == [
        "Searching for “countdown retry delay”", "Searching for “countdown retry delay”: done",
        "Searching for “max_retries limit”", "Searching for “max_retries limit”: done",
        "Reading on in passage “7”", "Reading on in passage “7”: failed"]
    text = "".join(str(d["text"]) for d in of_kind(stream, EventKind.DELTA))
    assert text == "countdown delays each retry [1]; max_retries caps them [1]."
    done = of_kind(stream, EventKind.DONE)[0]
    assert done["references"][0]["cited"] and done["references"][0]["title"].startswith("Manual")
    assert done["timings"]["agent_steps"] == 3 and "agent" in done["usage"] and not done["out_of_context"]

    steps = _tool_requests(llm)
    assert [r.tools for r in steps] == [["search", "open_source", "neighbours", "summary"]] * 3
    # The model reads what the tools returned, numbered; the failing call is told to it.
    assert steps[1].tool_results[0][1] == "search" and steps[1].tool_results[0][2].startswith("[1] Manual")
    assert steps[2].tool_results[-1][2] == "Error: there is no passage [7] yet"


def test_a_guru_that_turns_the_agent_off_answers_on_the_simple_path(indexed: Guru, llm: ReplyScript) -> None:
    Guru.objects.filter(pk=indexed.pk).update(agentic=False)
    indexed.refresh_from_db()
    llm.push(grades(0.9), ScriptedReply(text="Retries are delayed by countdown [1].", stream=True))
    stream = ask(indexed, QUESTION)
    assert _tool_requests(llm) == []
    assert not [e for e in of_kind(stream, EventKind.STATUS) if e["stage"] == "thinking"]
    assert of_kind(stream, EventKind.DONE)[0]["references"]


def test_a_model_that_fails_while_researching_leaves_the_simple_paths_outcome(indexed: Guru,
                                                                            llm: ReplyScript) -> None:
    llm.push(grades(0.9), ScriptedReply(text="A speculative answer.", stream=True),
                         ScriptedReply(status=400, stream=False),
                         ScriptedReply(text="Retries are delayed by countdown [1].", stream=True))
    stream = ask(indexed, QUESTION)
    done = of_kind(stream, EventKind.DONE)[0]
    assert done["references"] and not done["out_of_context"]
    assert "".join(str(d["text"]) for d in of_kind(stream, EventKind.DELTA)) == "Retries are delayed by countdown [1]."


def test_a_question_naming_several_apis_is_researched_even_when_the_first_search_supports_it(
    indexed: Guru, llm: ReplyScript,
) -> None:
    llm.push(grades(0.9), ScriptedReply(text="A speculative answer.", stream=True),
             ScriptedReply(text="", tool_calls=(("search", {"query": "max_retries"}),), stream=False),
             ScriptedReply(text="", stream=False), grades(0.9),
             ScriptedReply(text="self.retry() retries until max_retries [1].", stream=True))
    stream = ask(indexed, "How do self.retry() and max_retries work together?")
    assert len(_tool_requests(llm)) == 2
    assert "".join(str(d["text"]) for d in of_kind(stream, EventKind.DELTA)) \
        == "self.retry() retries until max_retries [1]."
