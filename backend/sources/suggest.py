"""The Overview tab's Suggest: a draft of the guru's domain knowledge and example questions from its summary."""

from __future__ import annotations

from backend.adapters.registry import chat_model
from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.pipeline.suggest import Suggestion, suggest_offline, suggest_with_llm
from backend.sources.summary_selectors import guru_summary

DEFAULT_COUNT = 8
MAX_TITLES = 40


class NoSummaryYet(ValueError):
    """The guru has no summary to draft from: its sources are not summarised yet."""


def _titles(guru: Guru) -> list[str]:
    """The sources' titles, oldest first; untitled sources (a bare address or file) give none."""
    titles = guru.sources.exclude(title="").order_by("created_at", "id").values_list("title", flat=True)
    return [str(t) for t in titles[:MAX_TITLES]]


def guru_suggest(*, guru: Guru, count: int = DEFAULT_COUNT) -> Suggestion:
    """A draft for the maintainer to edit and approve (nothing is saved): by the guru's chat model when one
    is configured, else by rules. Raises NoSummaryYet before the guru's summary exists; the model's
    TransientServiceError / PermanentServiceError pass through for the caller to show."""
    view = guru_summary(guru_id=guru.pk)
    if view is None or not view.text.strip():
        raise NoSummaryYet(f"{guru.name} has no summary yet: it is written once its sources are indexed.")
    titles = _titles(guru)
    chat = chat_model(model=guru.chat_model or settings_get().answer_model)
    if chat is None:
        return suggest_offline(name=guru.name, summary=view.text, titles=titles, count=count)
    return suggest_with_llm(chat, name=guru.name, summary=view.text, titles=titles, count=count)
