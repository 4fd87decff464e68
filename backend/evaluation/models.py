"""Evaluation sets (questions with what a right answer rests on) and the runs that measured a guru on them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from backend.answering.models import Question
from backend.gurus.models import Guru

MAX_QUESTION_CHARS = 2000
MAX_ITEMS = 1000
"""Items per set: a run answers each one, so a set is bounded like any input."""


class RefusalKind(models.TextChoices):
    """Why an item should be refused: reported apart, since near misses are the hard case."""

    NONE = "", "Should be answered"
    UNRELATED = "unrelated", "Unrelated to the guru"
    NEAR_MISS = "near_miss", "Near miss (next to the subject, not in the sources)"


class EvalSet(models.Model):
    """A named list of questions for one guru."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="eval_sets")
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["guru", "name"], name="eval_set_unique_name")]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.guru.slug}/{self.name}"


class EvalItem(models.Model):
    """One question: the sources a right answer cites, facts it states, or that it should be refused."""

    eval_set = models.ForeignKey(EvalSet, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField(default=0)
    question = models.CharField(max_length=MAX_QUESTION_CHARS)
    expected_sources = models.JSONField(
        default=list, blank=True,
        help_text="Pages or files (a title, a link, a path or the end of one) any of which a right answer cites.")
    expected_facts = models.JSONField(default=list, blank=True, help_text="Short phrases a right answer contains.")
    refusal_kind = models.CharField(max_length=10, choices=RefusalKind.choices, blank=True, default="")
    category = models.CharField(max_length=40, blank=True, default="",
                                help_text="A free label (lexical, semantic, multi-page…); results are split by it.")
    history = models.JSONField(default=list, blank=True,
                               help_text="Earlier questions of the same conversation, asked first (follow-ups).")
    from_question = models.ForeignKey(Question, on_delete=models.SET_NULL, null=True, blank=True,
                                      related_name="eval_items")

    class Meta:
        ordering = ["position", "pk"]

    @property
    def should_refuse(self) -> bool:
        return self.refusal_kind != RefusalKind.NONE

    def __str__(self) -> str:
        return self.question[:80]


class RunState(models.TextChoices):
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class EvalRun(models.Model):
    """One measurement of a guru on a set: the settings it ran with, the figures, and every item's result."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="eval_runs")
    eval_set = models.ForeignKey(EvalSet, on_delete=models.SET_NULL, null=True, blank=True, related_name="runs")
    set_name = models.CharField(max_length=200, help_text="The set's name, or the file it was read from.")
    state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="eval_runs")
    trust_threshold = models.FloatField()
    rerank_threshold = models.FloatField()
    answer_model = models.CharField(max_length=200, blank=True, default="")
    sources_version = models.CharField(max_length=64, blank=True, default="")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True, help_text="The run's figures (see pipeline.evaluation).")
    results = models.JSONField(default=list, blank=True, help_text="One entry per item, in the set's order.")
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-started_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.guru.slug} {self.set_name} {self.started_at:%Y-%m-%d %H:%M}"
