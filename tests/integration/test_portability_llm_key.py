"""The chat provider's API key saved on the Settings page travels sealed through export/import and is rotated."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from django.db import connection
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.adapters import registry
from backend.adapters.vector_store.milvus import MilvusVectorStore
from backend.core.fields import decrypt_text, is_current
from backend.core.keys import rotate_encrypted_values
from backend.core.selectors import settings_get
from backend.core.services import settings_update
from tests.integration.portability_support import build_install
from tests.integration.test_portability import become_another_install, export, import_

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]

KEY = "sk-llm-SECRET-travels-sealed"


def _raw_key() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT llm_api_key FROM core_settings")
        return str(cursor.fetchone()[0])


def test_the_llm_key_is_sealed_in_the_archive_and_re_encrypted_on_import(
    milvus: MilvusVectorStore, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    settings: SettingsWrapper, tmp_path: Path,
) -> None:
    build_install(django_capture_on_commit_callbacks)
    settings_update(llm_provider="openai-compatible", llm_base_url="http://127.0.0.1:11434/v1", llm_api_key=KEY,
                    answer_model="llama3.2")
    archive = tmp_path / "install.zip"
    export(archive)
    with zipfile.ZipFile(archive) as packed:
        row = packed.read("db/core.settings.jsonl").decode()
    assert KEY not in row and "archive-fernet:" in row

    become_another_install(settings)
    import_(archive)
    assert settings_get().llm_api_key == KEY and is_current(_raw_key())  # under the target's own key
    assert registry.llm_config()["API_KEY"] == KEY and registry.chat_model() is not None


def test_rotate_keys_re_encrypts_the_llm_key(settings: SettingsWrapper) -> None:
    settings.OPENGURU_ENCRYPTION_KEY = ""
    settings_update(llm_provider="openai", llm_api_key=KEY)  # encrypted with the secret key
    settings.OPENGURU_ENCRYPTION_KEY = "a-dedicated-encryption-key"
    assert not is_current(_raw_key()) and registry.llm_config()["API_KEY"] == KEY  # readable through the fallback
    (report,) = [r for r in rotate_encrypted_values() if r.label == "core.Settings.llm_api_key"]
    assert (report.rotated, report.failed) == (1, [])
    assert is_current(_raw_key()) and decrypt_text(_raw_key()) == KEY
