"""The answer cache reuses a stored answer only when it was made under the settings in force now: thresholds, model,
embedder and prompts (issue #12 item 6); failed or cancelled answers are never reused (item 12)."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters.llm.fake import ScriptedReply
from backend.answering.events import EventKind
from backend.answering.models import AnswerState, Question
from backend.answering.selectors import answer_fingerprint
from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from tests.fakes.openai_server import FAKE_CHAT_MODEL, OpenAIFakeServer
from tests.integration.answering.answer_support import ask, grades, of_kind

pytestmark = pytest.mark.django_db


def _done(guru: Guru) -> dict[str, object]:
    return of_kind(ask(guru), EventKind.DONE)[0]


def _cache_hit(done: dict[str, object]) -> bool:
    timings = done["timings"]
    return isinstance(timings, dict) and timings.get("cache_hit") == 1


def _answer(llm: OpenAIFakeServer, score: float, text: str = "Call self.retry() [1].") -> None:
    llm.script.push(grades(score), ScriptedReply(text=text))


def test_raising_the_trust_threshold_stops_serving_an_answer_below_it(indexed: Guru,
                                                                      with_llm: OpenAIFakeServer) -> None:
    indexed.trust_score_threshold = 0.5
    indexed.save()
    _answer(with_llm, 0.6)
    first = _done(indexed)
    assert first["trust_score"] > 0.5 and not first["out_of_context"]
    assert _cache_hit(_done(indexed))  # same settings: reused, no model call
    indexed.trust_score_threshold = min(0.99, first["trust_score"] + 0.05)
    indexed.save()
    with_llm.script.push(grades(0.6))
    stricter = _done(indexed)
    # Made again under the new threshold, which the same evidence no longer passes: refused, not served.
    assert not _cache_hit(stricter) and stricter["out_of_context"] and stricter["trust_score"] == 0.0


def test_changing_the_model_or_the_instance_thresholds_expires_the_cache(indexed: Guru,
                                                                          with_llm: OpenAIFakeServer) -> None:
    _answer(with_llm, 0.9)
    _done(indexed)
    assert _cache_hit(_done(indexed))
    with_llm.chat_models = frozenset({FAKE_CHAT_MODEL, "gpt-fake-large"})
    indexed.chat_model = "gpt-fake-large"
    indexed.save()
    _answer(with_llm, 0.9, "A larger model's answer [1].")
    assert not _cache_hit(_done(indexed))
    assert _cache_hit(_done(indexed))  # the new model's answer is reused under the new model
    stored = settings_get()
    stored.rerank_threshold = min(1.0, stored.rerank_threshold + 0.01)
    stored.save()
    _answer(with_llm, 0.9)
    assert not _cache_hit(_done(indexed))


def test_the_fingerprint_names_what_an_answer_depends_on(indexed: Guru, settings: SettingsWrapper) -> None:
    before = answer_fingerprint(indexed)
    assert answer_fingerprint(indexed) == before
    indexed.trust_score_threshold = 0.77
    assert answer_fingerprint(indexed) != before
    indexed.trust_score_threshold = None
    indexed.source_graph = False
    assert answer_fingerprint(indexed) != before
    indexed.source_graph, indexed.agentic = True, False
    assert answer_fingerprint(indexed) != before
    indexed.agentic = True
    settings.OPENGURU_EMBEDDER = {"BACKEND": "hashing", "DIMENSION": "256"}
    assert answer_fingerprint(indexed) != before


@pytest.mark.parametrize("state", [AnswerState.CANCELLED, AnswerState.FAILED, AnswerState.PENDING])
def test_an_unfinished_answer_is_never_reused(indexed: Guru, state: AnswerState) -> None:
    first = _done(indexed)
    # Even with text in it (rows from an older version, or a bug): only COMPLETE answers are reused.
    Question.objects.filter(pk=first["question_id"]).update(state=state)
    again = _done(indexed)
    assert not _cache_hit(again)
    assert Question.objects.get(pk=again["question_id"]).state == AnswerState.COMPLETE
