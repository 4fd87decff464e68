"""What the settings pages show and check: providers in use (never their secrets), thresholds, model ids."""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

from backend.adapters import registry
from backend.answering.selectors import thresholds_for
from backend.core.models import Settings
from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.gurus.selectors import guru_collection_report
from backend.pipeline.chunking import ChunkingConfig, default_chunking
from backend.pipeline.errors import ServiceError
from backend.pipeline.ports import ChatModel
from backend.sources.models import DataSource

# Chunks shorter than this carry too little meaning to retrieve well (the pipeline itself refuses < 16).
MIN_CHUNK_TOKENS = 32
MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$"
_USERINFO = re.compile(r"(//)[^/@\s]+@")
# Providers echo a rejected key masked ("sk-proj-****abcd"); its visible ends are still part of a secret.
_MASKED_KEY = re.compile(r"[^\s:'\"]*\*{3,}[^\s'\"]*")
# Long enough that a form re-submitted after a typo does not list again; short enough to see new models soon.
MODEL_LIST_TTL = 300
SHOWN_MODELS = 10


@dataclass(frozen=True)
class Fact:
    """One labelled line of a providers table; `value` is already free of secrets."""

    label: str
    value: str
    note: str = ""


@dataclass(frozen=True)
class ModelCheck:
    """The verdict on a new chat model id: refuse it (`problem`), or accept it, perhaps with a `warning`."""

    problem: str = ""
    warning: str = ""


@dataclass(frozen=True)
class Effective:
    """A threshold in force for a guru and where it comes from."""

    label: str
    value: float
    overridden: bool
    default: float


@dataclass(frozen=True)
class SplitDefaults:
    """The embedder's window and the split sizes derived from it (used when the settings leave them blank)."""

    window: int
    size: int
    overlap: int
    max_size: int
    min_size: int = MIN_CHUNK_TOKENS


def _secret_values() -> list[str]:
    configs = [settings.OPENGURU_LLM, registry.llm_config(), settings.OPENGURU_EMBEDDER, settings.OPENGURU_RERANKER,
               settings.OPENGURU_VECTOR_STORE]
    values = [str(c.get(key, "")) for c in configs for key in ("API_KEY", "TOKEN")]
    values += [getattr(settings, "FIRECRAWL_API_KEY", ""), settings.SECRET_KEY]
    # Short placeholders like "local" are not secrets, and replacing them would mangle ordinary words.
    return [v for v in values if v and len(v) >= 8]


def redact(text: str, *, also: tuple[str, ...] = ()) -> str:
    """Text with configured secrets (and `also`: a key typed into a form) and URL credentials removed."""
    for secret in [*_secret_values(), *(v for v in also if len(v) >= 4)]:
        text = text.replace(secret, "•••")
    return _MASKED_KEY.sub("•••", _USERINFO.sub(r"\1•••@", text))


def safe_url(url: str) -> str:
    """scheme://host[:port]/path without credentials, query or fragment; a local path is named as such."""
    if not url:
        return ""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return "local file" if "://" not in url else ""
    port = f":{parts.port}" if parts.port else ""
    return redact(f"{parts.scheme}://{parts.hostname}{port}{parts.path}")


def _is_set(value: object) -> str:
    return "configured" if value else "not set"


def split_defaults() -> SplitDefaults:
    """The configured embedder's window and derived split sizes; chunk sizes above `max_size` would be clamped."""
    window = registry.embedder().max_input_tokens
    derived: ChunkingConfig = default_chunking(embedder_max_tokens=window)
    return SplitDefaults(window=window, size=derived.max_tokens, overlap=derived.overlap_tokens,
                         max_size=derived.max_tokens)


def chat_model_check(model: str, config: registry.Config | None = None) -> ModelCheck:
    """Whether the provider (in force, or `config`) can answer with `model`: refused if not, warned if unverifiable."""
    if not re.fullmatch(MODEL_ID_PATTERN, model):
        return ModelCheck(problem="Use a model id of letters, digits and . _ : / @ + - (at most 200 characters).")
    config = registry.llm_config() if config is None else config
    provider = config.get("PROVIDER", "") or "configured"
    secret = (config.get("API_KEY", ""),)
    try:
        built = None if provider == "offline" else registry.build_chat_model({**config, "MODEL": model})
    except (ImproperlyConfigured, ValueError, ServiceError) as exc:
        return ModelCheck(problem=redact(f"The {provider} provider cannot use this model: {exc}", also=secret))
    if built is None:
        return ModelCheck(problem="No chat LLM is configured (offline mode), so answers ignore any model. "
                                  "Choose a chat provider on the instance Settings page (or set OPENAI_API_KEY, "
                                  "OPENAI_BASE_URL or GEMINI_API_KEY) first.")
    try:
        offered = offered_chat_models(built, config)
    except ServiceError as exc:
        return ModelCheck(warning=redact(f"{model} was saved without being checked: the {provider} provider's "
                                         f"model list could not be read ({exc}). An unknown id fails on the first "
                                         "answer.", also=secret))
    if not offered:
        return ModelCheck(warning=f"{model} was saved without being checked: the {provider} provider lists no "
                                  "models.")
    if not _offers(offered, built.model):
        return ModelCheck(problem=_not_offered(provider, model, offered))
    return ModelCheck()


def offered_chat_models(chat: ChatModel, config: registry.Config) -> list[str]:
    """The provider's chat model ids, from the cache for a few minutes (only successful lists are kept)."""
    key = _model_list_key(config)
    cached = cache.get(key)
    if isinstance(cached, list):
        return cached
    offered = chat.available_models()
    cache.set(key, offered, MODEL_LIST_TTL)
    return offered


def _model_list_key(config: registry.Config) -> str:
    """One cache entry per provider, endpoint and key; hashed, so the API key never sits in the cache in clear."""
    parts = (config.get("PROVIDER", ""), config.get("BASE_URL", ""), config.get("API_KEY", ""))
    return "chat-models:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _offers(offered: list[str], model: str) -> bool:
    # Ollama lists "llama3.2:latest" yet answers to "llama3.2", which people usually type.
    return model in offered or (":" not in model and f"{model}:latest" in offered)


def _not_offered(provider: str, model: str, offered: list[str]) -> str:
    shown = sorted(offered)[:SHOWN_MODELS]
    more = f" and {len(offered) - len(shown)} more" if len(offered) > len(shown) else ""
    close = difflib.get_close_matches(model, offered, n=3, cutoff=0.8)  # typos only, not cousins
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    return f"The {provider} provider does not offer {model} as a chat model.{hint} Available: {', '.join(shown)}{more}."


def chat_models_note() -> str:
    """Which chat models can be chosen, in words (providers accept any model id they serve)."""
    config = registry.llm_config()
    provider = config.get("PROVIDER", "")
    if provider == "offline":
        return "Offline: no chat LLM is configured, so no model can be chosen."
    default = config.get("MODEL", "")
    return (f"Any model id that the {provider} provider serves, e.g. the default {default}. "
            "A new id is checked against the provider's model list when saved.")


def llm_facts() -> list[Fact]:
    config = registry.llm_config()
    provider = config.get("PROVIDER", "")
    origin = "from the environment" if registry.llm_env_wins() else "from the instance settings"
    if provider == "offline":
        return [Fact("Chat LLM", "offline", f"Extractive answers; no model is called ({origin}).")]
    return [
        Fact("Chat LLM provider", provider, origin),
        Fact("Default chat model", config.get("MODEL", "")),
        Fact("Provider endpoint", safe_url(config.get("BASE_URL", "")) or "the provider's default"),
        Fact("API key", _is_set(config.get("API_KEY"))),
    ]


def embedder_facts() -> list[Fact]:
    config = settings.OPENGURU_EMBEDDER
    try:
        embedder = registry.embedder()
    except (ImproperlyConfigured, ValueError, ServiceError) as exc:
        return [Fact("Embedder", config.get("BACKEND", ""), redact(f"unavailable: {exc}"))]
    facts = [
        Fact("Embedder", config.get("BACKEND", ""), config.get("MODEL", "")),
        Fact("Embedder id", registry.embedder_id(), "recorded on every collection"),
        Fact("Vector dimension", str(embedder.dimension)),
        Fact("Embedder window", f"{embedder.max_input_tokens} tokens"),
    ]
    if config.get("BASE_URL"):
        facts.append(Fact("Embedder endpoint", safe_url(config["BASE_URL"])))
    return facts


def infrastructure_facts() -> list[Fact]:
    store, reranker = settings.OPENGURU_VECTOR_STORE, settings.OPENGURU_RERANKER
    facts = [
        Fact("Vector store", store.get("BACKEND", ""), safe_url(store.get("URI", ""))),
        Fact("Reranker", reranker.get("BACKEND", ""), reranker.get("MODEL", "")),
    ]
    if reranker.get("URL"):
        facts.append(Fact("Reranker endpoint", safe_url(reranker["URL"])))
    if store.get("BACKEND") == "milvus":
        facts.append(Fact("Vector store token", _is_set(store.get("TOKEN"))))
    return facts


def providers_in_use() -> list[Fact]:
    """Everything the instance is configured to use, without keys, tokens or credentials in URLs."""
    return [*llm_facts(), *embedder_facts(), *infrastructure_facts()]


def effective_chat_model(guru: Guru, stored: Settings | None = None) -> tuple[str, str]:
    """(model id, where it comes from) for the guru's answers."""
    config = registry.llm_config()
    if config.get("PROVIDER") == "offline":
        return "offline-extractive", "no chat LLM configured"
    if guru.chat_model:
        return guru.chat_model, "this guru's override"
    stored = stored or settings_get()
    if stored.answer_model:
        return stored.answer_model, "instance default model"
    named = "OPENGURU_CHAT_MODEL" in config.get("ENV", "").split()
    return config.get("MODEL", ""), "OPENGURU_CHAT_MODEL" if named else "the provider's default"


def effective_thresholds(guru: Guru) -> list[Effective]:
    """The rerank and trust thresholds the guru answers with, and whether they are its own."""
    stored = settings_get()
    rerank, trust = thresholds_for(guru)
    return [
        Effective("Rerank threshold", rerank, guru.rerank_threshold is not None, stored.rerank_threshold),
        Effective("Trust score threshold", trust, guru.trust_score_threshold is not None,
                  stored.trust_score_threshold),
    ]


def guru_provider_facts(guru: Guru) -> list[Fact]:
    """What this guru answers with: its chat model, the embedder and its collection's state."""
    model, origin = effective_chat_model(guru)
    report = guru_collection_report(guru=guru)
    name = report.record.name if report.record else report.expected_name
    status = "ready" if not report.problem else redact(report.problem)
    return [
        Fact("Chat model", model, origin),
        Fact("Chat provider", registry.llm_config().get("PROVIDER", "")),
        Fact("Embedder", report.embedder_id, f"{report.embedder_dimension} dimensions"),
        Fact("Vector store", settings.OPENGURU_VECTOR_STORE.get("BACKEND", "")),
        Fact("Collection", name, status),
        Fact("Reranker", settings.OPENGURU_RERANKER.get("BACKEND", "")),
    ]


def source_totals() -> tuple[int, int]:
    """(sources, gurus with sources) across the instance: what a full re-index would touch."""
    sources = DataSource.objects.count()
    gurus = DataSource.objects.values("guru_id").distinct().count()
    return sources, gurus
