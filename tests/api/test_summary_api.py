"""The summary endpoints: the guru's summary and a source's, with their spend, state and covered sources."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from backend.core.selectors import settings_get
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus, Summarization, SummaryState
from backend.sources.summary_selectors import EXTRACT_LABEL
from tests.factories import DataSourceFactory
from tests.support.summary_rows import MODEL, guru_root, source_root

pytestmark = pytest.mark.django_db

URL = "/api/v1/guru-a/summary/"


def _source(guru: Guru, **fields: Any) -> DataSource:
    source: DataSource = DataSourceFactory(guru=guru, status=SourceStatus.INDEXED,
                                           summary_state=SummaryState.DONE, **fields)
    return source


def _pdf(guru: Guru) -> DataSource:
    upload = SimpleUploadedFile("manual.pdf", b"%PDF-1.4", content_type="application/pdf")
    return _source(guru, kind=SourceKind.PDF, url="", file=upload, title="Manual")


def test_the_guru_summary_with_its_sources_spend_and_state(api: APIClient, guru_a: Guru) -> None:
    page = _source(guru_a, url="https://docs.example.com/guide", title="Guide")
    secret = _source(guru_a, url="https://intra.example.com/notes", title="Notes", private=True)
    manual = _pdf(guru_a)
    roots = [source_root(s, f"{s.title} in short.") for s in (page, secret, manual)]
    guru_root(guru_a, "The guru covers a guide,\nnotes and a manual.", roots)
    Guru.objects.filter(pk=guru_a.pk).update(summary_tokens_used=1234)

    response = api.get(URL)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["guru"] == "guru-a" and body["state"] == SummaryState.DONE and body["note"] == ""
    assert body["spend"] == {"used": 1234, "budget": settings_get().summary_token_budget}
    summary = body["summary"]
    assert summary["text"] == "The guru covers a guide,\nnotes and a manual."
    assert summary["label"] == f"Summary by {MODEL}" and not summary["extractive"] and summary["model"] == MODEL
    assert summary["level"] == 2 and summary["partial"] is False and summary["updated_at"]
    links = {s["title"]: s["link"] for s in summary["sources"]}
    assert links == {"Guide": "https://docs.example.com/guide", "Notes": "",  # private: never its link
                     "Manual": f"http://testserver/sources/{manual.pk}/file"}
    assert {s["id"] for s in summary["sources"]} == {page.pk, secret.pk, manual.pk}


def test_a_source_summary_has_its_progress_and_a_private_source_no_link(api: APIClient, guru_a: Guru) -> None:
    secret = _source(guru_a, url="https://intra.example.com/notes", title="Notes", private=True,
                     summary_done=3, summary_total=3)
    source_root(secret, "Notes <script>alert(1)</script> in short.", extractive=True, is_root=True)

    body = api.get(f"/api/v1/guru-a/data-sources/{secret.pk}/summary/").json()
    assert body["source_id"] == secret.pk and body["guru"] == "guru-a"
    assert (body["state"], body["done"], body["total"], body["note"]) == (SummaryState.DONE, 3, 3, "")
    summary = body["summary"]
    assert summary["label"] == EXTRACT_LABEL and summary["extractive"] and summary["model"] == ""
    assert summary["sources"] == [{"id": secret.pk, "title": "Notes", "link": ""}]
    assert "<script" not in summary["text"] and "script>alert(1)" in summary["text"]  # neutralised, not dropped


def test_no_summary_yet_is_null_with_a_note(api: APIClient, guru_a: Guru) -> None:
    body = api.get(URL).json()
    assert body["summary"] is None and body["state"] == "" and "no indexed sources" in body["note"]
    running = _source(guru_a, summary_done=2, summary_total=5)
    DataSource.objects.filter(pk=running.pk).update(summary_state=SummaryState.RUNNING)

    body = api.get(URL).json()
    assert body["summary"] is None and body["state"] == SummaryState.RUNNING and body["note"]
    body = api.get(f"/api/v1/guru-a/data-sources/{running.pk}/summary/").json()
    assert body["summary"] is None and (body["state"], body["done"], body["total"]) == ("RUNNING", 2, 5)
    assert body["note"] == "The summary is being written."
    pending = DataSourceFactory(guru=guru_a, status=SourceStatus.PENDING)
    body = api.get(f"/api/v1/guru-a/data-sources/{pending.pk}/summary/").json()
    assert body["summary"] is None and body["state"] == "" and "not indexed yet" in body["note"]


def test_a_tree_stopped_at_the_budget_shows_its_highest_summary_as_partial(api: APIClient, guru_a: Guru) -> None:
    source = _source(guru_a, summary_note="Stopped at the token budget (1000 tokens).")
    DataSource.objects.filter(pk=source.pk).update(summary_state=SummaryState.OVER_BUDGET)
    source_root(source, "Half of it.")
    Summarization.objects.filter(source=source).update(is_source_root=False)  # the top was never reached

    body = api.get(f"/api/v1/guru-a/data-sources/{source.pk}/summary/").json()
    assert body["summary"]["text"] == "Half of it." and body["summary"]["partial"] is True
    assert body["state"] == "OVER_BUDGET" and body["note"] == "Stopped at the token budget (1000 tokens)."
    assert api.get(URL).json()["state"] == "OVER_BUDGET"


def test_an_api_key_is_required(guru_a: Guru) -> None:
    response = APIClient().get(URL)
    assert response.status_code == 401 and response.json()["code"] == "unauthenticated"


def test_unknown_and_foreign_gurus_and_sources_are_refused(api: APIClient, guru_a: Guru, guru_b: Guru) -> None:
    unknown = api.get("/api/v1/no-such-guru/summary/")
    assert unknown.status_code == 404 and unknown.json()["code"] == "not_found" and unknown.json()["msg"]
    assert api.get("/api/v1/guru-b/summary/").status_code == 403
    foreign = _source(guru_b)
    missing = api.get(f"/api/v1/guru-a/data-sources/{foreign.pk}/summary/")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
