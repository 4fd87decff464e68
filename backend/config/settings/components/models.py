"""Model providers: chat LLM, embeddings and reranker, chosen from the environment.

With no keys the product runs offline: the extractive answerer, the local MiniLM embedder and the
local fusion reranker. The embedder never switches by itself when a key appears, because a new
embedder means a new vector dimension and a re-embed (`manage.py reembed`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

from backend.config.env import env_int, env_json, env_list, env_str
from backend.pipeline.pricing import parse_prices

DEFAULT_CHAT_MODELS = {"openai": "gpt-4o-mini", "gemini": "gemini-2.5-flash", "offline": "offline-extractive"}
DEFAULT_EMBEDDING_MODELS = {"openai": ("text-embedding-3-small", 1536), "gemini": ("gemini-embedding-001", 768)}
# Any of these chooses the chat provider, and then overrides the one staff configure on the Settings page.
LLM_PROVIDER_VARIABLES = ("OPENGURU_LLM_PROVIDER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY")
LLM_VARIABLES = (*LLM_PROVIDER_VARIABLES, "GEMINI_BASE_URL", "OPENGURU_CHAT_MODEL", "OPENGURU_LLM_TIMEOUT",
                 "OPENGURU_GEMINI_THINKING_BUDGET")


def llm_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """OPENGURU_LLM_PROVIDER, or the first provider with credentials: OpenAI(-compatible), Gemini, offline."""
    openai_key, openai_url = environ.get("OPENAI_API_KEY", ""), environ.get("OPENAI_BASE_URL", "")
    gemini_key = environ.get("GEMINI_API_KEY", "")
    provider = environ.get("OPENGURU_LLM_PROVIDER", "").strip().lower()
    if not provider:
        provider = "openai" if (openai_key or openai_url) else "gemini" if gemini_key else "offline"
    return {
        "PROVIDER": provider,
        "MODEL": environ.get("OPENGURU_CHAT_MODEL", "") or DEFAULT_CHAT_MODELS.get(provider, ""),
        # Local OpenAI-compatible servers (Ollama, vLLM) take any key, but the SDK requires one.
        "API_KEY": gemini_key if provider == "gemini" else (openai_key or ("local" if openai_url else "")),
        "BASE_URL": openai_url if provider == "openai" else environ.get("GEMINI_BASE_URL", ""),
        "TIMEOUT": environ.get("OPENGURU_LLM_TIMEOUT", "") or "60",
        # Gemini 2.5 "thinks" by default and counts it against max_tokens, which starves the short
        # structured calls and delays the first token; 0 turns it off (-1 = the model's default).
        "THINKING_BUDGET": environ.get("OPENGURU_GEMINI_THINKING_BUDGET", "") or "0",
        # Which LLM variables are set: the Settings page names them, and the registry lets them win.
        "ENV": " ".join(name for name in LLM_VARIABLES if environ.get(name, "").strip()),
        "FROM_ENV": "1" if any(environ.get(name, "").strip() for name in LLM_PROVIDER_VARIABLES) else "",
    }


def embedder_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """OPENGURU_EMBEDDER: local-minilm (default), openai, gemini or hashing (tests only)."""
    backend = environ.get("OPENGURU_EMBEDDER", "").strip().lower() or "local-minilm"
    model, dimension = DEFAULT_EMBEDDING_MODELS.get(backend, ("", 0))
    key = environ.get("GEMINI_API_KEY", "") if backend == "gemini" else environ.get("OPENAI_API_KEY", "")
    return {
        "BACKEND": backend,
        "MODEL": environ.get("OPENGURU_EMBEDDING_MODEL", "") or model,
        "DIMENSION": environ.get("OPENGURU_EMBEDDING_DIMENSION", "") or (str(dimension) if dimension else ""),
        "API_KEY": key or ("local" if backend == "openai" and environ.get("OPENAI_BASE_URL") else ""),
        "BASE_URL": environ.get("OPENAI_BASE_URL", "") if backend == "openai" else environ.get("GEMINI_BASE_URL", ""),
    }


def reranker_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The local fusion reranker, or a TEI/Cohere-style HTTP reranker when OPENGURU_RERANKER_URL is set."""
    url = environ.get("OPENGURU_RERANKER_URL", "")
    return {
        "BACKEND": environ.get("OPENGURU_RERANKER", "").strip().lower() or ("http" if url else "local"),
        "URL": url,
        "MODEL": environ.get("OPENGURU_RERANKER_MODEL", ""),
        "API_KEY": environ.get("OPENGURU_RERANKER_API_KEY", ""),
    }


OPENGURU_LLM = llm_from_env(os.environ)
OPENGURU_EMBEDDER = embedder_from_env(os.environ)
OPENGURU_RERANKER = reranker_from_env(os.environ)
# Tells an absent name's variants (MacBook ~ mac) by single-word cosine; its threshold is set for MiniLM's cosines
# (backend/answering/variants.py), so it stays the local model whatever embeds the chunks.
OPENGURU_WORD_EMBEDDER = {"BACKEND": "local-minilm"}

OPENGURU_ENCRYPTION_KEY = env_str("OPENGURU_ENCRYPTION_KEY")
# Old encryption keys that may still decrypt stored secrets until `manage.py rotate_keys` re-encrypts them.
OPENGURU_ENCRYPTION_KEY_FALLBACKS = env_list("OPENGURU_ENCRYPTION_KEY_FALLBACKS", [])
FIRECRAWL_API_KEY = env_str("FIRECRAWL_API_KEY")
FIRECRAWL_API_URL = env_str("FIRECRAWL_API_URL")
OPENGURU_MAX_PDF_BYTES = env_int("OPENGURU_MAX_PDF_BYTES", 100 * 1024 * 1024)
# Questions per minute per client IP on the public guru page (0 = unlimited).
OPENGURU_WEB_RATE_LIMIT = env_int("OPENGURU_WEB_RATE_LIMIT", 20)
# Seconds without an answer event after which a stream sends an SSE comment (0: never), below proxies' idle cuts.
OPENGURU_STREAM_HEARTBEAT = env_int("OPENGURU_STREAM_HEARTBEAT", 15)
OPENGURU_FEEDBACK_RATE_LIMIT = env_int("OPENGURU_FEEDBACK_RATE_LIMIT", 30)  # votes per minute per IP
OPENGURU_LOGIN_FAILURE_LIMIT = env_int("OPENGURU_LOGIN_FAILURE_LIMIT", 10)  # per 15 min, per IP and per username

# USD per million tokens as the providers listed them in 2025, for the cost shown per question;
# OPENGURU_MODEL_PRICES='{"my-model": {"input": 1.0, "output": 2.0}}' adds or overrides entries.
DEFAULT_MODEL_PRICES: dict[str, dict[str, float]] = {
    "gpt-4o-mini": {"input": 0.15, "output": 0.60, "cached_input": 0.075},
    "gpt-4o": {"input": 2.50, "output": 10.00, "cached_input": 1.25},
    "gpt-4.1": {"input": 2.00, "output": 8.00, "cached_input": 0.50},
    "gpt-4.1-mini": {"input": 0.40, "output": 1.60, "cached_input": 0.10},
    "gpt-4.1-nano": {"input": 0.10, "output": 0.40, "cached_input": 0.025},
    "gemini-2.5-pro": {"input": 1.25, "output": 10.00, "cached_input": 0.31},
    "gemini-2.5-flash": {"input": 0.30, "output": 2.50, "cached_input": 0.075},
    "gemini-2.5-flash-lite": {"input": 0.10, "output": 0.40, "cached_input": 0.025},
    "gemini-2.0-flash": {"input": 0.10, "output": 0.40, "cached_input": 0.025},
}
_PRICES = env_json("OPENGURU_MODEL_PRICES", {})
if not isinstance(_PRICES, dict):
    raise ImproperlyConfigured("OPENGURU_MODEL_PRICES must be a JSON object of model id -> prices")
OPENGURU_MODEL_PRICES = {**DEFAULT_MODEL_PRICES, **_PRICES}
try:
    parse_prices(OPENGURU_MODEL_PRICES)
except ValueError as exc:
    raise ImproperlyConfigured(f"OPENGURU_MODEL_PRICES: {exc}") from exc
