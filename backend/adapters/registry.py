"""Builds adapter instances from settings; the one place implementations are chosen.

Instances are cached per configuration and rebuilt when a test overrides the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from backend.pipeline.ports import (
    Answerer,
    ChatModel,
    Embedder,
    PageFetcher,
    PdfExtractor,
    RepoReader,
    Reranker,
    TranscriptFetcher,
    VectorStore,
)

if TYPE_CHECKING:
    from backend.adapters.net_guard import UrlPolicy
    from backend.adapters.web.fetcher import HttpPageFetcher

Config = dict[str, str]


def _require(config: Config, key: str, what: str) -> str:
    if not config.get(key):
        raise ImproperlyConfigured(f"{what} needs {key.lower()} (see README: configuration).")
    return config[key]


def _milvus_store(config: Config) -> VectorStore:
    from backend.adapters.vector_store.milvus import MilvusVectorStore

    return MilvusVectorStore(uri=_require(config, "URI", "Milvus (MILVUS_URI)"), token=config.get("TOKEN", ""),
                             load_prefix=config.get("LOAD_PREFIX", ""), timeout=float(config.get("TIMEOUT") or 10))


def _memory_store(config: Config) -> VectorStore:
    from backend.adapters.vector_store.fake import InMemoryVectorStore

    return InMemoryVectorStore(namespace=config.get("URI") or "default")


def _local_minilm(config: Config) -> Embedder:
    from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder

    return LocalMiniLMEmbedder()


def _hashing(config: Config) -> Embedder:
    from backend.adapters.embeddings.fake import HashingEmbedder

    return HashingEmbedder(dimension=int(config.get("DIMENSION") or 384))


def _openai_embedder(config: Config) -> Embedder:
    from backend.adapters.embeddings.openai_embed import OpenAIEmbedder

    return OpenAIEmbedder(api_key=_require(config, "API_KEY", "OpenAI embeddings (OPENAI_API_KEY)"),
                          model=config["MODEL"], dimension=int(config["DIMENSION"]),
                          base_url=config.get("BASE_URL") or None)


def _gemini_embedder(config: Config) -> Embedder:
    from backend.adapters.embeddings.gemini_embed import GeminiEmbedder

    return GeminiEmbedder(api_key=_require(config, "API_KEY", "Gemini embeddings (GEMINI_API_KEY)"),
                          model=config["MODEL"], dimension=int(config["DIMENSION"]),
                          base_url=config.get("BASE_URL") or None)


def _openai_chat(config: Config) -> ChatModel:
    from backend.adapters.llm.openai_chat import OpenAIChatModel

    return OpenAIChatModel(api_key=_require(config, "API_KEY", "OpenAI (OPENAI_API_KEY)"), model=config["MODEL"],
                           base_url=config.get("BASE_URL") or None, timeout=float(config.get("TIMEOUT") or 60),
                           max_retries=int(config.get("MAX_RETRIES") or 3))


def _compatible_chat(config: Config) -> ChatModel:
    # Local servers (Ollama, vLLM, LM Studio) take any key, but the SDK requires one.
    _require(config, "BASE_URL", "An OpenAI-compatible server (its base URL)")
    return _openai_chat({**config, "API_KEY": config.get("API_KEY") or "local"})


def _gemini_chat(config: Config) -> ChatModel:
    from backend.adapters.llm.gemini_chat import GeminiChatModel

    budget = int(config.get("THINKING_BUDGET") or -1)
    return GeminiChatModel(api_key=_require(config, "API_KEY", "Gemini (GEMINI_API_KEY)"), model=config["MODEL"],
                           base_url=config.get("BASE_URL") or None, timeout=float(config.get("TIMEOUT") or 60),
                           thinking_budget=None if budget < 0 else budget,
                           max_retries=int(config.get("MAX_RETRIES") or 3))


def _local_reranker(config: Config) -> Reranker:
    from backend.pipeline.rerank_local import LocalFusionReranker

    return LocalFusionReranker()


def _http_reranker(config: Config) -> Reranker:
    from backend.adapters.reranker.http_rerank import HttpReranker

    return HttpReranker(base_url=_require(config, "URL", "The HTTP reranker (OPENGURU_RERANKER_URL)"),
                        model=config.get("MODEL", ""), api_key=config.get("API_KEY", ""))


VECTOR_STORES: dict[str, Callable[[Config], VectorStore]] = {"milvus": _milvus_store, "memory": _memory_store}
EMBEDDERS: dict[str, Callable[[Config], Embedder]] = {
    "local-minilm": _local_minilm, "hashing": _hashing, "openai": _openai_embedder, "gemini": _gemini_embedder,
}
CHAT_MODELS: dict[str, Callable[[Config], ChatModel]] = {
    "openai": _openai_chat, "gemini": _gemini_chat, "openai-compatible": _compatible_chat,
}
RERANKERS: dict[str, Callable[[Config], Reranker]] = {"local": _local_reranker, "http": _http_reranker}


def _build(kind: str, table: dict[str, Callable[[Config], Any]], config: Config, key: str = "BACKEND") -> Any:
    name = config.get(key, "")
    factory = table.get(name)
    if factory is None:
        raise ImproperlyConfigured(f"Unknown {kind} {name!r}; choose one of {sorted(table)}.")
    return factory(config)


def _frozen(config: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in config.items()))


@cache
def _cached(kind: str, frozen: tuple[tuple[str, str], ...]) -> Any:
    """One instance per kind and configuration; each public accessor casts to the port its table builds."""
    config = dict(frozen)
    if kind == "vector store":
        return _build(kind, VECTOR_STORES, config)
    if kind == "embedder":
        return _build(kind, EMBEDDERS, config)
    if kind == "reranker":
        return _build(kind, RERANKERS, config)
    return _build(kind, CHAT_MODELS, config, key="PROVIDER")


def vector_store() -> VectorStore:
    """The configured vector store (settings.OPENGURU_VECTOR_STORE)."""
    return cast(VectorStore, _cached("vector store", _frozen(settings.OPENGURU_VECTOR_STORE)))


def embedder() -> Embedder:
    """The configured embedder (settings.OPENGURU_EMBEDDER)."""
    return cast(Embedder, _cached("embedder", _frozen(settings.OPENGURU_EMBEDDER)))


def word_embedder() -> Embedder:
    """The embedder that compares single words (settings.OPENGURU_WORD_EMBEDDER)."""
    return cast(Embedder, _cached("embedder", _frozen(settings.OPENGURU_WORD_EMBEDDER)))


def embedder_id() -> str:
    """Identity of the configured embedder's vector space: vectors of different ids never mix."""
    config = settings.OPENGURU_EMBEDDER
    parts = [config.get("BACKEND", ""), config.get("MODEL", ""), str(embedder().dimension)]
    return ":".join(p for p in parts if p)


def reranker() -> Reranker:
    """The configured reranker (settings.OPENGURU_RERANKER)."""
    return cast(Reranker, _cached("reranker", _frozen(settings.OPENGURU_RERANKER)))


StoredLlm = Callable[[], Config | None]
# Where the chat provider staff saved is read from: set by core at start-up, since adapters import no models.
_stored_llm: list[StoredLlm] = []


def use_stored_llm(source: StoredLlm) -> None:
    """Read the saved chat configuration through `source` (cheap: it caches and re-reads every few seconds)."""
    _stored_llm[:] = [source]


def llm_env_wins(config: Config | None = None) -> bool:
    """Whether the environment chooses the chat provider, which then overrides the saved configuration."""
    config = settings.OPENGURU_LLM if config is None else config
    if "FROM_ENV" in config:
        return config["FROM_ENV"] == "1"
    return config.get("PROVIDER", "offline") != "offline"  # a hand-written OPENGURU_LLM naming a provider


def llm_config() -> Config:
    """The chat configuration in force: the environment's when it chooses a provider, else the saved one."""
    config = dict(settings.OPENGURU_LLM)
    if llm_env_wins(config) or not _stored_llm:
        return config
    stored = _stored_llm[0]()
    return {**config, **stored} if stored else config


def build_chat_model(config: Config) -> ChatModel:
    """A new, uncached chat model for this configuration (a connection test of values not saved yet)."""
    return cast(ChatModel, _build("chat model", CHAT_MODELS, config, key="PROVIDER"))


def llm_enabled() -> bool:
    """Whether a chat provider is chosen (answers are generated), without building its client."""
    return llm_config().get("PROVIDER") != "offline"


def chat_model(*, model: str = "") -> ChatModel | None:
    """The configured chat LLM, optionally with another model id (a guru's override); None when offline."""
    config = llm_config()
    if config.get("PROVIDER") == "offline":
        return None
    if model:
        config["MODEL"] = model
    return cast(ChatModel, _cached("chat model", _frozen(config)))


def answerer(*, model: str = "") -> Answerer:
    """The LLM answerer over the configured chat model, or the offline extractive answerer."""
    from backend.pipeline.answerer_llm import LLMAnswerer
    from backend.pipeline.answerer_offline import OfflineAnswerer

    chat = chat_model(model=model)
    return OfflineAnswerer(embedder=embedder()) if chat is None else LLMAnswerer(chat)


def url_policy() -> UrlPolicy:
    """What may be fetched on a user's behalf (public addresses plus OPENGURU_FETCH_ALLOWLIST)."""
    from backend.adapters.net_guard import UrlPolicy

    return UrlPolicy.from_setting(settings.OPENGURU_FETCH_ALLOWLIST)


def page_fetcher() -> PageFetcher:
    """Firecrawl when FIRECRAWL_API_KEY or FIRECRAWL_API_URL is set, else the built-in fetcher."""
    if settings.FIRECRAWL_API_KEY or settings.FIRECRAWL_API_URL:
        from backend.adapters.web.firecrawl import FirecrawlPageFetcher

        return FirecrawlPageFetcher(api_key=settings.FIRECRAWL_API_KEY or "self-hosted",
                                    api_url=settings.FIRECRAWL_API_URL or None, policy=url_policy())
    return web_fetcher()


def web_fetcher() -> HttpPageFetcher:
    """The built-in HTTP fetcher (also used for robots.txt and sitemaps when Firecrawl fetches pages)."""
    from backend.adapters.web.fetcher import HttpPageFetcher

    return HttpPageFetcher(policy=url_policy(), timeout=settings.OPENGURU_FETCH_TIMEOUT,
                           max_bytes=settings.OPENGURU_FETCH_MAX_BYTES, user_agent=settings.OPENGURU_FETCH_USER_AGENT)


def transcript_fetcher() -> TranscriptFetcher:
    """YouTube captions through youtube-transcript-api."""
    from backend.adapters.youtube.transcripts import YouTubeTranscriptFetcher

    return YouTubeTranscriptFetcher(timeout=settings.OPENGURU_FETCH_TIMEOUT,
                                    max_playlist_videos=settings.OPENGURU_PLAYLIST_MAX_VIDEOS)


def pdf_extractor() -> PdfExtractor:
    from backend.adapters.pdf.extractor import PypdfExtractor

    return PypdfExtractor(max_bytes=settings.OPENGURU_MAX_PDF_BYTES)


def repo_reader() -> RepoReader:
    from backend.adapters.github.repo import GitRepoReader

    return GitRepoReader(policy=url_policy(), max_file_bytes=settings.OPENGURU_GITHUB_MAX_FILE_BYTES,
                         allow_file_urls=settings.OPENGURU_GIT_ALLOW_FILE_URLS,
                         max_files=settings.OPENGURU_GITHUB_MAX_FILES,
                         check_timeout=settings.OPENGURU_GIT_CHECK_TIMEOUT, ca_bundle=settings.OPENGURU_GIT_CA_BUNDLE)


@receiver(setting_changed)
def _reset_on_settings_change(*, setting: str, **kwargs: Any) -> None:
    if setting in {"OPENGURU_VECTOR_STORE", "OPENGURU_EMBEDDER", "OPENGURU_LLM", "OPENGURU_RERANKER"}:
        _cached.cache_clear()
