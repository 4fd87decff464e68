"""Dashboard settings pages: a guru's overrides, the instance settings, validation, access and no secrets shown."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.selectors import thresholds_for
from backend.config.settings.components.models import llm_from_env
from backend.core.models import Settings
from backend.core.selectors import settings_get
from backend.core.services import settings_update
from backend.dashboard.settings_page.selectors import redact, safe_url
from backend.gurus.models import Guru
from backend.gurus.services import collection_name_for
from backend.sources.indexing import chunking_config
from backend.sources.models import DataSource
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.fakes.gemini_server import FAKE_GEMINI_KEY, FakeGeminiServer
from tests.fakes.openai_server import FAKE_CHAT_MODEL, FAKE_OPENAI_KEY, OpenAIFakeServer

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: its query plans differ

OnCommit = Callable[..., AbstractContextManager[list[Callable[[], Any]]]]
OPENAI_KEY = "sk-test-SECRET-0123456789abcdef"
MILVUS_TOKEN = "root:SuperSecretMilvusPass"
RERANK_KEY = "rerank-SECRET-key-42"
INSTANCE = {"rerank_threshold": "0.1", "trust_score_threshold": "0.5", "chunk_size": "", "chunk_overlap": "",
            "chunk_min_length": "50", "history_turns": "4"}
# The chat provider form; with the environment choosing the provider only the default model is posted.
LLM = "/dashboard/settings/llm/"


@pytest.fixture
def online(settings: SettingsWrapper) -> None:
    """An OpenAI-compatible provider with a key, a Milvus server with a token and an HTTP reranker with a key."""
    settings.OPENGURU_LLM = {"PROVIDER": "openai", "MODEL": "gpt-4o-mini", "API_KEY": OPENAI_KEY,
                             "BASE_URL": f"https://user:{OPENAI_KEY}@llm.example.com/v1?key={OPENAI_KEY}",
                             "TIMEOUT": "60"}
    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "memory", "URI": "http://root:hunter22@milvus:19530",
                                      "TOKEN": MILVUS_TOKEN}
    settings.OPENGURU_RERANKER = {"BACKEND": "local", "URL": "https://rerank.example.com/rerank",
                                  "MODEL": "bge", "API_KEY": RERANK_KEY}


@pytest.fixture
def with_llm(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> OpenAIFakeServer:
    """The OpenAI SDK against the fake server, which lists three chat models."""
    settings.OPENGURU_LLM = openai_server.llm_settings()
    openai_server.chat_models = frozenset({FAKE_CHAT_MODEL, "gpt-4.1-mini", "gpt-4o"})
    return openai_server


def _guru_form(**changes: str) -> dict[str, str]:
    return {"rerank_threshold": "", "trust_score_threshold": "", "chat_model": "", **changes}


# --- per-guru settings ---------------------------------------------------------------------------


def test_guru_page_shows_effective_thresholds_and_providers(client: Client, guru: Guru) -> None:
    settings_update(rerank_threshold=0.2, trust_score_threshold=0.6)
    Guru.objects.filter(pk=guru.pk).update(trust_score_threshold=0.75)
    page = client.get("/dashboard/g/celery/settings/").content.decode()
    assert "0.2" in page and "0.75" in page and "default 0.6" in page
    assert "instance default" in page and "this guru" in page
    assert "hashing:384" in page and "offline-extractive" in page and "memory" in page
    assert collection_name_for("celery") in page


def test_saving_overrides_changes_the_thresholds_in_force(client: Client, guru: Guru) -> None:
    response = client.post("/dashboard/g/celery/settings/", _guru_form(rerank_threshold="0.3",
                                                                        trust_score_threshold="0.8"))
    assert response.status_code == 302 and response["Location"] == "/dashboard/g/celery/settings/"
    guru.refresh_from_db()
    assert thresholds_for(guru) == (0.3, 0.8)
    client.post("/dashboard/g/celery/settings/", _guru_form(rerank_threshold="0.3"))
    guru.refresh_from_db()
    assert guru.trust_score_threshold is None and thresholds_for(guru) == (0.3, settings_get().trust_score_threshold)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("rerank_threshold", "1.5", "less than or equal to 1"),
    ("trust_score_threshold", "-0.1", "greater than or equal to 0"),
    ("trust_score_threshold", "abc", "Enter a number"),
    ("rerank_threshold", "nan", "Enter a number"),
])
def test_bad_thresholds_are_refused_with_a_clear_error(
    client: Client, guru: Guru, field: str, value: str, message: str
) -> None:
    response = client.post("/dashboard/g/celery/settings/", _guru_form(**{field: value}))
    assert response.status_code == 200 and message in response.content.decode()
    guru.refresh_from_db()
    assert guru.rerank_threshold is None and guru.trust_score_threshold is None


def test_a_chat_model_needs_a_configured_llm(client: Client, guru: Guru) -> None:
    response = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4o"))
    assert "No chat LLM is configured" in response.content.decode()
    assert Guru.objects.get(pk=guru.pk).chat_model == ""


def test_an_unchanged_chat_model_does_not_block_saving_thresholds(client: Client, guru: Guru) -> None:
    Guru.objects.filter(pk=guru.pk).update(chat_model="gpt-4o")  # set while an LLM was configured
    response = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4o", rerank_threshold="0.4"))
    assert response.status_code == 302
    guru.refresh_from_db()
    assert (guru.chat_model, guru.rerank_threshold) == ("gpt-4o", 0.4)


def test_a_chat_model_is_validated_against_the_provider(
    client: Client, guru: Guru, with_llm: OpenAIFakeServer
) -> None:
    bad = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt 4o; rm -rf"))
    assert "Use a model id" in bad.content.decode() and Guru.objects.get(pk=guru.pk).chat_model == ""
    assert with_llm.models_listed == 0  # a malformed id never reaches the provider
    good = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4.1-mini"))
    assert good.status_code == 302 and Guru.objects.get(pk=guru.pk).chat_model == "gpt-4.1-mini"
    page = client.get("/dashboard/g/celery/settings/").content.decode()
    assert "gpt-4.1-mini" in page and "this guru&#x27;s override" in page
    assert "Saved." in page and "could not be read" not in page


def test_a_model_the_provider_does_not_offer_is_refused_with_what_it_offers(
    client: Client, guru: Guru, with_llm: OpenAIFakeServer
) -> None:
    response = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4.1-mimi"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "does not offer gpt-4.1-mimi as a chat model. Did you mean gpt-4.1-mini?" in page
    assert f"Available: gpt-4.1-mini, gpt-4o, {FAKE_CHAT_MODEL}." in page
    assert Guru.objects.get(pk=guru.pk).chat_model == ""


def test_an_embedding_model_the_provider_lists_is_no_chat_model(
    client: Client, guru: Guru, with_llm: OpenAIFakeServer
) -> None:
    with_llm.chat_models = with_llm.chat_models | {"text-embedding-3-small"}  # /models lists every kind
    response = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="text-embedding-3-small"))
    assert "does not offer text-embedding-3-small as a chat model" in response.content.decode()
    assert Guru.objects.get(pk=guru.pk).chat_model == ""


def test_a_long_model_list_is_shortened_sorted_in_the_error(
    client: Client, guru: Guru, with_llm: OpenAIFakeServer
) -> None:
    with_llm.chat_models = frozenset(f"model-{i:02d}" for i in range(25))
    page = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="other")).content.decode()
    shown = ", ".join(f"model-{i:02d}" for i in range(10))
    assert f"Available: {shown} and 15 more." in page and "model-10" not in page


def test_the_model_list_is_cached_for_a_few_minutes(client: Client, guru: Guru, with_llm: OpenAIFakeServer) -> None:
    client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4o"))
    client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4.1-mini"))
    client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="nope"))
    assert with_llm.models_listed == 1
    client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4.1-mini", rerank_threshold="0.2"))
    assert with_llm.models_listed == 1  # an unchanged id is not checked at all


@pytest.mark.parametrize("status", [500, 401])
def test_when_the_model_list_fails_the_id_is_saved_with_a_warning(
    client: Client, guru: Guru, with_llm: OpenAIFakeServer, status: int
) -> None:
    with_llm.models_status = status
    response = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4o"), follow=True)
    page = response.content.decode()
    assert Guru.objects.get(pk=guru.pk).chat_model == "gpt-4o"
    assert "gpt-4o was saved without being checked" in page and f"HTTP {status}" in page
    assert FAKE_OPENAI_KEY not in page
    with_llm.models_status = 200
    client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="nope"))
    assert with_llm.models_listed == (2 if status == 500 else 1) + 1  # failures are not cached


def test_a_rejected_key_is_named_without_any_part_of_it(
    client: Client, guru: Guru, with_llm: OpenAIFakeServer, settings: SettingsWrapper
) -> None:
    settings.OPENGURU_LLM = {**settings.OPENGURU_LLM, "API_KEY": "sk-wrong-SECRET-4242"}
    page = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gpt-4o"), follow=True).content.decode()
    assert "rejected the API key" in page and Guru.objects.get(pk=guru.pk).chat_model == "gpt-4o"
    assert "sk-wro" not in page and "4242" not in page


def test_an_ollama_tag_may_be_left_out(client: Client, guru: Guru, with_llm: OpenAIFakeServer) -> None:
    with_llm.chat_models = frozenset({"llama3.2:latest", "qwen3:8b"})
    assert client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="llama3.2")).status_code == 302
    assert client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="qwen3")).status_code == 200


def test_gemini_ids_are_checked_with_or_without_their_prefix(
    client: Client, guru: Guru, settings: SettingsWrapper, gemini_server: FakeGeminiServer
) -> None:
    settings.OPENGURU_LLM = llm_from_env({"GEMINI_API_KEY": FAKE_GEMINI_KEY, "GEMINI_BASE_URL": gemini_server.url})
    assert client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="models/gemini-2.5-pro")
                       ).status_code == 302
    refused = client.post("/dashboard/g/celery/settings/", _guru_form(chat_model="gemini-embedding-001"))
    assert "does not offer gemini-embedding-001" in refused.content.decode()
    assert Guru.objects.get(pk=guru.pk).chat_model == "models/gemini-2.5-pro"


def test_another_maintainer_gets_404_and_anonymous_a_login_redirect(client: Client, guru: Guru) -> None:
    client.force_login(UserFactory(username="bob"))
    assert client.get("/dashboard/g/celery/settings/").status_code == 404
    assert client.post("/dashboard/g/celery/settings/", _guru_form(rerank_threshold="0.9")).status_code == 404
    assert Guru.objects.get(pk=guru.pk).rerank_threshold is None
    client.logout()
    response = client.get("/dashboard/g/celery/settings/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_guru_page_shows_no_secrets(client: Client, guru: Guru, online: None) -> None:
    page = client.get("/dashboard/g/celery/settings/").content.decode()
    for secret in [OPENAI_KEY, MILVUS_TOKEN, RERANK_KEY, "hunter22"]:
        assert secret not in page


# --- instance settings ---------------------------------------------------------------------------


def test_instance_page_is_for_staff_only(client: Client) -> None:
    response = client.get("/dashboard/settings/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(UserFactory(username="ana"))
    assert client.get("/dashboard/settings/").status_code == 403
    assert client.post("/dashboard/settings/", {**INSTANCE, "history_turns": "9"}).status_code == 403
    assert client.post("/dashboard/settings/reindex/").status_code == 403
    assert settings_get().history_turns == 4


def test_instance_page_shows_derived_defaults_and_providers(client: Client, staff: Any) -> None:
    page = client.get("/dashboard/settings/").content.decode()
    # The hashing embedder reads 256 tokens: 254 without the two special tokens, 12 % overlap.
    assert 'placeholder="254"' in page and 'placeholder="30"' in page
    assert "derived from the 256-token window" in page
    assert "hashing:384" in page and "Vector dimension" in page


def test_instance_page_shows_no_secrets(client: Client, staff: Any, online: None, settings: SettingsWrapper) -> None:
    settings.FIRECRAWL_API_KEY = "fc-SECRET-firecrawl-key"
    page = client.get("/dashboard/settings/").content.decode()
    for secret in [OPENAI_KEY, MILVUS_TOKEN, RERANK_KEY, "hunter22", "fc-SECRET-firecrawl-key", settings.SECRET_KEY]:
        assert secret not in page
    assert "https://llm.example.com/v1" in page and "http://milvus:19530" in page and "configured" in page


def test_saving_split_sizes_changes_chunking_and_offers_a_reindex(client: Client, staff: Any) -> None:
    response = client.post("/dashboard/settings/", {**INSTANCE, "chunk_size": "200", "chunk_overlap": "40",
                                                    "chunk_min_length": "80"})
    assert response.status_code == 302 and response["Location"] == "/dashboard/settings/?split-changed=1#reindex"
    config = chunking_config()
    assert (config.max_tokens, config.overlap_tokens, config.min_chars) == (200, 40, 80)
    page = client.get(response["Location"]).content.decode()
    assert "Existing chunks keep the old sizes" in page and "settings-attention" in page


def test_saving_thresholds_only_does_not_ask_for_a_reindex(client: Client, staff: Any) -> None:
    response = client.post("/dashboard/settings/", {**INSTANCE, "rerank_threshold": "0.25", "history_turns": "6"})
    assert response.status_code == 302 and response["Location"] == "/dashboard/settings/"
    stored = Settings.objects.get()
    assert (stored.rerank_threshold, stored.history_turns) == (0.25, 6)
    assert thresholds_for(GuruFactory()) == (0.25, 0.5)


@pytest.mark.parametrize(("changes", "field_message"), [
    ({"chunk_size": "300"}, "Use 32–254 tokens"),
    ({"chunk_size": "8"}, "Use 32–254 tokens"),
    ({"chunk_size": "100", "chunk_overlap": "50"}, "at most 49"),
    ({"chunk_overlap": "127"}, "less than half the chunk size (254 tokens)"),
    ({"trust_score_threshold": "2"}, "less than or equal to 1"),
    ({"history_turns": "500"}, "less than or equal to 20"),
    ({"chunk_min_length": "-1"}, "greater than or equal to 0"),
])
def test_bad_instance_settings_are_refused(
    client: Client, staff: Any, changes: dict[str, str], field_message: str
) -> None:
    response = client.post("/dashboard/settings/", {**INSTANCE, **changes})
    assert response.status_code == 200 and field_message in response.content.decode()
    stored = settings_get()
    assert (stored.chunk_size, stored.chunk_overlap, stored.history_turns) == (None, None, 4)


def test_an_instance_default_model_needs_a_configured_llm(client: Client, staff: Any) -> None:
    response = client.post(LLM, {"llm_provider": "offline", "answer_model": "gpt-4o"})
    assert response.status_code == 200 and "No chat LLM is configured" in response.content.decode()
    assert settings_get().answer_model == ""


def test_the_instance_answer_model_is_checked_the_same_way(
    client: Client, staff: Any, with_llm: OpenAIFakeServer
) -> None:
    refused = client.post(LLM, {"answer_model": "gpt-5-ultra"})
    assert refused.status_code == 200 and "does not offer gpt-5-ultra" in refused.content.decode()
    assert settings_get().answer_model == ""
    assert client.post(LLM, {"answer_model": "gpt-4o"}).status_code == 302
    assert settings_get().answer_model == "gpt-4o"
    cache.clear()  # so that the next id is listed again, and fails
    with_llm.models_status = 503
    page = client.post(LLM, {"answer_model": "gpt-4.1-mini"}, follow=True)
    assert settings_get().answer_model == "gpt-4.1-mini"
    assert "gpt-4.1-mini was saved without being checked" in page.content.decode()


def test_reindex_every_source_schedules_all_gurus(
    client: Client, staff: Any, django_capture_on_commit_callbacks: OnCommit
) -> None:
    sources = [DataSourceFactory(guru=GuruFactory()) for _ in range(2)] + [DataSourceFactory()]
    before = {s.pk: s.generation for s in sources}
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post("/dashboard/settings/reindex/")
    assert response.status_code == 302
    after = dict(DataSource.objects.values_list("pk", "generation"))
    assert all(after[pk] == generation + 1 for pk, generation in before.items())
    assert "Re-indexing 3 sources of 3 gurus" in client.get("/dashboard/settings/").content.decode()
    assert client.get("/dashboard/settings/reindex/").status_code == 405


def test_safe_url_and_redact_drop_credentials(settings: SettingsWrapper) -> None:
    settings.OPENGURU_LLM = {"PROVIDER": "openai", "API_KEY": OPENAI_KEY}
    assert safe_url("https://u:p@host.example:8443/v1?api_key=x#frag") == "https://host.example:8443/v1"
    assert safe_url("/data/milvus.db") == "local file" and safe_url("") == ""
    assert redact(f"failed at http://u:pw@h/ with key {OPENAI_KEY}") == "failed at http://•••@h/ with key •••"
