"""What the settings pages show: providers in use (never their secrets), effective thresholds, split-size limits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from backend.adapters import registry
from backend.answering.selectors import thresholds_for
from backend.core.models import Settings
from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.gurus.selectors import guru_collection_report
from backend.pipeline.chunking import ChunkingConfig, default_chunking
from backend.pipeline.errors import ServiceError
from backend.sources.models import DataSource

# Chunks shorter than this carry too little meaning to retrieve well (the pipeline itself refuses < 16).
MIN_CHUNK_TOKENS = 32
MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$"
_USERINFO = re.compile(r"(//)[^/@\s]+@")


@dataclass(frozen=True)
class Fact:
    """One labelled line of a providers table; `value` is already free of secrets."""

    label: str
    value: str
    note: str = ""


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
    configs = [settings.OPENGURU_LLM, settings.OPENGURU_EMBEDDER, settings.OPENGURU_RERANKER,
               settings.OPENGURU_VECTOR_STORE]
    values = [str(c.get(key, "")) for c in configs for key in ("API_KEY", "TOKEN")]
    values += [getattr(settings, "FIRECRAWL_API_KEY", ""), settings.SECRET_KEY]
    # Short placeholders like "local" are not secrets, and replacing them would mangle ordinary words.
    return [v for v in values if v and len(v) >= 8]


def redact(text: str) -> str:
    """Text with configured secrets and URL credentials removed (error messages may quote either)."""
    for secret in _secret_values():
        text = text.replace(secret, "•••")
    return _USERINFO.sub(r"\1•••@", text)


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


def chat_model_problem(model: str) -> str:
    """Why `model` cannot be a guru's chat model, or "" when the configured provider can build it."""
    if not re.fullmatch(MODEL_ID_PATTERN, model):
        return "Use a model id of letters, digits and . _ : / @ + - (at most 200 characters)."
    provider = settings.OPENGURU_LLM.get("PROVIDER", "")
    try:
        built = registry.chat_model(model=model)
    except (ImproperlyConfigured, ValueError, ServiceError) as exc:
        return redact(f"The {provider or 'configured'} provider cannot use this model: {exc}")
    if built is None:
        return ("No chat LLM is configured (offline mode), so answers ignore any model. "
                "Set OPENAI_API_KEY, OPENAI_BASE_URL or GEMINI_API_KEY first.")
    return ""


def chat_models_note() -> str:
    """Which chat models can be chosen, in words (providers accept any model id they serve)."""
    provider = settings.OPENGURU_LLM.get("PROVIDER", "")
    if provider == "offline":
        return "Offline: no chat LLM is configured, so no model can be chosen."
    default = settings.OPENGURU_LLM.get("MODEL", "")
    return (f"Any model id that the {provider} provider serves, e.g. the default {default}. "
            "An unknown id fails on the first answer, so check it with a test question.")


def llm_facts() -> list[Fact]:
    config = settings.OPENGURU_LLM
    provider = config.get("PROVIDER", "")
    if provider == "offline":
        return [Fact("Chat LLM", "offline", "Extractive answers; no model is called.")]
    return [
        Fact("Chat LLM provider", provider),
        Fact("Default chat model", config.get("MODEL", ""), "OPENGURU_CHAT_MODEL"),
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
    if settings.OPENGURU_LLM.get("PROVIDER") == "offline":
        return "offline-extractive", "no chat LLM configured"
    if guru.chat_model:
        return guru.chat_model, "this guru's override"
    stored = stored or settings_get()
    if stored.answer_model:
        return stored.answer_model, "instance answer model"
    return settings.OPENGURU_LLM.get("MODEL", ""), "OPENGURU_CHAT_MODEL"


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
        Fact("Chat provider", settings.OPENGURU_LLM.get("PROVIDER", "")),
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
