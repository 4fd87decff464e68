"""Shared model bases and the global Settings singleton."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from backend.core.fields import EncryptedTextField


class TimeStampedModel(models.Model):
    """Adds created/updated timestamps."""

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


_unit_interval = [MinValueValidator(0.0), MaxValueValidator(1.0)]


class LlmProvider(models.TextChoices):
    """The chat providers staff can choose on the Settings page (the registry has a factory for each)."""

    OFFLINE = "offline", "None: offline extractive answers"
    OPENAI = "openai", "OpenAI"
    GEMINI = "gemini", "Google Gemini"
    COMPATIBLE = "openai-compatible", "OpenAI-compatible server (Ollama, vLLM, LM Studio)"


class Settings(TimeStampedModel):
    """Global answering and ingestion settings; a guru may override the thresholds.

    A singleton: the database allows only the row with id 1 (see the check constraint).
    """

    SINGLETON_ID = 1

    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON_ID, editable=False)
    rerank_threshold = models.FloatField(default=0.1, validators=_unit_interval)
    trust_score_threshold = models.FloatField(default=0.5, validators=_unit_interval)
    # Null split sizes mean "derive from the active embedder's input limit" (see issue #4).
    chunk_size = models.PositiveIntegerField(null=True, blank=True)
    chunk_overlap = models.PositiveIntegerField(null=True, blank=True)
    chunk_min_length = models.PositiveIntegerField(default=50)
    answer_model = models.CharField(max_length=200, blank=True)
    # The chat provider when no environment variable chooses one (see registry.llm_config).
    llm_provider = models.CharField(max_length=32, choices=LlmProvider.choices, default=LlmProvider.OFFLINE)
    llm_base_url = models.CharField(max_length=500, blank=True)
    llm_api_key = EncryptedTextField(blank=True)
    history_turns = models.PositiveSmallIntegerField(default=4)
    summary_token_budget = models.PositiveIntegerField(
        default=1_000_000, help_text="Tokens each guru's summaries may spend, unless the guru sets its own."
    )

    class Meta:
        verbose_name = "settings"
        verbose_name_plural = "settings"
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="settings_singleton"),
        ]

    def __str__(self) -> str:
        return "OpenGuru settings"


class Counter(models.Model):
    """An expiring counter (rate limits, failed logins) for the database counter store.

    Written only with one atomic upsert (see backend/core/counters.py); Redis holds these when configured.
    """

    key = models.CharField(max_length=200, primary_key=True)
    count = models.BigIntegerField()
    expires_at = models.FloatField(db_index=True, help_text="Unix time; expired = absent.")


class Lease(models.Model):
    """A lock held by one token until it is released or expires, for the database counter store."""

    key = models.CharField(max_length=200, primary_key=True)
    token = models.CharField(max_length=64)
    expires_at = models.FloatField(db_index=True, help_text="Unix time; expired = free.")
