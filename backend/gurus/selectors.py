"""Guru read paths, including what the vector store says about each guru's collection."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet

from backend.adapters import registry
from backend.gurus.models import Guru
from backend.gurus.services import collection_name_for
from backend.pipeline.errors import ServiceError
from backend.pipeline.types import CollectionInfo


@dataclass(frozen=True)
class CollectionReport:
    """A guru's collection as the database expects it and as the vector store has it."""

    guru: Guru
    expected_name: str
    info: CollectionInfo | None
    embedder_dimension: int
    problem: str


def guru_list_for_user(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Guru]:
    """Gurus a user may manage: all for superusers, their own for maintainers."""
    if getattr(user, "is_superuser", False):
        return Guru.objects.all()
    if not user.is_authenticated:
        return Guru.objects.none()
    return Guru.objects.filter(maintainers=user)


def _problem(guru: Guru, expected: str, info: CollectionInfo | None, dimension: int) -> str:
    if guru.collection_error:
        return guru.collection_error
    if info is None:
        return "collection missing (sync pending or failed)"
    if info.dimension != dimension:
        return f"dimension {info.dimension} != embedder {dimension}: re-embed needed"
    if guru.vector_collection != expected:
        return "rename pending"
    return ""


def guru_collection_report(*, guru: Guru) -> CollectionReport:
    """Compare one guru's collection with its slug and the configured embedder."""
    expected = collection_name_for(guru.slug)
    dimension = registry.embedder().dimension
    try:
        info = registry.vector_store().collection_info(guru.vector_collection or expected)
    except ServiceError as exc:
        return CollectionReport(guru, expected, None, dimension, f"vector store unavailable: {exc}")
    return CollectionReport(guru, expected, info, dimension, _problem(guru, expected, info, dimension))


def guru_collection_reports() -> list[CollectionReport]:
    """Reports for every guru, ordered by slug."""
    return [guru_collection_report(guru=g) for g in Guru.objects.order_by("slug")]
