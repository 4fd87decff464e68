"""Guru write paths: keeping each guru's vector collection in step with the guru row."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from backend.adapters import registry
from backend.core.errors import AppError, Conflict
from backend.core.tasks import enqueue_on_commit
from backend.gurus.models import CollectionStatus, Guru, VectorCollection
from backend.pipeline.errors import PermanentServiceError, TransientServiceError

logger = logging.getLogger(__name__)

COLLECTION_LOCK_TTL = 600


def collection_name_for(slug: str) -> str:
    """The vector collection a guru with this slug should have (slugs never contain '_')."""
    return f"{settings.OPENGURU_COLLECTION_PREFIX}{slug.replace('-', '_')}"


def collection_lock_name(guru_id: int) -> str:
    """Lock serialising create/rename/drop of one guru's collection."""
    return f"guru-collection:{guru_id}"


def guru_collection_schedule_sync(*, guru: Guru) -> None:
    """After commit, converge the guru's collection unless it is known to be in step."""
    in_step = VectorCollection.objects.filter(
        guru_id=guru.pk, name=collection_name_for(guru.slug), status=CollectionStatus.READY
    ).exists()
    if in_step:
        return
    enqueue_on_commit("gurus.collection_sync", guru_id=guru.pk)


def guru_collection_schedule_drop(*, guru: Guru) -> None:
    """After the guru's deletion commits, drop its collection (whatever its name) and files."""
    enqueue_on_commit("gurus.collection_drop", guru_id=guru.pk, collection_names=[collection_name_for(guru.slug)])


def _record_failure(*, guru_id: int, name: str, dimension: int, error: str) -> None:
    VectorCollection.objects.update_or_create(
        guru_id=guru_id, defaults={"name": name, "dimension": dimension, "status": CollectionStatus.ERROR,
                                   "error": error},
    )


def _embedder_mismatch(record: VectorCollection | None, embedder_id: str) -> str:
    if record is None or not record.embedder or record.embedder == embedder_id:
        return ""
    return (
        f"The vectors were written by embedder '{record.embedder}' but '{embedder_id}' is configured; "
        "queries would be compared with vectors of another space. Run `manage.py reembed` for this guru "
        "or configure the previous embedder."
    )


def guru_collection_sync(*, guru_id: int) -> None:
    """Create or rename the guru's collection to match its slug, and check its embedder.

    Idempotent; the caller holds the guru's collection lock. A deleted guru is a no-op.
    Raises PermanentServiceError (after recording it) or TransientServiceError.
    """
    guru = Guru.objects.filter(pk=guru_id).first()
    if guru is None:
        return
    desired = collection_name_for(guru.slug)
    if VectorCollection.objects.filter(name=desired).exclude(guru_id=guru_id).exists():
        raise TransientServiceError(f"Collection name {desired} is still held by a deleted guru being dropped.")
    record = VectorCollection.objects.filter(guru_id=guru_id).first()
    dimension, embedder_id = registry.embedder().dimension, registry.embedder_id()
    store = registry.vector_store()
    current = record.name if record else desired
    try:
        if current != desired:
            store.rename_collection(current, desired)
            current = desired
        store.ensure_collection(desired, dimension=dimension)
        if mismatch := _embedder_mismatch(record, embedder_id):
            raise PermanentServiceError(mismatch)
    except PermanentServiceError as exc:
        _record_failure(guru_id=guru_id, name=current, dimension=dimension, error=str(exc))
        logger.error("guru %s collection sync failed: %s", guru_id, exc)
        raise
    VectorCollection.objects.update_or_create(
        guru_id=guru_id,
        defaults={"name": desired, "dimension": dimension, "embedder": embedder_id,
                  "status": CollectionStatus.READY, "error": ""},
    )


def guru_collection_rebuild(*, guru_id: int) -> bool:
    """Drop the guru's collection and create it again for the configured embedder; False: no such guru.

    The old vectors cannot be converted, so the collection is created empty at the new dimension; the
    caller (sources.services.source_reembed_guru) then puts every source back to be indexed. Idempotent.
    The caller holds the guru's collection lock.
    """
    guru = Guru.objects.filter(pk=guru_id).first()
    if guru is None:
        return False
    name = collection_name_for(guru.slug)
    record = VectorCollection.objects.filter(guru_id=guru_id).first()
    store = registry.vector_store()
    for old in {name, record.name if record else name}:
        store.drop_collection(old)
    VectorCollection.objects.filter(guru_id=guru_id).delete()
    guru_collection_sync(guru_id=guru_id)
    return True


def guru_collection_drop(*, guru_id: int, collection_names: list[str]) -> None:
    """Drop a deleted guru's collections and uploaded files, then forget its record. Idempotent."""
    record = VectorCollection.objects.filter(guru_id=guru_id).first()
    names = set(collection_names) | ({record.name} if record else set())
    store = registry.vector_store()
    for name in sorted(names):
        store.drop_collection(name)
    for area in ("sources", "gurus"):
        folder = Path(settings.MEDIA_ROOT) / area / str(int(guru_id))
        if folder.exists():
            shutil.rmtree(folder)
    VectorCollection.objects.filter(guru_id=guru_id).delete()


GURU_EDITABLE_FIELDS = ("slug", "name", "domain_knowledge", "intro_text", "base_color", "icon_url", "language",
                        "private", "active", "rerank_threshold", "trust_score_threshold", "chat_model", "source_graph",
                        "agentic", "memory", "memory_from_conversations")


def guru_create(*, user: User, slug: str, name: str, domain_knowledge: str, **fields: object) -> Guru:
    """Create a guru maintained by `user`; its collection is created after commit. Raises Conflict on a taken slug."""
    unknown = set(fields) - set(GURU_EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"Not editable: {', '.join(sorted(unknown))}")
    guru = Guru(slug=slug, name=name, domain_knowledge=domain_knowledge, **fields)
    try:
        with transaction.atomic():
            guru.save()
            guru.maintainers.add(user)
    except IntegrityError as exc:
        raise Conflict(f"A guru with the slug '{slug}' already exists.") from exc
    return guru


def guru_update(*, guru: Guru, **fields: object) -> Guru:
    """Change a guru's editable fields; a new slug renames its collection after commit. Raises Conflict."""
    unknown = set(fields) - set(GURU_EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"Not editable: {', '.join(sorted(unknown))}")
    for field, value in fields.items():
        setattr(guru, field, value)
    try:
        with transaction.atomic():
            guru.save(update_fields=[*fields, "updated_at"])
    except IntegrityError as exc:
        guru.refresh_from_db()
        raise Conflict(f"A guru with the slug '{fields.get('slug')}' already exists.") from exc
    return guru


def guru_delete(*, guru: Guru) -> None:
    """Delete a guru with its sources, questions, keys and widget ids; the collection and files go after commit."""
    with transaction.atomic():
        guru.delete()


class MaintainerError(AppError):
    code = "invalid_maintainer"


def guru_maintainer_add(*, guru: Guru, login: str) -> User:
    """Give the active account with this username or e-mail address access to the guru. Raises MaintainerError."""
    from django.contrib.auth import get_user_model

    login = login.strip()
    users = get_user_model().objects.filter(is_active=True)
    matches = []
    if login:
        matches = list(users.filter(username=login)) or list(users.filter(email__iexact=login)[:2])
    if len(matches) != 1:
        # The same message whether there is no such account or several: it does not reveal which accounts exist.
        raise MaintainerError(f"No single active account is called {login!r}; ask an administrator to create it.")
    guru.maintainers.add(matches[0])
    return matches[0]


def guru_maintainer_remove(*, guru: Guru, user_id: int) -> None:
    """Take a maintainer off the guru; the last one stays, so a guru is never left without a maintainer."""
    with transaction.atomic():
        # Locking the guru row serialises two removals that would otherwise each leave the other as the last.
        Guru.objects.select_for_update().filter(pk=guru.pk).first()
        ids = set(guru.maintainers.values_list("id", flat=True))
        if user_id not in ids:
            raise MaintainerError("That account does not maintain this guru.")
        if len(ids) <= 1:
            raise MaintainerError("A guru needs at least one maintainer; add another before removing this one.")
        guru.maintainers.remove(user_id)
