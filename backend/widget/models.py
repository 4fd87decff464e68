"""Widget ids: public keys that let a guru's widget run on allowed origins."""

from __future__ import annotations

import secrets

from django.db import models

from backend.gurus.models import Guru

KEY_MAX_LENGTH = 64


def new_widget_key() -> str:
    """A random, URL-safe public key."""
    return secrets.token_urlsafe(32)


class WidgetId(models.Model):
    """One embeddable widget configuration of a guru."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="widget_ids")
    key = models.CharField(max_length=KEY_MAX_LENGTH, unique=True, default=new_widget_key, editable=False)
    name = models.CharField(max_length=100, blank=True)
    allowed_origins = models.JSONField(
        default=list,
        help_text='Origin patterns, e.g. ["https://docs.example.com", "https://*.example.com", '
        '"http://localhost:*"].',
    )
    rate_limit_per_minute = models.PositiveIntegerField(default=120)
    per_ip_rate_limit_per_minute = models.PositiveIntegerField(default=20)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "widget id"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.guru} widget {self.key[:8]}…"
