"""The Guru: one knowledge base on one topic, with its vector collection's state."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from backend.core.models import TimeStampedModel

SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$"
slug_validator = RegexValidator(
    SLUG_PATTERN,
    "Use 1–50 lowercase letters, digits or hyphens, starting and ending with a letter or digit.",
)
_unit_interval = [MinValueValidator(0.0), MaxValueValidator(1.0)]


def guru_icon_path(instance: Guru, filename: str) -> str:
    """Icons sit with the guru's other files, so deleting the guru's folder removes them too."""
    return f"gurus/{instance.pk}/{filename}"


class CollectionStatus(models.TextChoices):
    PENDING = "PENDING", "Pending"
    READY = "READY", "Ready"
    ERROR = "ERROR", "Error"


class Guru(TimeStampedModel):
    """A knowledge base; creating, renaming or deleting it manages its vector collection."""

    slug = models.SlugField(max_length=50, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=100)
    domain_knowledge = models.CharField(
        max_length=500, help_text="What this guru knows about; used in every prompt."
    )
    intro_text = models.TextField(blank=True)
    base_color = models.CharField(max_length=7, default="#1f6feb")
    icon_url = models.URLField(max_length=500, blank=True)
    icon = models.FileField(upload_to=guru_icon_path, max_length=300, blank=True,
                            help_text="An uploaded icon; takes precedence over icon_url.")
    language = models.CharField(max_length=10, default="en")
    maintainers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="gurus", blank=True)
    active = models.BooleanField(default=True)
    private = models.BooleanField(default=False, help_text="Only maintainers and API keys can ask.")
    rerank_threshold = models.FloatField(null=True, blank=True, validators=_unit_interval)
    trust_score_threshold = models.FloatField(null=True, blank=True, validators=_unit_interval)
    source_graph = models.BooleanField(
        default=True, help_text="Answers may add a page or file one link away from what the search found.")
    agentic = models.BooleanField(
        default=True, help_text="With a language model that calls tools: an unsupported or comparing question is "
                                "researched step by step (search, read on, follow links) before it is answered.")
    memory = models.BooleanField(
        default=True, help_text="Answers may rest on the guru's approved memory notes, cited as maintainer notes.")
    memory_from_conversations = models.BooleanField(
        default=False, help_text="After each answer, the language model proposes memory notes from the conversation.")
    chat_model = models.CharField(
        max_length=200, blank=True, help_text="Model id for this guru's answers; empty uses OPENGURU_CHAT_MODEL."
    )
    summary_token_budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tokens summaries may spend in all; empty uses the instance default."
    )
    summary_tokens_used = models.PositiveBigIntegerField(default=0, editable=False)
    summary_note = models.CharField(max_length=500, blank=True, editable=False,
                                    help_text="Why the guru's summary is missing or partial.")

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(slug__regex=SLUG_PATTERN), name="guru_slug_format"),
        ]

    def __str__(self) -> str:
        return self.name


MAX_EXAMPLES = 10
MAX_EXAMPLE_CHARS = 200


class ExampleQuestion(TimeStampedModel):
    """A suggested question visitors may click ("Try: …"); only approved ones are ever shown to visitors."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="example_questions")
    text = models.CharField(max_length=MAX_EXAMPLE_CHARS)
    position = models.PositiveSmallIntegerField(default=0)
    approved = models.BooleanField(default=True, help_text="Set by a maintainer; unapproved examples stay hidden.")

    class Meta:
        ordering = ["guru", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["guru", "text"], name="example_question_unique_per_guru"),
        ]

    def __str__(self) -> str:
        return self.text


class VectorCollection(models.Model):
    """The collection a guru has in the vector store; written only by gurus.services.

    Kept apart from Guru so that saving a stale Guru instance cannot overwrite it, and keyed by the
    guru's id without a foreign key so the record outlives a deleted guru until its collection
    has really been dropped.
    """

    guru_id = models.BigIntegerField(unique=True)
    name = models.CharField(max_length=255, unique=True)
    dimension = models.PositiveIntegerField()
    embedder = models.CharField(max_length=200, blank=True, help_text="Which embedder wrote the vectors.")
    status = models.CharField(max_length=10, choices=CollectionStatus.choices, default=CollectionStatus.PENDING)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
