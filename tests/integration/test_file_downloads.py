"""A PDF cited in answers downloads as a stream under ASGI: bounded memory, every byte, the headers kept.

Real HTTP to the production ASGI app under uvicorn (asgi_live_server, in this process, so tracemalloc sees
what the server allocates). Django's FileResponse read the whole file into memory before its first byte.
"""

from __future__ import annotations

import hashlib
import tracemalloc
from pathlib import Path

import httpx
import pytest
from django.core.files.base import ContentFile
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.sources.models import SourceKind, SourceStatus
from tests.factories import DataSourceFactory, GuruFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.production_profile]
SIZE = 24 * 1024 * 1024


def test_a_large_pdf_is_served_a_block_at_a_time(
    asgi_live_server: str, settings: SettingsWrapper, tmp_path: Path,
) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    data = b"%PDF-1.4\n" + bytes(range(256)) * (SIZE // 256)
    source = DataSourceFactory(guru=GuruFactory(slug="manuals"), kind=SourceKind.PDF, url="",
                               file=ContentFile(data, name="big manual.pdf"), status=SourceStatus.INDEXED)
    url = f"{asgi_live_server}/sources/{source.pk}/file"
    httpx.get(url, timeout=60)  # the first download imports what serving needs: those allocations are not its
    digest, received = hashlib.sha256(), 0
    tracemalloc.start()
    try:
        with httpx.stream("GET", url, timeout=60) as response:
            assert response.status_code == 200
            assert response.headers["content-length"] == str(len(data))
            assert response.headers["content-type"] == "application/pdf"
            name = source.file.name.rsplit("/", 1)[-1]
            assert response.headers["content-disposition"] == f'inline; filename="{name}"'
            for block in response.iter_raw(64 * 1024):
                digest.update(block)
                received += len(block)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert received == len(data) and digest.hexdigest() == hashlib.sha256(data).hexdigest()
    # Read whole, the file alone would be 24 MB at once; a stream holds a few blocks of 64 KB.
    assert peak < SIZE // 4, f"{peak / 1e6:.1f} MB held while serving a {SIZE / 1e6:.0f} MB file"
