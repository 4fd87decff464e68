"""Data sources over the Gurubase-compatible API: add each kind, list, delete, re-index, bounds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import DjangoAssertNumQueries, DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from tests.factories import DataSourceFactory
from tests.fakes.pdfs import pdf_bytes
from tests.fakes.site_server import SiteFake
from tests.support.git_servers import HOSTED, PRIVATE, GitHosting

pytestmark = pytest.mark.django_db

URL = "/api/v1/guru-a/data-sources/"
VIDEO = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
PAGES = [[f"Line {i}: workers acknowledge messages after the task finished." for i in range(30)]]


def _pdf(name: str, text: str = "Brokers") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, pdf_bytes([[f"{text} line {i}" for i in range(20)]]),
                              content_type="application/pdf")


def test_add_urls_of_each_kind(api: APIClient, guru_a: Guru, git_hosts: GitHosting,
                               django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    gitlab, gitea = (f"{git_hosts.http.base_url}/{HOSTED[forge]}" for forge in ("gitlab", "gitea"))
    payload = {
        "youtube_urls": [VIDEO],
        "website_urls": ["https://docs.example.com/guide"],
        "github_repos": [gitlab, {"url": gitea, "branch": "trunk", "include": ["docs/**"], "exclude": ["*.png"]}],
        "website_mode": "crawl",
    }
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(URL, payload, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [(r["type"], r["status"]) for r in body["results"]] == [
        ("YouTube", "success"), ("Website", "success"), ("GitHub", "success"), ("GitHub", "success")]
    assert [s["type"] for s in body["created"]] == ["YOUTUBE", "WEBSITE", "GITHUB_REPO", "GITHUB_REPO"]
    assert [r["id"] for r in body["results"]] == [s["id"] for s in body["created"]]
    assert body["errors"] == [] and len(callbacks) == 4  # one index task each, after commit
    assert body["created"][0]["status"] == "PENDING" and body["created"][0]["progress"] == {"done": 0, "total": 0}
    assert DataSource.objects.get(kind=SourceKind.WEBSITE).options == {"mode": "crawl"}
    repo = DataSource.objects.get(url=gitea)
    assert repo.options == {"branch": "trunk", "include": ["docs/**"], "exclude": ["*.png"]}


def test_gurubase_glob_pattern_becomes_include_or_exclude(api: APIClient, guru_a: Guru, git_hosts: GitHosting) -> None:
    one, two = (f"{git_hosts.http.base_url}/{HOSTED[forge]}" for forge in ("github", "bitbucket"))
    repos = [{"url": one, "glob_pattern": "*.md", "include_glob": True}, {"url": two, "glob_pattern": "tests/**"}]
    assert api.post(URL, {"github_repos": repos}, format="json").status_code == 200
    assert DataSource.objects.get(url=one).options == {"include": ["*.md"]}
    assert DataSource.objects.get(url=two).options == {"exclude": ["tests/**"]}


def test_what_would_fail_is_an_error_result_with_the_reason_and_no_row(
    api: APIClient, guru_a: Guru, git_hosts: GitHosting, settings: SettingsWrapper,
) -> None:
    cases = [({"github_repos": [f"{git_hosts.http.base_url}/nope.git"]}, "repository not found"),
             ({"github_repos": [f"{git_hosts.https.base_url}/{PRIVATE}"]}, "authentication required"),
             ({"github_repos": [str(git_hosts.root / HOSTED["gitlab"])]}, "Only staff users"),  # API keys: never
             ({"github_repos": [(git_hosts.root / HOSTED["gitlab"]).as_uri()]}, "Only staff users")]
    for body, reason in cases:
        response = api.post(URL, body, format="json")
        assert response.status_code == 200, body
        [result] = response.json()["results"]
        assert (result["status"], result["code"]) == ("error", "invalid_source"), body
        assert reason in result["message"] and "id" not in result, result
    settings.OPENGURU_FETCH_ALLOWLIST = []
    for body in ({"website_urls": [f"{git_hosts.http.base_url}/docs"], "website_mode": "sitemap"},
                 {"github_repos": [f"{git_hosts.https.base_url}/{HOSTED['gitlab']}"]}):
        [result] = api.post(URL, body, format="json").json()["results"]
        assert result["status"] == "error" and "OPENGURU_FETCH_ALLOWLIST" in result["message"]
        assert "restart" in result["message"]
    assert not DataSource.objects.exists()


def test_the_same_repository_again_exists_naming_the_source(
    api: APIClient, guru_a: Guru, git_hosts: GitHosting,
) -> None:
    repo = f"{git_hosts.http.base_url}/{HOSTED['gitlab']}"
    first = api.post(URL, {"github_repos": [repo]}, format="json").json()["created"][0]
    response = api.post(URL, {"github_repos": [repo.removesuffix(".git") + "/"]}, format="json")
    assert response.status_code == 200
    assert response.json()["results"] == [{
        "type": "GitHub", "url": repo.removesuffix(".git") + "/", "status": "exists", "id": first["id"],
        "title": first["title"], "code": "conflict", "message": f"This is already a source of this guru: {repo}."}]
    assert response.json()["created"] == []
    assert response.json()["errors"] == [{"input": repo.removesuffix(".git") + "/", "code": "conflict",
                                          "msg": f"This is already a source of this guru: {repo}.",
                                          "source_id": first["id"]}]


def test_pdf_upload_indexes_offline_and_keeps_privacy(
    api: APIClient, guru_a: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    files = [_pdf("public.pdf", "Public"), _pdf("secret.pdf", "Secret")]
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(URL, {"pdf_files": files, "pdf_privacies": json.dumps([False, True])},
                            format="multipart")
    assert response.status_code == 200, response.json()
    created = response.json()["created"]
    assert [(s["title"], s["private"], "url" in s) for s in created] == [("public.pdf", False, False),
                                                                          ("secret.pdf", True, False)]
    assert [(r["type"], r["file"], r["status"]) for r in response.json()["results"]] == [
        ("PDF", "public.pdf", "success"), ("PDF", "secret.pdf", "success")]
    detail = api.get(f"{URL}{created[1]['id']}/").json()
    assert detail["status"] == "INDEXED" and detail["chunk_count"] > 0
    assert detail["progress"]["done"] == detail["progress"]["total"] > 0


def test_multipart_accepts_the_singular_privacy_name_and_url_lists(api: APIClient, guru_a: Guru) -> None:
    response = api.post(URL, {"pdf_files": [_pdf("a.pdf")], "pdf_privacy": "[true]",
                              "youtube_urls": json.dumps([VIDEO])}, format="multipart")
    assert response.status_code == 200, response.json()
    assert [(s["type"], s["private"]) for s in response.json()["created"]] == [("PDF", True), ("YOUTUBE", False)]


def test_one_bad_url_does_not_drop_the_others(api: APIClient, guru_a: Guru) -> None:
    response = api.post(URL, {"website_urls": ["ftp://old.example.com", "https://ok.example.com"],
                              "youtube_urls": ["https://vimeo.com/1"]}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert [(r["url"], r["status"]) for r in body["results"]] == [
        ("https://vimeo.com/1", "error"), ("ftp://old.example.com", "error"), ("https://ok.example.com", "success")]
    assert [s["url"] for s in body["created"]] == ["https://ok.example.com"]
    assert {(e["input"], e["code"]) for e in body["errors"]} == {
        ("ftp://old.example.com", "invalid_source"), ("https://vimeo.com/1", "invalid_source")}


def test_nothing_valid_or_only_duplicates_is_still_200_with_per_item_results(api: APIClient, guru_a: Guru) -> None:
    # Gurubase answers 200 "processing completed" whatever each item's fate; its clients read `results`.
    response = api.post(URL, {"website_urls": ["ftp://x.example.com"]}, format="json")
    assert response.status_code == 200 and response.json()["results"][0]["status"] == "error"
    first = api.post(URL, {"website_urls": ["https://x.example.com"]}, format="json").json()["results"][0]
    response = api.post(URL, {"website_urls": ["https://x.example.com"]}, format="json")
    assert response.status_code == 200 and response.json()["created"] == []
    assert response.json()["results"][0]["status"] == "exists" and response.json()["results"][0]["id"] == first["id"]
    assert response.json()["errors"][0]["input"] == "https://x.example.com"
    assert response.json()["errors"][0]["code"] == "conflict"


@pytest.mark.parametrize("body", [
    {}, [], "just a string", {"website_urls": []}, {"website_urls": "https://x.example.com"},
    {"website_urls": ["https://x.example.com/" + "a" * 2000]}, {"website_urls": [""]}, {"website_urls": [None]},
    {"website_urls": [f"https://x.example.com/{n}" for n in range(101)]},
    {"youtube_urls": [VIDEO] * 60, "website_urls": [f"https://x.example.com/{n}" for n in range(41)]},
    {"website_urls": ["https://x.example.com"], "website_mode": "everything"},
    {"github_repos": [42]}, {"github_repos": [{"branch": "main"}]}, {"github_repos": [{"url": "x", "include": "*"}]},
    {"website_urls": ["https://x.example.com/\u0000"]},
])
def test_bad_input_is_400_never_500(api: APIClient, guru_a: Guru, body: Any) -> None:
    response = api.post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] in ("invalid", "invalid_source") and response.json()["msg"]
    assert DataSource.objects.count() == 0


def test_malformed_json_is_400(api: APIClient, guru_a: Guru) -> None:
    response = api.generic("POST", URL, "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_json"


@pytest.mark.parametrize("method, path", [("POST", URL), ("DELETE", URL), ("POST", f"{URL}reindex/"),
                                          ("POST", "/api/v1/gurus/"), ("PATCH", "/api/v1/gurus/guru-a/")])
def test_json_nested_past_the_recursion_limit_is_400(api: APIClient, guru_a: Guru, method: str, path: str) -> None:
    # Found by schemathesis-style probing: DRF's parser let RecursionError through as a 500.
    response = api.generic(method, path, "[" * 100_000, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_json"


def test_privacy_flags_must_match_the_files(api: APIClient, guru_a: Guru) -> None:
    for privacy in ("[true, false]", "not json", "[", '{"a": 1}'):
        response = api.post(URL, {"pdf_files": [_pdf("a.pdf")], "pdf_privacies": privacy}, format="multipart")
        assert response.status_code == 400, (privacy, response.content)


def test_a_pdf_over_the_cap_is_413(api: APIClient, guru_a: Guru, settings: SettingsWrapper) -> None:
    settings.OPENGURU_MAX_PDF_BYTES = 200
    response = api.post(URL, {"pdf_files": [_pdf("big.pdf")], "website_urls": ["https://x.example.com"]},
                        format="multipart")
    assert response.status_code == 413 and response.json()["code"] == "too_large"
    assert DataSource.objects.count() == 0


def test_a_file_name_storage_would_refuse_is_stored_under_a_default(api: APIClient, guru_a: Guru) -> None:
    response = api.post(URL, {"pdf_files": [_pdf("$$$")]}, format="multipart")
    assert response.status_code == 200, response.content
    assert response.json()["results"][0]["status"] == "success"
    assert DataSource.objects.get().file.name.endswith(".pdf")


def test_list_is_paginated_newest_first_and_capped_at_1000(api: APIClient, guru_a: Guru, guru_b: Guru) -> None:
    DataSource.objects.bulk_create(DataSource(guru=guru_a, kind=SourceKind.WEBSITE, url=f"https://e.com/{n}")
                                   for n in range(1005))
    DataSourceFactory(guru=guru_b)
    body = api.get(f"{URL}?page_size=2").json()
    assert body["count"] == 1005 and len(body["results"]) == 2 and body["next"]
    assert body["results"][0]["id"] > body["results"][1]["id"]
    assert len(api.get(f"{URL}?page_size=1000").json()["results"]) == 1000  # Gurubase's bound, honoured
    assert len(api.get(f"{URL}?page_size=5000").json()["results"]) == 1000
    assert len(api.get(URL).json()["results"]) == 1000  # Gurubase's default page too
    assert api.get(f"{URL}?page=99").status_code == 404


def test_list_query_count_does_not_grow_with_sources(api: APIClient, guru_a: Guru,
                                                     django_assert_max_num_queries: DjangoAssertNumQueries) -> None:
    DataSourceFactory.create_batch(3, guru=guru_a)
    api.get(URL)  # the key's last_used_at write happens once a minute; keep it out of the count
    # Most of the budget is the rate-limit counter on the database cache; the view itself needs 4.
    with django_assert_max_num_queries(20) as few:
        assert len(api.get(URL).json()["results"]) == 3
    DataSourceFactory.create_batch(40, guru=guru_a)
    with django_assert_max_num_queries(20) as many:
        assert len(api.get(URL).json()["results"]) == 43
    assert len(many) == len(few)


def test_delete_by_ids_touches_only_this_gurus_sources(
    api: APIClient, guru_a: Guru, guru_b: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    mine, also_mine = DataSourceFactory(guru=guru_a), DataSourceFactory(guru=guru_a)
    theirs = DataSourceFactory(guru=guru_b)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.delete(URL, {"ids": [mine.pk, theirs.pk, 999_999]}, format="json")
    assert response.status_code == 200
    assert response.json()["ids"] == [mine.pk] and response.json()["not_found"] == [theirs.pk, 999_999]
    assert len(callbacks) == 2  # after commit: the cleanup task, and the rebuild of guru A's source graph
    assert set(DataSource.objects.values_list("pk", flat=True)) == {also_mine.pk, theirs.pk}


def test_delete_by_query_ids_and_bad_ids(api: APIClient, guru_a: Guru) -> None:
    source = DataSourceFactory(guru=guru_a)
    response = api.delete(f"{URL}?ids={source.pk}&ids={2**70}")
    assert response.status_code == 200 and response.json()["not_found"] == [2**70]
    for body in ({}, {"ids": []}, {"ids": ["x"]}, {"ids": [0]}):
        assert api.delete(URL, body, format="json").status_code == 400
    assert api.delete(URL).status_code == 400


def test_reindex_ids_or_all(api: APIClient, guru_a: Guru, guru_b: Guru,
                            django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    done = DataSourceFactory(guru=guru_a, status=SourceStatus.INDEXED)
    failed = DataSourceFactory(guru=guru_a, status=SourceStatus.FAILED)
    theirs = DataSourceFactory(guru=guru_b, status=SourceStatus.INDEXED)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(f"{URL}reindex/", {"ids": [done.pk, theirs.pk]}, format="json")
    assert response.status_code == 200 and response.json()["ids"] == [done.pk]
    assert response.json()["not_found"] == [theirs.pk] and len(callbacks) == 1
    done.refresh_from_db()
    theirs.refresh_from_db()
    assert (done.status, theirs.status) == (SourceStatus.PENDING, SourceStatus.INDEXED)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(f"{URL}reindex/", {"all": True}, format="json")
    assert sorted(response.json()["ids"]) == sorted([done.pk, failed.pk]) and len(callbacks) == 2


@pytest.mark.parametrize("body", [{}, {"all": False}, {"ids": [1], "all": True}, {"ids": []}, [1, 2]])
def test_reindex_needs_ids_or_all(api: APIClient, guru_a: Guru, body: Any) -> None:
    assert api.post(f"{URL}reindex/", body, format="json").status_code == 400


def test_detail_shows_status_and_error_and_delete_removes_one(
    api: APIClient, guru_a: Guru, guru_b: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    source = DataSourceFactory(guru=guru_a, status=SourceStatus.FAILED, error_message="404 from the site",
                               progress_done=1, progress_total=4)
    theirs = DataSourceFactory(guru=guru_b)
    body = api.get(f"{URL}{source.pk}/").json()
    assert (body["status"], body["error_message"], body["progress"]) == ("FAILED", "404 from the site",
                                                                         {"done": 1, "total": 4})
    assert body["error"] == "404 from the site"
    assert api.get(f"{URL}{theirs.pk}/").status_code == 404
    assert api.get(f"{URL}{2**70}/").status_code == 404
    assert api.delete(f"{URL}{theirs.pk}/").status_code == 404
    with django_capture_on_commit_callbacks(execute=False):
        assert api.delete(f"{URL}{source.pk}/").status_code == 204
    assert not DataSource.objects.filter(pk=source.pk).exists() and DataSource.objects.filter(pk=theirs.pk).exists()


def test_a_page_a_sitemap_already_indexed_is_added_with_a_warning(
    api: APIClient, guru_a: Guru, fake_site: SiteFake, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1/32"]
    with django_capture_on_commit_callbacks(execute=True):
        body = api.post(URL, {"website_urls": [f"{fake_site.base_url}/sitemap_index.xml"], "website_mode": "sitemap"},
                        format="json").json()
    assert body["warnings"] == []
    sitemap = DataSource.objects.get(pk=body["created"][0]["id"])
    page = sitemap.pages.filter(status="INDEXED").first()
    assert page is not None
    response = api.post(URL, {"website_urls": [page.url]}, format="json")
    assert response.status_code == 200
    added = response.json()["created"][0]["id"]
    assert response.json()["warnings"] == [
        {"id": added, "msg": f"This page is already indexed as part of {sitemap}; it was added again as a page of "
                             "its own."}]
