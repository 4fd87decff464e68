"""Encryption key rotation: fallbacks keep secrets readable, rotate_keys moves every one to the current key."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import connection
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.core.fields import key_materials
from backend.integrations.models import Integration, IntegrationKind
from backend.sources.models import DataSource, SourceKind
from tests.factories import GuruFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


def _raw(pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT access_token FROM integrations_integration WHERE id = %s", [pk])
        return str(cursor.fetchone()[0])


def _rotate(*args: str) -> str:
    out = io.StringIO()
    call_command("rotate_keys", *args, stdout=out)
    return out.getvalue()


def test_the_current_key_comes_first_then_every_fallback_once(settings: SettingsWrapper) -> None:
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "secret", ["old-secret"]
    settings.OPENGURU_ENCRYPTION_KEY, settings.OPENGURU_ENCRYPTION_KEY_FALLBACKS = "", ["old-enc", "secret"]
    assert key_materials() == ["secret", "old-enc", "old-secret"]
    settings.OPENGURU_ENCRYPTION_KEY = "enc"
    assert key_materials() == ["enc", "old-enc", "secret", "old-secret"]


def test_rotation_with_a_fallback_then_without(settings: SettingsWrapper) -> None:
    settings.OPENGURU_ENCRYPTION_KEY = "key-one"
    guru = GuruFactory()
    slack = Integration.objects.create(kind=IntegrationKind.SLACK, guru=guru, external_id="T1",
                                       access_token="xoxb-1", signing_secret="sign")
    repo = DataSource.objects.create(guru=guru, kind=SourceKind.GITHUB_REPO, url="https://github.com/a/b",
                                     access_token="ghp_1")
    before = _raw(slack.pk)

    settings.OPENGURU_ENCRYPTION_KEY = "key-two"
    with pytest.raises(ImproperlyConfigured, match="OPENGURU_ENCRYPTION_KEY_FALLBACKS"):
        Integration.objects.get(pk=slack.pk)
    settings.OPENGURU_ENCRYPTION_KEY_FALLBACKS = ["key-one"]
    assert Integration.objects.get(pk=slack.pk).access_token == "xoxb-1"

    assert "Dry run: 3 secret(s) would re-encrypt" in _rotate("--dry-run")
    assert _raw(slack.pk) == before
    printed = _rotate()
    assert "integrations.Integration.access_token: re-encrypted 1, already current 0" in printed
    assert "sources.DataSource.access_token: re-encrypted 1" in printed
    assert _raw(slack.pk) != before

    settings.OPENGURU_ENCRYPTION_KEY_FALLBACKS = []
    assert Integration.objects.get(pk=slack.pk).signing_secret == "sign"
    assert DataSource.objects.get(pk=repo.pk).access_token == "ghp_1"
    assert "0 secret(s) re-encrypted" in _rotate()


def test_a_plain_value_is_encrypted_and_an_unreadable_one_is_reported(settings: SettingsWrapper) -> None:
    guru = GuruFactory()
    plain = Integration.objects.create(kind=IntegrationKind.SLACK, guru=guru, external_id="T1")
    lost = Integration.objects.create(kind=IntegrationKind.DISCORD, guru=guru, external_id="G1", access_token="x")
    with connection.cursor() as cursor:  # a value written around the field, as before encryption existed
        cursor.execute("UPDATE integrations_integration SET access_token = 'plain' WHERE id = %s", [plain.pk])
    settings.SECRET_KEY = "a-secret-key-the-lost-value-never-saw"  # it derived the key the value was saved with
    with pytest.raises(CommandError, match=rf"integrations.Integration.access_token \(Integration #{lost.pk}\)"):
        _rotate()
    assert _raw(plain.pk).startswith("fernet:")
    assert Integration.objects.get(pk=plain.pk).access_token == "plain"
