"""Downloads stream under ASGI: a PDF cited in answers and the questions' CSV export, in bounded memory.

Real HTTP to the production ASGI app under uvicorn (asgi_live_server, in this process, so tracemalloc sees
what the server allocates). Under ASGI Django read a synchronous stream (FileResponse, a generator of CSV
lines) to its end into memory before its first byte.
"""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from django.conf import settings as django_settings
from django.core.files.base import ContentFile
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Channel, Question
from backend.sources.models import SourceKind, SourceStatus
from tests.factories import DataSourceFactory, GuruFactory, UserFactory

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


def _peak_while(get: Callable[[], int]) -> tuple[int, int]:
    """(bytes received, peak traced bytes) while `get` downloads."""
    tracemalloc.start()
    try:
        received = get()
        return received, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_questions_export_is_made_as_it_is_sent(asgi_live_server: str) -> None:
    user = UserFactory(username="keeper")
    guru = GuruFactory(slug="busy")
    guru.maintainers.add(user)
    answer = "A long answer that quotes its sources at length. " * 160  # 8 KB, as offline answers run
    Question.objects.bulk_create(
        Question(guru=guru, question=f"Question {i}?", user_question=f"question {i}?", slug=f"q-{i}",
                 content=answer, trust_score=0.8, channel=Channel.WEB, intent="question") for i in range(6_000))
    session = Client()
    session.force_login(user)
    cookies = {django_settings.SESSION_COOKIE_NAME: session.cookies[django_settings.SESSION_COOKIE_NAME].value}
    url = f"{asgi_live_server}/dashboard/g/busy/questions/export.csv"

    def get() -> int:
        received = 0
        with httpx.stream("GET", url, cookies=cookies, timeout=60) as response:
            assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
            for block in response.iter_raw(64 * 1024):
                received += len(block)
        return received

    get()  # the first download imports what serving needs: those allocations are not its
    received, peak = _peak_while(get)
    assert received > 6_000 * len(answer)
    assert peak < received // 4, f"{peak / 1e6:.1f} MB held while sending {received / 1e6:.0f} MB of CSV"
