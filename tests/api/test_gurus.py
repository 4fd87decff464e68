"""Gurus over the API: list what the caller may use, create, read with collection stats, edit."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from rest_framework.test import APIClient

from backend.gurus.models import Guru, VectorCollection
from backend.gurus.services import collection_name_for
from tests.api.conftest import ClientMaker, KeyMaker
from tests.factories import DataSourceFactory, GuruFactory

pytestmark = pytest.mark.django_db

NEW_GURU = {"slug": "celery", "name": "Celery", "domain_knowledge": "Distributed task queues",
            "intro_text": "Ask me about Celery.", "base_color": "#12ab34", "language": "en", "private": True}


def test_list_shows_only_the_callers_gurus(maintainer: Any, guru_a: Guru, guru_b: Guru, api: APIClient) -> None:
    GuruFactory(slug="guru-c", name="Guru C").maintainers.add(maintainer)
    body = api.get("/api/v1/gurus/").json()
    assert body["count"] == 2 and [g["slug"] for g in body["results"]] == ["guru-a", "guru-c"]
    assert set(body["results"][0]) >= {"slug", "name", "domain_knowledge", "base_color", "private"}


def test_a_guru_scoped_key_lists_only_its_guru(maintainer: Any, guru_a: Guru, make_key: KeyMaker,
                                               client_with: ClientMaker) -> None:
    GuruFactory(slug="guru-c").maintainers.add(maintainer)
    body = client_with(make_key(maintainer, guru=guru_a)).get("/api/v1/gurus/").json()
    assert [g["slug"] for g in body["results"]] == ["guru-a"]


def test_list_is_paginated(maintainer: Any, guru_a: Guru, api: APIClient) -> None:
    for n in range(3):
        GuruFactory(slug=f"more-{n}").maintainers.add(maintainer)
    body = api.get("/api/v1/gurus/?page_size=2&page=2").json()
    assert body["count"] == 4 and len(body["results"]) == 2 and body["previous"]


def test_create_makes_the_caller_a_maintainer(maintainer: Any, guru_a: Guru, api: APIClient,
                                              django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
                                              ) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/gurus/", NEW_GURU, format="json")
    assert response.status_code == 201, response.json()
    assert {k: response.json()[k] for k in NEW_GURU} == NEW_GURU
    guru = Guru.objects.get(slug="celery")
    assert list(guru.maintainers.all()) == [maintainer]
    assert VectorCollection.objects.get(guru_id=guru.pk).name == collection_name_for("celery")
    assert api.get("/api/v1/gurus/celery/").status_code == 200


def test_duplicate_slug_is_409(guru_a: Guru, api: APIClient) -> None:
    response = api.post("/api/v1/gurus/", {**NEW_GURU, "slug": "guru-a"}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "conflict"


@pytest.mark.parametrize("field, value", [
    ("base_color", "red"), ("base_color", "#12ab3"), ("slug", "Not A Slug"), ("slug", "-edge"),
    ("slug", "x" * 51), ("name", ""), ("private", "maybe"),
])
def test_invalid_fields_are_400_with_details(api: APIClient, field: str, value: Any) -> None:
    response = api.post("/api/v1/gurus/", {**NEW_GURU, field: value}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid" and field in response.json()["detail"]


def test_a_guru_scoped_key_cannot_create_gurus(maintainer: Any, guru_a: Guru, make_key: KeyMaker,
                                               client_with: ClientMaker) -> None:
    response = client_with(make_key(maintainer, guru=guru_a)).post("/api/v1/gurus/", NEW_GURU, format="json")
    assert response.status_code == 403 and not Guru.objects.filter(slug="celery").exists()


def test_detail_has_collection_and_source_stats(guru_a: Guru, api: APIClient) -> None:
    DataSourceFactory(guru=guru_a)
    DataSourceFactory(guru=guru_a, status="FAILED")
    body = api.get("/api/v1/gurus/guru-a/").json()
    assert body["slug"] == "guru-a"
    assert body["sources"] == {"PENDING": 1, "PROCESSING": 0, "INDEXED": 0, "FAILED": 1}
    assert body["collection"]["ready"] is True and body["collection"]["chunk_count"] == 0


def test_detail_of_another_users_guru_is_403_and_unknown_is_404(guru_b: Guru, api: APIClient) -> None:
    assert api.get("/api/v1/gurus/guru-b/").status_code == 403
    assert api.get("/api/v1/gurus/nope/").status_code == 404


def test_patch_edits_fields_and_renames_the_collection(
    guru_a: Guru, api: APIClient, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = api.patch("/api/v1/gurus/guru-a/", {"slug": "renamed", "base_color": "#000000"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["slug"] == "renamed" and response.json()["base_color"] == "#000000"
    assert VectorCollection.objects.get(guru_id=guru_a.pk).name == collection_name_for("renamed")
    assert api.get("/api/v1/gurus/renamed/").json()["collection"]["ready"] is True
    assert api.get("/api/v1/gurus/guru-a/").status_code == 404


def test_patch_to_a_taken_slug_is_409_and_changes_nothing(guru_a: Guru, guru_b: Guru, api: APIClient) -> None:
    response = api.patch("/api/v1/gurus/guru-a/", {"slug": "guru-b", "name": "New"}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "conflict"
    guru_a.refresh_from_db()
    assert (guru_a.slug, guru_a.name) == ("guru-a", "Guru A")


def test_patch_rejects_a_bad_colour_and_foreign_gurus(guru_a: Guru, guru_b: Guru, api: APIClient) -> None:
    assert api.patch("/api/v1/gurus/guru-a/", {"base_color": "blue"}, format="json").status_code == 400
    assert api.patch("/api/v1/gurus/guru-b/", {"name": "Mine now"}, format="json").status_code == 403
    guru_b.refresh_from_db()
    assert guru_b.name == "Guru B"
