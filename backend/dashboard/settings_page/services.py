"""Instance-wide actions of the settings page: re-index everything, test a chat provider's connection."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

from backend.adapters import registry
from backend.dashboard.settings_page.selectors import offered_chat_models, redact
from backend.gurus.models import Guru
from backend.pipeline.errors import ServiceError
from backend.pipeline.llm_types import Flow, Message, Role
from backend.sources.services import source_reindex_guru

# A person waits on the button: one try, and an answer within this many seconds either way.
TEST_TIMEOUT_SECONDS = 15
MESSAGE_LIMIT = 400
PROBE = (Message(Role.USER, "Reply with the single word OK."),)
PROBE_TOKENS = 16


def sources_reindex_all() -> tuple[int, int]:
    """Schedule every source of every guru for re-indexing (new split sizes apply); returns (sources, gurus)."""
    sources = gurus = 0
    for guru in Guru.objects.filter(sources__isnull=False).distinct().order_by("pk"):
        sources += source_reindex_guru(guru=guru)
        gurus += 1
    return sources, gurus


@dataclass(frozen=True)
class ConnectionReport:
    """What one test call found: latency on success, else the provider's error (bounded, without secrets)."""

    ok: bool
    message: str
    latency_ms: int | None = None
    models: tuple[str, ...] = ()


def llm_connection_test(config: registry.Config) -> ConnectionReport:
    """Make one real chat completion with `config`; then list the provider's models for the form, if it can."""
    if config.get("PROVIDER") == "offline":
        return ConnectionReport(False, "No chat provider is chosen: answers are extractive and no model is called.")
    secret = (config.get("API_KEY", ""),)
    try:
        chat = registry.build_chat_model({**config, "MAX_RETRIES": "0", "TIMEOUT": str(TEST_TIMEOUT_SECONDS)})
        started = time.perf_counter()
        chat.complete(PROBE, max_tokens=PROBE_TOKENS, flow=Flow.ANSWER)
        latency = round((time.perf_counter() - started) * 1000)
    except (ImproperlyConfigured, ValueError, ServiceError) as exc:
        return ConnectionReport(False, _bounded(redact(str(exc), also=secret)))
    try:
        models = tuple(offered_chat_models(chat, config))
    except ServiceError:
        models = ()  # some compatible servers list nothing; the test itself succeeded
    return ConnectionReport(True, f"Connected: {chat.model} answered in {latency} ms.", latency, models)


def _bounded(message: str) -> str:
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"
