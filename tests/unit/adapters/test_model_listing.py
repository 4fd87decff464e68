"""ChatModel.available_models for the in-memory fake and each real SDK against its fake server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from backend.adapters.llm.fake import ScriptedChatModel
from backend.adapters.llm.gemini_chat import GeminiChatModel
from backend.adapters.llm.listing import MAX_MODEL_IDS, MAX_PAGES
from backend.adapters.llm.openai_chat import OpenAIChatModel
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.ports import ChatModel
from tests.contracts import TEST_BACKOFF_BASE, TEST_MAX_RETRIES, TEST_TIMEOUT
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer


@dataclass
class ListingHarness:
    """A chat model, and how to change what its provider lists or make the listing fail."""

    chat: ChatModel
    offer: Callable[[list[str]], None]
    fail_with: Callable[[int], None]
    with_bad_key: Callable[[], ChatModel]
    requests: Callable[[], int]


def _openai(server: OpenAIFakeServer, key: str = FAKE_OPENAI_KEY) -> OpenAIChatModel:
    return OpenAIChatModel(api_key=key, model=FAKE_CHAT_MODEL, base_url=server.api_base, timeout=TEST_TIMEOUT,
                           max_retries=TEST_MAX_RETRIES, backoff_base=TEST_BACKOFF_BASE)


def _gemini(server: FakeGeminiServer, key: str = FAKE_GEMINI_KEY, *, page_size: int = 100) -> GeminiChatModel:
    return GeminiChatModel(api_key=key, base_url=server.url, timeout=TEST_TIMEOUT, max_retries=TEST_MAX_RETRIES,
                           backoff_base=TEST_BACKOFF_BASE, list_page_size=page_size)


@pytest.fixture
def scripted_listing() -> ListingHarness:
    chat = ScriptedChatModel()

    def offer(ids: list[str]) -> None:
        chat.models = ids

    def fail_with(status: int) -> None:
        chat.models_status = status

    def bad_key() -> ChatModel:
        broken = ScriptedChatModel()
        broken.models_status = 401
        return broken

    return ListingHarness(chat, offer, fail_with, bad_key, requests=lambda: 0)


@pytest.fixture
def openai_listing(openai_server: OpenAIFakeServer) -> ListingHarness:
    def offer(ids: list[str]) -> None:
        openai_server.chat_models = frozenset(ids)

    def fail_with(status: int) -> None:
        openai_server.models_status = status

    return ListingHarness(_openai(openai_server), offer, fail_with, lambda: _openai(openai_server, "sk-wrong-key"),
                          requests=lambda: openai_server.models_listed)


@pytest.fixture
def gemini_listing(gemini_server: FakeGeminiServer) -> ListingHarness:
    def offer(ids: list[str]) -> None:
        gemini_server.listed = [(model, ["generateContent"]) for model in ids]

    def fail_with(status: int) -> None:
        gemini_server.models_status = status

    return ListingHarness(_gemini(gemini_server), offer, fail_with, lambda: _gemini(gemini_server, "wrong-key"),
                          requests=lambda: len(gemini_server.list_queries))


@pytest.fixture(params=["scripted", "openai", "gemini"])
def listing(request: pytest.FixtureRequest) -> ListingHarness:
    found: ListingHarness = request.getfixturevalue(f"{request.param}_listing")
    return found


def test_the_default_list_includes_the_models_own_id(listing: ListingHarness) -> None:
    assert listing.chat.model in listing.chat.available_models()


def test_lists_exactly_what_the_provider_offers(listing: ListingHarness) -> None:
    listing.offer(["alpha-1", "beta-2", "gamma-3"])
    assert sorted(listing.chat.available_models()) == ["alpha-1", "beta-2", "gamma-3"]


def test_a_bad_key_is_a_permanent_error(listing: ListingHarness) -> None:
    with pytest.raises(PermanentServiceError):
        listing.with_bad_key().available_models()


def test_server_errors_are_transient_and_retried_at_most_once(listing: ListingHarness) -> None:
    listing.fail_with(503)
    with pytest.raises(TransientServiceError):
        listing.chat.available_models()
    if listing.requests():  # over HTTP: one retry only, as someone waits on the settings form
        assert listing.requests() == 2


def test_openai_lists_ids_as_given_less_families_that_cannot_chat(openai_server: OpenAIFakeServer) -> None:
    not_chat = {"text-embedding-3-small", "nomic-embed-text:latest", "whisper-1", "gpt-4o-mini-tts", "dall-e-3",
                "omni-moderation-latest", "gpt-4o-transcribe", "gpt-image-1", "gpt-4o-realtime-preview",
                "davinci-002"}
    openai_server.chat_models = frozenset({"gpt-4o-mini", "ft:gpt-4o:acme::abc", "llama3.2:latest", *not_chat})
    assert sorted(_openai(openai_server).available_models()) == ["ft:gpt-4o:acme::abc", "gpt-4o-mini",
                                                                  "llama3.2:latest"]


def test_openai_server_without_a_model_list_is_a_clear_permanent_error(openai_server: OpenAIFakeServer) -> None:
    openai_server.models_status = 404
    with pytest.raises(PermanentServiceError, match="does not list its models"):
        _openai(openai_server).available_models()
    assert openai_server.models_listed == 1


def test_gemini_strips_the_prefix_and_keeps_only_models_that_generate(gemini_server: FakeGeminiServer) -> None:
    gemini_server.listed.append(("gemini-legacy", None))  # no supportedGenerationMethods: kept, cannot tell
    assert _gemini(gemini_server).available_models() == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-legacy"]


def test_gemini_follows_pagination(gemini_server: FakeGeminiServer) -> None:
    gemini_server.max_page_size = 2
    gemini_server.listed = [(f"gemini-m{i}", ["generateContent"]) for i in range(5)]
    assert _gemini(gemini_server).available_models() == [f"gemini-m{i}" for i in range(5)]
    tokens = [query.get("pageToken", [""])[0] for query in gemini_server.list_queries]
    assert tokens == ["", "offset-2", "offset-4"]
    assert all(query["pageSize"] == ["100"] for query in gemini_server.list_queries)


def test_gemini_pagination_is_bounded(gemini_server: FakeGeminiServer) -> None:
    gemini_server.max_page_size = 1
    gemini_server.listed = [(f"gemini-m{i}", ["generateContent"]) for i in range(MAX_PAGES + 5)]
    assert len(_gemini(gemini_server).available_models()) == MAX_PAGES
    assert len(gemini_server.list_queries) == MAX_PAGES


def test_gemini_listing_stops_at_the_id_cap(gemini_server: FakeGeminiServer) -> None:
    gemini_server.listed = [(f"gemini-m{i}", ["generateContent"]) for i in range(MAX_MODEL_IDS + 50)]
    assert len(_gemini(gemini_server, page_size=1000).available_models()) == MAX_MODEL_IDS
    assert len(gemini_server.list_queries) == 1


def test_gemini_endpoint_without_a_model_list_is_a_clear_permanent_error(gemini_server: FakeGeminiServer) -> None:
    gemini_server.models_status = 404
    with pytest.raises(PermanentServiceError, match="does not list its models"):
        _gemini(gemini_server).available_models()
    assert len(gemini_server.list_queries) == 1
