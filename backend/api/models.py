"""API keys: shown once, stored as a SHA-256 hash, scoped to one guru or all of a user's gurus."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from backend.gurus.models import Guru


class APIKey(models.Model):
    """A revocable key for the REST API (header X-API-KEY)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    guru = models.ForeignKey(
        Guru,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="api_keys",
        help_text="Empty: the key works for every guru the user maintains.",
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, help_text="The first characters, for recognising the key.")
    # Keys carry 190+ bits of randomness, so a fast hash is safe and keeps lookups O(1).
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    rate_limit_per_minute = models.PositiveIntegerField(default=60)
    for_integration = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
