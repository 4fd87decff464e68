"""Database constraints, hashed keys, encrypted secrets and admin coverage of the data model."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import IntegrityError, connection, transaction

from backend.answering.models import Binge, Question
from backend.api.models import APIKey
from backend.api.services import api_key_create, api_key_hash, api_key_revoke
from backend.core.models import Settings
from backend.core.selectors import settings_get
from backend.integrations.models import Integration, IntegrationKind, Thread
from backend.sources.models import DataSource, GithubFile, SourceKind, SourcePage, Summarization
from backend.widget.models import WidgetId
from tests.factories import DataSourceFactory, GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


def _violates(fn: object) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        fn()  # type: ignore[operator]


def test_guru_slug_is_unique_and_well_formed() -> None:
    GuruFactory(slug="celery")
    _violates(lambda: GuruFactory(slug="celery"))
    _violates(lambda: GuruFactory(slug="Bad Slug!"))
    _violates(lambda: GuruFactory(slug="-leading"))


def test_source_url_is_unique_per_guru_but_not_across_gurus() -> None:
    source = DataSourceFactory(url="https://docs.example.com/")
    _violates(lambda: DataSourceFactory(guru=source.guru, url="https://docs.example.com/"))
    DataSourceFactory(url="https://docs.example.com/")
    assert DataSource.objects.count() == 2


def test_source_needs_a_url_or_a_file_and_bounded_progress() -> None:
    guru = GuruFactory()
    _violates(lambda: DataSource.objects.create(guru=guru, kind=SourceKind.PDF))
    _violates(lambda: DataSourceFactory(guru=guru, progress_done=5, progress_total=3))


def test_same_pdf_twice_in_a_guru_is_refused() -> None:
    guru = GuruFactory()
    DataSource.objects.create(guru=guru, kind=SourceKind.PDF, file="a.pdf", content_hash="ab" * 32)
    _violates(
        lambda: DataSource.objects.create(guru=guru, kind=SourceKind.PDF, file="b.pdf", content_hash="ab" * 32)
    )


def test_github_file_path_unique_per_source() -> None:
    source = DataSourceFactory(kind=SourceKind.GITHUB_REPO, url="https://github.com/celery/celery")
    fields = {"source": source, "path": "README.md", "blob_sha": "a" * 40, "size": 10, "link": "https://x.y/"}
    GithubFile.objects.create(**fields)
    _violates(lambda: GithubFile.objects.create(**fields))


def test_source_page_url_unique_per_source() -> None:
    source = DataSourceFactory(kind=SourceKind.WEBSITE, url="https://example.com/sitemap.xml")
    fields = {"source": source, "url": "https://example.com/a", "normalized_url": "https://example.com/a"}
    SourcePage.objects.create(**fields)
    _violates(lambda: SourcePage.objects.create(**fields))


def test_one_root_summary_per_guru() -> None:
    guru = GuruFactory()
    Summarization.objects.create(guru=guru, is_root=True, text="all")
    Summarization.objects.create(guru=guru, is_root=False, text="part")
    _violates(lambda: Summarization.objects.create(guru=guru, is_root=True, text="again"))


def test_question_slugs_unique_per_guru_and_per_binge() -> None:
    guru = GuruFactory()
    fields = {"guru": guru, "user_question": "q", "question": "Q", "slug": "what-is-celery"}
    Question.objects.create(**fields)
    _violates(lambda: Question.objects.create(**fields))
    binge = Binge.objects.create(guru=guru)
    Question.objects.create(binge=binge, **fields)
    _violates(lambda: Question.objects.create(binge=binge, **fields))
    _violates(lambda: Question.objects.create(**{**fields, "slug": "other", "trust_score": 1.5}))


def test_settings_is_a_singleton() -> None:
    assert settings_get().pk == Settings.SINGLETON_ID
    assert settings_get().pk == Settings.SINGLETON_ID
    _violates(lambda: Settings.objects.create(id=2))


def test_api_keys_are_stored_hashed_and_revocable() -> None:
    user = UserFactory()
    issued = api_key_create(user=user, name="ci")
    stored = APIKey.objects.get()
    assert issued.raw.startswith("og_") and len(issued.raw) > 40
    assert stored.key_hash == api_key_hash(issued.raw) and issued.raw not in stored.key_hash
    assert issued.raw.startswith(stored.prefix)
    api_key_revoke(api_key=stored)
    stored.refresh_from_db()
    assert stored.revoked_at is not None


def test_integration_secrets_are_encrypted_at_rest() -> None:
    guru = GuruFactory()
    integration = Integration.objects.create(
        kind=IntegrationKind.SLACK, guru=guru, external_id="T123", access_token="xoxb-secret-token"
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token FROM integrations_integration WHERE id = %s", [integration.pk])
        raw = cursor.fetchone()[0]
    assert raw.startswith("fernet:") and "xoxb-secret-token" not in raw
    assert Integration.objects.get().access_token == "xoxb-secret-token"
    _violates(lambda: Integration.objects.create(kind=IntegrationKind.SLACK, guru=guru, external_id="T9"))
    binge = Binge.objects.create(guru=guru)
    thread_fields = {"integration": integration, "external_thread_id": "1700.1", "binge": binge}
    Thread.objects.create(**thread_fields)
    _violates(lambda: Thread.objects.create(**thread_fields))


def test_widget_keys_are_random_and_unique() -> None:
    guru = GuruFactory()
    first = WidgetId.objects.create(guru=guru, allowed_origins=["https://*.example.com"])
    second = WidgetId.objects.create(guru=guru)
    assert first.key != second.key and len(first.key) >= 40


def test_every_model_is_registered_in_the_admin() -> None:
    ours = [m for m in apps.get_models() if m.__module__.startswith("backend.")]
    assert len(ours) == 29
    assert [m.__name__ for m in ours if not admin.site.is_registered(m)] == []


def test_every_admin_page_of_ours_renders(admin_client: Any) -> None:
    from django.urls import reverse

    from backend.answering.citations import citations_record

    guru = GuruFactory()
    source = DataSourceFactory(guru=guru)
    question = Question.objects.create(guru=guru, user_question="q", question="q", slug="q",
                                       references=[{"n": 1, "source_id": source.pk, "title": "Page"}])
    citations_record(question, question.references)
    for model in [m for m in apps.get_models() if m.__module__.startswith("backend.")]:
        meta = model._meta
        listing = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert listing.status_code == 200, meta.label
        first = model.objects.first()
        if first is not None:
            change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[first.pk])
            assert admin_client.get(change).status_code == 200, meta.label
