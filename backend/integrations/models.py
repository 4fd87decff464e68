"""Slack and Discord integrations of a guru, and chat threads mapped to conversation sessions."""

from __future__ import annotations

from django.db import models

from backend.answering.models import Binge
from backend.api.models import APIKey
from backend.core.fields import EncryptedTextField
from backend.core.models import TimeStampedModel
from backend.gurus.models import Guru


class IntegrationKind(models.TextChoices):
    SLACK = "SLACK", "Slack"
    DISCORD = "DISCORD", "Discord"


class Integration(TimeStampedModel):
    """A guru connected to one Slack workspace or Discord guild; tokens encrypted at rest."""

    kind = models.CharField(max_length=10, choices=IntegrationKind.choices)
    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="integrations")
    external_id = models.CharField(max_length=100, help_text="Slack team id or Discord guild id.")
    workspace_name = models.CharField(max_length=200, blank=True)
    access_token = EncryptedTextField(blank=True)
    refresh_token = EncryptedTextField(blank=True)
    signing_secret = EncryptedTextField(blank=True)
    channels = models.JSONField(default=list, blank=True, help_text='[{"id", "name", "mode": "mention|auto"}]')
    allow_dm = models.BooleanField(default=False)
    api_key = models.OneToOneField(
        APIKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="integration"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "guru"], name="integration_one_per_kind_and_guru"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · {self.workspace_name or self.external_id}"


class Thread(models.Model):
    """A Slack or Discord thread, continued as one conversation session."""

    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="threads")
    external_thread_id = models.CharField(max_length=100)
    binge = models.ForeignKey(Binge, on_delete=models.CASCADE, related_name="threads")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["integration", "external_thread_id"], name="thread_unique"),
        ]

    def __str__(self) -> str:
        return self.external_thread_id
