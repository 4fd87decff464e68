"""One-line hand-offs from Guru saves and deletes (admin included) to the lifecycle services."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from backend.gurus import services
from backend.gurus.models import Guru


@receiver(post_save, sender=Guru, dispatch_uid="guru_collection_sync")
def _guru_saved(sender: type[Guru], instance: Guru, **kwargs: Any) -> None:
    services.guru_collection_schedule_sync(guru=instance)


@receiver(post_delete, sender=Guru, dispatch_uid="guru_collection_drop")
def _guru_deleted(sender: type[Guru], instance: Guru, **kwargs: Any) -> None:
    services.guru_collection_schedule_drop(guru=instance)
