"""Too many ids, fields or bytes: every API path answers the API's JSON error shape, never Django's HTML 400."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

URL = "/api/v1/guru-a/data-sources/"


def _json_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status and response["Content-Type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) >= {"code", "msg"}
    return body


@pytest.mark.parametrize("count", [1001, 5000])
def test_deleting_more_than_1000_ids_by_query_names_the_bound(api: APIClient, count: int) -> None:
    query = "&".join(f"ids={i}" for i in range(1, count + 1))
    body = _json_error(api.delete(f"{URL}?{query}"), 400)
    assert body["code"] == "too_many_fields" and "1000" in body["msg"]


def test_deleting_more_than_1000_ids_in_a_json_body_names_the_bound(api: APIClient) -> None:
    body = _json_error(api.delete(URL, {"ids": list(range(1, 1002))}, format="json"), 400)
    assert body["code"] == "invalid" and "1000" in body["msg"]


def test_exactly_1000_ids_by_query_are_accepted(api: APIClient) -> None:
    query = "&".join(f"ids={i}" for i in range(1, 1001))
    response = api.delete(f"{URL}?{query}")
    assert response.status_code == 200 and len(response.json()["not_found"]) == 1000


def test_a_form_with_too_many_fields_is_a_json_400(api: APIClient) -> None:
    urls = [f"https://example.com/{i}" for i in range(1001)]
    response = api.post(URL, {"website_urls": urls}, format="multipart")
    assert _json_error(response, 400)["code"] == "too_many_fields"


def test_a_form_with_too_many_files_is_a_json_400(api: APIClient) -> None:
    files = [SimpleUploadedFile(f"{i}.pdf", b"%PDF-1.4", content_type="application/pdf") for i in range(101)]
    body = _json_error(api.post(URL, {"pdf_files": files}, format="multipart"), 400)
    assert body["code"] == "too_many_files" and "100" in body["msg"]


def test_a_bad_request_outside_the_views_is_json_on_api_paths_and_html_elsewhere(client: Client) -> None:
    # A Host header outside ALLOWED_HOSTS fails before any view runs: Django's 400 handler answers.
    api = client.get("/api/v1/health/", HTTP_HOST="evil.example")
    assert _json_error(api, 400)["code"] == "bad_request"
    page = client.get("/accounts/login/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
