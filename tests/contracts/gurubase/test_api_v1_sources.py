"""Gurubase's REST API v1 data-source endpoints, as its clients call them (GURUBASE-NOTES.md §5 Flow 1, §7).

Each test sends a request the way a Gurubase client does (JSON, multipart or url-encoded, lists as JSON lists or
JSON-encoded strings) and reads the fields and status codes that client reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from rest_framework.test import APIClient

from backend.api.services import api_key_create
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind
from tests.factories import DataSourceFactory, GuruFactory, UserFactory
from tests.fakes.pdfs import pdf_bytes
from tests.support.git_servers import HOSTED, GitHosting

pytestmark = pytest.mark.django_db

URL = "/api/v1/docs/data-sources/"
VIDEO = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
COMPLETED = "Data sources processing completed"  # Gurubase's create_data_sources message, verbatim
# DataSourceAPISerializer's fields; `url` is left out for uploaded files.
LIST_FIELDS = {"id", "type", "url", "title", "status", "error", "date_created", "private", "last_reindex_date",
               "reindex_count"}


@pytest.fixture(autouse=True)
def _fresh_rate_limits(db: None) -> Iterator[None]:
    cache.clear()  # per-key counters live in the shared cache, which outlives a test's transaction
    yield
    cache.clear()


@pytest.fixture
def guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    with django_capture_on_commit_callbacks(execute=True):  # creates its vector collection
        created: Guru = GuruFactory(slug="docs", name="Docs")
    return created


@pytest.fixture
def gurubase_client(guru: Guru) -> APIClient:
    """A client holding a maintainer's key in X-API-KEY, as Gurubase's api_key_auth reads it."""
    guru.maintainers.add(user := UserFactory(username="maintainer"))
    key = api_key_create(user=user, name="gurubase", rate_limit_per_minute=1000)
    return APIClient(HTTP_X_API_KEY=key.raw)


def _pdf(name: str, text: str = "Brokers") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, pdf_bytes([[f"{text} line {i}" for i in range(20)]]),
                              content_type="application/pdf")


def _completed(response: Any) -> list[dict[str, Any]]:
    """The per-item results of a create call, after checking Gurubase's envelope: 200 and its `msg`."""
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["msg"] == COMPLETED and isinstance(body["results"], list)
    results: list[dict[str, Any]] = body["results"]
    return results


def test_json_create_answers_200_with_one_success_result_per_url(
    gurubase_client: APIClient, git_hosts: GitHosting,
) -> None:
    """DataSourceService.create_data_sources: 200 {msg, results: [{type, url, status, id, title}]}, per item."""
    repo = f"{git_hosts.http.base_url}/{HOSTED['gitlab']}"
    results = _completed(gurubase_client.post(URL, {
        "youtube_urls": [VIDEO], "website_urls": ["https://docs.example.com/guide"],
        "github_repos": [{"url": repo, "glob_pattern": "*.md", "include_glob": True}],
    }, format="json"))
    assert [(r["type"], r["url"], r["status"]) for r in results] == [
        ("YouTube", VIDEO, "success"), ("Website", "https://docs.example.com/guide", "success"),
        ("GitHub", repo, "success")]
    for result in results:
        assert {"type", "url", "status", "id", "title"} <= set(result) and "message" not in result
        assert DataSource.objects.filter(pk=result["id"]).exists()
    assert DataSource.objects.get(url=repo).options == {"include": ["*.md"]}


def test_multipart_with_json_encoded_lists_and_pdf_privacies(gurubase_client: APIClient, git_hosts: GitHosting) -> None:
    """The Gurubase frontend's FormData: JSON-string lists, pdf_files + pdf_privacies; PDFs come first, as `file`."""
    repo = f"{git_hosts.http.base_url}/{HOSTED['gitea']}"
    results = _completed(gurubase_client.post(URL, {
        "pdf_files": [_pdf("manual.pdf")], "pdf_privacies": json.dumps([True]),
        "youtube_urls": json.dumps([VIDEO]), "website_urls": json.dumps(["https://docs.example.com/a"]),
        "github_repos": json.dumps([{"url": repo, "glob_pattern": "tests/**", "include_glob": False}]),
    }, format="multipart"))
    assert [(r["type"], r["status"]) for r in results] == [
        ("PDF", "success"), ("YouTube", "success"), ("Website", "success"), ("GitHub", "success")]
    assert results[0]["file"] == "manual.pdf" and "url" not in results[0]
    assert DataSource.objects.get(pk=results[0]["id"]).private is True
    assert DataSource.objects.get(url=repo).options == {"exclude": ["tests/**"]}


def test_url_encoded_form_and_json_string_lists_in_json_are_accepted(gurubase_client: APIClient) -> None:
    """DRF's default parsers (Gurubase's api_data_sources) take url-encoded forms; json.loads a list string."""
    form = _completed(gurubase_client.post(URL, {"website_urls": json.dumps(["https://docs.example.com/form"])}))
    assert [(r["url"], r["status"]) for r in form] == [("https://docs.example.com/form", "success")]
    body = {"youtube_urls": json.dumps([VIDEO]), "website_urls": ["https://docs.example.com/json"]}
    mixed = _completed(gurubase_client.post(URL, body, format="json"))
    assert [(r["type"], r["status"]) for r in mixed] == [("YouTube", "success"), ("Website", "success")]


def test_a_url_the_guru_already_has_is_exists_with_that_sources_id(gurubase_client: APIClient, guru: Guru) -> None:
    """The strategies' DataSourceExists branch: status `exists`, id and title of the source already there."""
    existing = DataSourceFactory(guru=guru, kind=SourceKind.WEBSITE, url="https://docs.example.com/a", title="A")
    results = _completed(gurubase_client.post(URL, {"website_urls": ["https://docs.example.com/a",
                                                                     "https://docs.example.com/b"]}, format="json"))
    assert [(r["status"], r.get("id") == existing.pk) for r in results] == [("exists", True), ("success", False)]
    assert results[0]["title"] == "A"


def test_the_same_pdf_again_is_exists_with_the_first_ones_id(gurubase_client: APIClient) -> None:
    """A PDF already uploaded (same bytes) is `exists`, naming the first upload, not a failed request."""
    [first] = _completed(gurubase_client.post(URL, {"pdf_files": [_pdf("a.pdf")]}, format="multipart"))
    [again] = _completed(gurubase_client.post(URL, {"pdf_files": [_pdf("copy.pdf")]}, format="multipart"))
    assert (again["type"], again["file"], again["status"], again["id"]) == ("PDF", "copy.pdf", "exists", first["id"])


def test_a_bad_item_is_an_error_result_and_the_others_are_added(gurubase_client: APIClient) -> None:
    """The strategies' except branch: {status: error, message} for that item only; the call is still 200."""
    results = _completed(gurubase_client.post(URL, {"youtube_urls": ["https://vimeo.com/1"],
                                                    "website_urls": ["https://docs.example.com/ok"]}, format="json"))
    assert [r["status"] for r in results] == ["error", "success"]
    assert results[0]["message"] and "id" not in results[0]


def test_gurubase_kinds_we_do_not_index_are_error_results_not_dropped(gurubase_client: APIClient) -> None:
    """jira_urls, zendesk_urls, confluence_urls and excel_files: one `error` result each, saying why."""
    excel = SimpleUploadedFile("sheet.xlsx", b"PK\x03\x04", content_type="application/octet-stream")
    results = _completed(gurubase_client.post(URL, {
        "jira_urls": json.dumps(["https://corp.atlassian.net/browse/X-1"]),
        "zendesk_urls": json.dumps(["https://corp.zendesk.com/agent/tickets/1"]),
        "confluence_urls": json.dumps(["https://corp.atlassian.net/wiki/spaces/X/pages/1"]),
        "excel_files": [excel], "excel_privacies": json.dumps([False]),
        "website_urls": json.dumps(["https://docs.example.com/kept"]),
    }, format="multipart"))
    assert [(r["type"], r["status"]) for r in results] == [
        ("Website", "success"), ("Jira", "error"), ("Zendesk", "error"), ("Confluence", "error"), ("Excel", "error")]
    assert results[4]["file"] == "sheet.xlsx"
    assert all("does not index" in r["message"] and r["code"] == "unsupported_source" for r in results[1:])
    assert DataSource.objects.count() == 1


def test_no_data_sources_is_400_with_msg(gurubase_client: APIClient) -> None:
    """create_data_sources' 'No data sources provided': 400 {msg} (we add the stable `code`)."""
    response = gurubase_client.post(URL, {}, format="json")
    assert response.status_code == 400 and "No data sources provided" in response.json()["msg"]
    assert response.json()["code"] == "invalid"


def test_list_honours_page_size_1000_with_gurubases_fields(gurubase_client: APIClient, guru: Guru) -> None:
    """GET: DRF page {count, next, previous, results} of up to 1000 (default 1000), DataSourceAPISerializer fields."""
    DataSource.objects.bulk_create(DataSource(guru=guru, kind=SourceKind.WEBSITE, url=f"https://e.com/{n}")
                                   for n in range(1000))
    pdf = DataSourceFactory(guru=guru, kind=SourceKind.PDF, url="", file="sources/x.pdf", private=True)
    body = gurubase_client.get(f"{URL}?page_size=1000").json()
    assert body["count"] == 1001 and len(body["results"]) == 1000 and body["previous"] is None
    assert body["next"].startswith("http://testserver/")  # links are absolute
    assert len(gurubase_client.get(URL).json()["results"]) == 1000
    newest = body["results"][0]
    assert newest["id"] == pdf.pk and set(newest) >= LIST_FIELDS - {"url"} and "url" not in newest
    assert newest["private"] is True and newest["last_reindex_date"] and newest["error"] == ""
    assert set(body["results"][1]) >= LIST_FIELDS


def test_delete_with_an_ids_body_answers_200_msg(gurubase_client: APIClient, guru: Guru) -> None:
    """DELETE {ids: [...]} → 200 {msg}."""
    source = DataSourceFactory(guru=guru)
    response = gurubase_client.delete(URL, {"ids": [source.pk]}, format="json")
    assert response.status_code == 200 and response.json()["msg"]
    assert not DataSource.objects.filter(pk=source.pk).exists()


def test_reindex_with_ids_answers_200_msg_and_empty_ids_400_msg(gurubase_client: APIClient, guru: Guru) -> None:
    """POST data-sources/reindex/ {ids} → 200 {msg}; no ids → 400 {msg}."""
    source = DataSourceFactory(guru=guru)
    response = gurubase_client.post(f"{URL}reindex/", {"ids": [source.pk]}, format="json")
    assert response.status_code == 200 and response.json()["msg"]
    refused = gurubase_client.post(f"{URL}reindex/", {"ids": []}, format="json")
    assert refused.status_code == 400 and refused.json()["msg"]


def test_refusals_carry_msg(gurubase_client: APIClient) -> None:
    """Gurubase's handlers answer {msg} on 4xx; a missing guru is 404, a missing key 401."""
    unknown = gurubase_client.get("/api/v1/no-such-guru/data-sources/")
    assert unknown.status_code == 404 and unknown.json()["msg"]
    anonymous = APIClient().get(URL)
    assert anonymous.status_code == 401 and anonymous.json()["msg"]
