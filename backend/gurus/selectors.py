"""Guru read paths, including what the vector store says about each guru's collection."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils.text import slugify

from backend.adapters import registry
from backend.gurus.models import SLUG_PATTERN, CollectionStatus, Guru, VectorCollection
from backend.gurus.services import collection_name_for
from backend.pipeline.errors import ServiceError
from backend.pipeline.types import CollectionInfo

# Searches re-load a released collection themselves; this says why the first one may be slow or fail.
NOT_LOADED_PROBLEM = "not loaded in the vector store (searches load it; `manage.py collections --sync` loads it now)"


@dataclass(frozen=True)
class CollectionReport:
    """A guru's collection as the database expects it and as the vector store has it."""

    guru: Guru
    expected_name: str
    record: VectorCollection | None
    info: CollectionInfo | None
    embedder_dimension: int
    embedder_id: str
    problem: str

    @property
    def dimension_changed(self) -> bool:
        """The collection exists at another dimension than the configured embedder's."""
        return self.info is not None and self.info.dimension != self.embedder_dimension

    @property
    def embedder_changed(self) -> bool:
        """The collection's vectors come from another embedder than the configured one."""
        return self.record is not None and bool(self.record.embedder) and self.record.embedder != self.embedder_id


def guru_list_for_user(*, user: User | AnonymousUser) -> QuerySet[Guru]:
    """Gurus a user may manage: all for superusers, their own for maintainers."""
    if getattr(user, "is_superuser", False):
        return Guru.objects.all()
    if not user.is_authenticated:
        return Guru.objects.none()
    return Guru.objects.filter(maintainers=user)


def _problem(
    expected: str, record: VectorCollection | None, info: CollectionInfo | None, dimension: int, embedder_id: str
) -> str:
    if record is not None and record.status == CollectionStatus.ERROR:
        return record.error
    if record is not None and record.embedder and record.embedder != embedder_id:
        return f"built by {record.embedder}, configured {embedder_id}: run `manage.py reembed`"
    if info is None:
        return "collection missing (sync pending)" if record is None else "collection missing from the vector store"
    if info.dimension != dimension:
        return f"dimension {info.dimension} != embedder {dimension}: re-embed needed"
    if not info.loaded:
        return NOT_LOADED_PROBLEM
    if record is None or record.name != expected:
        return "rename pending"
    return ""


def guru_collection_report(*, guru: Guru) -> CollectionReport:
    """Compare one guru's collection with its slug and the configured embedder."""
    return _report(guru, VectorCollection.objects.filter(guru_id=guru.pk).first())


def _report(guru: Guru, record: VectorCollection | None) -> CollectionReport:
    expected = collection_name_for(guru.slug)
    dimension, embedder_id = registry.embedder().dimension, registry.embedder_id()
    try:
        info = registry.vector_store().collection_info(record.name if record else expected)
    except ServiceError as exc:
        problem = f"vector store unavailable: {exc}"
        return CollectionReport(guru, expected, record, None, dimension, embedder_id, problem)
    problem = _problem(expected, record, info, dimension, embedder_id)
    return CollectionReport(guru, expected, record, info, dimension, embedder_id, problem)


def guru_collection_reports(*, gurus: QuerySet[Guru] | None = None) -> list[CollectionReport]:
    """Reports for the given gurus (default: all), ordered by slug, with one query for records."""
    gurus = (gurus if gurus is not None else Guru.objects.all()).order_by("slug")
    records = {r.guru_id: r for r in VectorCollection.objects.filter(guru_id__in=[g.pk for g in gurus])}
    return [_report(g, records.get(g.pk)) for g in gurus]


def answerer_kind() -> str:
    """Which answerer writes answers on this install: "llm" (a chat model is configured) or "offline"
    (the extractive answerer: answers are passages quoted from the sources)."""
    return "llm" if registry.llm_enabled() else "offline"


def guru_slug_from_name(name: str) -> str:
    """A free slug for a new guru called `name`: Django's slugify cut to the slug rules, then -2, -3… if taken."""
    base = re.sub(r"[-_]+", "-", slugify(name)).strip("-")[:50].strip("-")
    if not re.fullmatch(SLUG_PATTERN, base):
        base = "guru"  # nothing of the name survives slugify (e.g. only non-Latin letters)
    slug, number = base, 1
    while Guru.objects.filter(slug=slug).exists():
        number += 1
        suffix = f"-{number}"
        slug = base[: 50 - len(suffix)].rstrip("-") + suffix
    return slug
