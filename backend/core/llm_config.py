"""The chat provider staff saved on the Settings page, as registry configuration, re-read every few seconds.

Every process (web workers, Celery workers, commands) keeps the saved values for at most RELOAD_SECONDS,
then reads the one settings row again: a change reaches all of them without a restart, and answering
costs at most one primary-key read every few seconds, never one per question or token. The process that
saves forgets its copy at once (post_save), so the page that saved it tests and answers with the new values.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from django.db.models.signals import post_save
from django.dispatch import receiver

from backend.config.settings.components.models import DEFAULT_CHAT_MODELS
from backend.core.models import LlmProvider, Settings

logger = logging.getLogger(__name__)

RELOAD_SECONDS = 2.0
OFFLINE = {"PROVIDER": LlmProvider.OFFLINE.value, "MODEL": DEFAULT_CHAT_MODELS["offline"], "API_KEY": "",
           "BASE_URL": ""}
STORED_FIELDS = ("llm_provider", "llm_base_url", "llm_api_key", "answer_model")

_lock = threading.Lock()
_memo: dict[str, Any] = {}  # {"at": monotonic time of the read, "config": what it gave}


def stored_llm() -> dict[str, str] | None:
    """The saved chat configuration (PROVIDER, MODEL, API_KEY, BASE_URL), at most RELOAD_SECONDS old."""
    with _lock:
        if _memo and time.monotonic() - _memo["at"] < RELOAD_SECONDS:
            return dict(_memo["config"]) if _memo["config"] is not None else None
    config = _read()
    with _lock:
        _memo.update(at=time.monotonic(), config=config)
    return dict(config) if config is not None else None


def forget() -> None:
    """Drop this process's copy: the next call reads the row (after a save, and between tests)."""
    with _lock:
        _memo.clear()


def config_from_row(row: dict[str, Any]) -> dict[str, str]:
    """Registry configuration for the saved fields; the model is the instance's default model, else the provider's."""
    provider = row["llm_provider"] or LlmProvider.OFFLINE.value
    if provider == LlmProvider.OFFLINE:
        return dict(OFFLINE)
    return {"PROVIDER": provider, "MODEL": row["answer_model"] or DEFAULT_CHAT_MODELS.get(provider, ""),
            "API_KEY": row["llm_api_key"] or "", "BASE_URL": row["llm_base_url"] or ""}


def _read() -> dict[str, str] | None:
    try:
        row = Settings.objects.filter(pk=Settings.SINGLETON_ID).values(*STORED_FIELDS).first()
    except DatabaseError as exc:  # not migrated yet (the launcher's first steps): no saved provider
        logger.debug("llm settings: the settings row cannot be read (%s)", exc)
        return None
    except ImproperlyConfigured as exc:  # the key was encrypted with a key this install no longer has
        logger.error("llm settings: the saved API key cannot be decrypted, answering offline: %s", exc)
        return dict(OFFLINE)
    return config_from_row(row) if row is not None else None


@receiver(post_save, sender=Settings, dispatch_uid="core.llm_config.forget")
def _forget_on_save(**kwargs: Any) -> None:
    forget()
