"""Questions with their answers and telemetry, conversation sessions (binges), and the guru's memory."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from backend.core.models import TimeStampedModel
from backend.gurus.models import Guru


class Channel(models.TextChoices):
    WEB = "WEB", "Web page"
    API = "API", "REST API"
    WIDGET = "WIDGET", "Widget"
    SLACK = "SLACK", "Slack"
    DISCORD = "DISCORD", "Discord"
    MCP = "MCP", "MCP (AI agents)"
    EVAL = "EVAL", "Evaluation run"


class AnswerState(models.TextChoices):
    """How far an answer got. Only COMPLETE answers are shown as answers, reused or counted as answered."""

    PENDING = "PENDING", "Being answered"
    COMPLETE = "COMPLETE", "Complete"
    CANCELLED = "CANCELLED", "Cancelled (the client went away)"
    FAILED = "FAILED", "Failed"


class Binge(models.Model):
    """A conversation session; any channel holding its id can continue it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="binges")
    root_question = models.ForeignKey(
        "answering.Question", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="binges"
    )
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.WEB)
    # Where a chat conversation happens, for people reading the Questions tab: "Acme · #support".
    place = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-last_used_at"]
        indexes = [models.Index(fields=["guru", "-last_used_at"])]

    def __str__(self) -> str:
        return str(self.id)


class Question(TimeStampedModel):
    """One asked question, its answer, references, trust score and per-stage telemetry."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="questions")
    binge = models.ForeignKey(Binge, on_delete=models.CASCADE, null=True, blank=True, related_name="questions")
    parent = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="follow_ups"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="questions"
    )
    user_question = models.TextField(help_text="What the user typed.")
    question = models.CharField(max_length=500, help_text="The prettified question.")
    slug = models.SlugField(max_length=200)
    intent = models.CharField(max_length=30, blank=True)
    answer_length = models.CharField(max_length=10, blank=True)
    content = models.TextField(blank=True, help_text="The answer, in markdown.")
    references = models.JSONField(default=list, blank=True)
    trust_score = models.FloatField(null=True, blank=True)
    channel = models.CharField(max_length=10, choices=Channel.choices, default=Channel.WEB)
    out_of_context = models.BooleanField(default=False)
    usage = models.JSONField(default=dict, blank=True, help_text="Tokens and model per stage.")
    timings = models.JSONField(default=dict, blank=True, help_text="Milliseconds per stage.")
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    feedback = models.SmallIntegerField(null=True, blank=True, choices=[(-1, "Down"), (1, "Up")])
    # Which state of the guru's sources the answer was built from; a later change re-answers.
    sources_version = models.CharField(max_length=64, blank=True)
    # The question's vector (float32 bytes) in the space named by `embedding_model`, cached for the
    # dashboard's gaps view so that grouping recent refusals does not re-embed them on every visit.
    embedding = models.BinaryField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=100, blank=True, default="")
    # Rows made by the answer flow start PENDING; others (copies, imports) are complete answers.
    state = models.CharField(max_length=10, choices=AnswerState.choices, default=AnswerState.COMPLETE)
    # Why there is no answer, for the maintainer: the stable code and id the asker saw, and the logged cause.
    error_code = models.CharField(max_length=50, blank=True, default="")
    error_id = models.CharField(max_length=32, blank=True, default="")
    error_detail = models.TextField(blank=True, default="")
    # The settings the answer was made under (thresholds, model, prompts); the cache reuses only exact matches.
    answer_fingerprint = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["guru", "-created_at"]),
            models.Index(fields=["guru", "out_of_context"]),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["guru", "slug"], condition=models.Q(binge__isnull=True), name="question_unique_slug"
            ),
            models.UniqueConstraint(
                fields=["binge", "slug"],
                condition=models.Q(binge__isnull=False),
                name="question_unique_slug_in_binge",
            ),
            models.CheckConstraint(
                condition=models.Q(trust_score__isnull=True)
                | models.Q(trust_score__gte=0.0, trust_score__lte=1.0),
                name="question_trust_score_range",
            ),
        ]

    def __str__(self) -> str:
        return self.question


class Citation(models.Model):
    """One source (one page, for a website) cited by one answer, so analytics counts citations in SQL.

    `source_id` has no foreign key: a deleted source's citations still count (shown with the title it had).
    `guru` and `created_at` repeat the question's so a guru's period is one indexed range, without a join.
    """

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="citations")
    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="+")
    source_id = models.PositiveBigIntegerField()
    title = models.CharField(max_length=500, blank=True)
    # The page of a website source the cited chunk came from ("" for other kinds and older rows): a sitemap's
    # citations count per page, not all under the source.
    page_url = models.CharField(max_length=2000, blank=True, default="")
    page_title = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["guru", "created_at"])]
        constraints = [
            models.UniqueConstraint(fields=["question", "source_id", "page_url"],
                                    name="citation_unique_page_per_answer"),
        ]

    def __str__(self) -> str:
        return f"{self.question_id} cites {self.source_id}"


class MemoryStatus(models.TextChoices):
    PROPOSED = "PROPOSED", "Proposed"
    APPROVED = "APPROVED", "Approved"
    REJECTED = "REJECTED", "Rejected"


class MemoryOrigin(models.TextChoices):
    MAINTAINER = "MAINTAINER", "Written by a maintainer"
    CORRECTION = "CORRECTION", "Correction of an answer"
    FEEDBACK = "FEEDBACK", "Resolution of a 👎"
    CONVERSATION = "CONVERSATION", "Proposed by the model from a conversation"


class Memory(TimeStampedModel):
    """A short note the guru answers with beside its sources: a maintainer's correction, the resolution of a 👎,
    or what the model proposed from a conversation. Only approved ones are ever retrieved."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="memories")
    text = models.TextField(help_text="What the guru should know, in a sentence or a few.")
    status = models.CharField(max_length=10, choices=MemoryStatus.choices, default=MemoryStatus.PROPOSED)
    origin = models.CharField(max_length=12, choices=MemoryOrigin.choices, default=MemoryOrigin.MAINTAINER)
    question = models.ForeignKey(Question, on_delete=models.SET_NULL, null=True, blank=True, related_name="memories",
                                 help_text="The question it came from, if any.")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="+")
    proposed_text = models.TextField(
        blank=True, default="", help_text="A revision the model proposed for this memory, waiting for a maintainer.")
    # The text's vector (float32 bytes) in the space named by `embedding_model` (see answering.vectors).
    embedding = models.BinaryField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["guru", "status"])]

    def __str__(self) -> str:
        return self.text[:80]
