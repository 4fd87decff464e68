"""Keys in the environment switch the product from offline to a real provider (here: fake servers)."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.llm.fake import ScriptedReply
from backend.config.settings.components.models import embedder_from_env, llm_from_env, reranker_from_env
from backend.pipeline.answer_types import AnswerContext, AnswerRequest
from backend.pipeline.answerer_llm import LLMAnswerer
from backend.pipeline.answerer_offline import NO_LLM_NOTICE, OfflineAnswerer
from backend.pipeline.llm_types import Passage, TextDelta
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer
from tests.fakes.tei_server import TeiFake

REQUEST = AnswerRequest("How do I retry?", "Celery Guru", "Celery",
                        (AnswerContext(1, "Retrying", "Call self.retry() in a bound task."),))


def _text(events: object) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))  # type: ignore[attr-defined]


@pytest.mark.django_db  # nothing in the environment: the provider saved on the Settings page is read
def test_without_keys_the_offline_answerer_answers() -> None:
    answerer = registry.answerer()
    assert isinstance(answerer, OfflineAnswerer) and not answerer.uses_llm
    assert _text(answerer.answer(REQUEST)).startswith(NO_LLM_NOTICE)


def test_openai_key_and_base_url_route_answers_to_that_server(
    settings: SettingsWrapper, openai_server: OpenAIFakeServer
) -> None:
    settings.OPENGURU_LLM = openai_server.llm_settings()
    openai_server.script.push(ScriptedReply(text="Use self.retry() [1]."))
    answerer = registry.answerer()
    assert isinstance(answerer, LLMAnswerer)
    assert _text(answerer.answer(REQUEST)) == "Use self.retry() [1]."
    assert openai_server.script.requests[-1].model == FAKE_CHAT_MODEL


def test_a_gurus_model_override_is_sent(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> None:
    openai_server.chat_models = frozenset({FAKE_CHAT_MODEL, "special-model"})
    settings.OPENGURU_LLM = llm_from_env({"OPENAI_API_KEY": FAKE_OPENAI_KEY,
                                          "OPENAI_BASE_URL": openai_server.api_base})
    list(registry.answerer(model="special-model").answer(REQUEST))
    assert openai_server.script.requests[-1].model == "special-model"


def test_openai_embedder_selected_explicitly_uses_the_server(
    settings: SettingsWrapper, openai_server: OpenAIFakeServer
) -> None:
    settings.OPENGURU_EMBEDDER = embedder_from_env({
        "OPENGURU_EMBEDDER": "openai", "OPENAI_API_KEY": FAKE_OPENAI_KEY, "OPENAI_BASE_URL": openai_server.api_base,
        "OPENGURU_EMBEDDING_DIMENSION": "384",
    })
    vector = registry.embedder().embed_query("retry a task")
    assert len(vector) == 384 == registry.embedder().dimension
    assert registry.embedder_id() == "openai:text-embedding-3-small:384"


def test_selecting_openai_embeddings_without_a_key_fails_clearly(settings: SettingsWrapper) -> None:
    from django.core.exceptions import ImproperlyConfigured

    settings.OPENGURU_EMBEDDER = embedder_from_env({"OPENGURU_EMBEDDER": "openai"})
    with pytest.raises(ImproperlyConfigured, match="OPENAI_API_KEY"):
        registry.embedder()


def test_gemini_key_routes_answers_to_gemini(settings: SettingsWrapper, gemini_server: FakeGeminiServer) -> None:
    settings.OPENGURU_LLM = llm_from_env({"GEMINI_API_KEY": FAKE_GEMINI_KEY, "GEMINI_BASE_URL": gemini_server.url})
    gemini_server.script.push(ScriptedReply(text="Gemini says: self.retry() [1]."))
    answerer = registry.answerer()
    assert isinstance(answerer, LLMAnswerer)
    assert _text(answerer.answer(REQUEST)) == "Gemini says: self.retry() [1]."
    sent = gemini_server.script.requests[-1]
    assert sent.model == "gemini-2.5-flash"
    assert sent.raw["generationConfig"]["thinkingConfig"] == {"thinking_budget": 0}  # thinking off by default


def test_reranker_url_switches_to_the_http_reranker(settings: SettingsWrapper, tei_fake: TeiFake) -> None:
    assert registry.reranker().name == "local-fusion"
    settings.OPENGURU_RERANKER = reranker_from_env({"OPENGURU_RERANKER_URL": tei_fake.base_url})
    passages = [Passage("Brokers carry messages."), Passage("Retry a task with self.retry().")]
    results = registry.reranker().rerank("how to retry a task", passages)
    assert results[0].index == 1 and len(tei_fake.requests) == 1
