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


class Transport(models.TextChoices):
    """How events reach us: Slack's HTTP Events API (needs a public URL) or a Socket Mode connection we open."""

    EVENTS = "events", "Events API (HTTP)"
    SOCKET = "socket", "Socket Mode"


class Integration(TimeStampedModel):
    """A guru connected to one Slack workspace or Discord guild; tokens encrypted at rest."""

    kind = models.CharField(max_length=10, choices=IntegrationKind.choices)
    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="integrations")
    external_id = models.CharField(max_length=100, help_text="Slack team id or Discord application id.")
    workspace_name = models.CharField(max_length=200, blank=True)
    access_token = EncryptedTextField(blank=True)
    refresh_token = EncryptedTextField(blank=True)
    signing_secret = EncryptedTextField(blank=True)
    channels = models.JSONField(default=list, blank=True, help_text='[{"id", "name", "mode": "mention|auto"}]')
    allow_dm = models.BooleanField(default=False)
    transport = models.CharField(max_length=10, choices=Transport.choices, default=Transport.EVENTS)
    app_token = EncryptedTextField(blank=True, help_text="Slack app-level token (xapp-…) for Socket Mode.")
    client_id = models.CharField(max_length=100, blank=True, help_text="Slack app's client id, for OAuth install.")
    client_secret = EncryptedTextField(blank=True)
    app_id = models.CharField(max_length=40, blank=True)
    bot_user_id = models.CharField(max_length=40, blank=True)
    # The instance's address as the maintainer reached the dashboard: bots put absolute links in messages.
    site_url = models.URLField(max_length=300, blank=True)
    # Discord: the bot token comes from DISCORD_BOT_TOKEN instead of access_token (one guru, set by the operator).
    token_from_env = models.BooleanField(default=False)
    guilds = models.JSONField(default=list, blank=True, help_text='Discord guilds the bot is in: [{"id", "name"}]')
    last_event_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
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


class ChatEvent(models.Model):
    """An event id already taken in: Slack retries an event it thinks was missed, and it must count once."""

    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="events")
    event_id = models.CharField(max_length=100)
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["integration", "event_id"], name="chat_event_unique"),
        ]


class ChatMessage(models.Model):
    """A message the bot posted with an answer, so a reaction on it counts as feedback on that question."""

    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="messages")
    channel_id = models.CharField(max_length=100)
    message_id = models.CharField(max_length=100, help_text="Slack ts or Discord message id.")
    question = models.ForeignKey("answering.Question", on_delete=models.CASCADE, related_name="chat_messages")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["integration", "channel_id", "message_id"], name="chat_message_unique"),
        ]


class OAuthState(models.Model):
    """The single-use nonce of one OAuth install started from the dashboard (the `state` carries it, signed)."""

    nonce = models.CharField(max_length=64, unique=True)
    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)
