"""Health without a key; the OpenAPI schema is valid and documents ApiKeyAuth; Swagger UI is self-hosted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from drf_spectacular.validation import validate_schema

from backend.api.views import health

pytestmark = pytest.mark.django_db


def test_health_is_ok_without_a_key(client: Client) -> None:
    response = client.get("/api/v1/health/")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "vector_store": "ok", "broker": "ok"}


def test_health_is_503_when_the_broker_is_down(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "broker_status", lambda: "error: connection refused")
    response = client.get("/api/v1/health/")
    assert response.status_code == 503
    assert response.json()["status"] == "degraded" and response.json()["broker"].startswith("error")


def test_broker_check_reports_an_unreachable_broker_quickly(settings: Any) -> None:
    from backend.config.celery_app import app

    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        assert health.broker_status().startswith("error")
    finally:
        app.conf.broker_url = original


def test_health_tells_anonymous_probes_what_is_down_but_not_where(
    client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from backend.config.celery_app import app

    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "milvus", "URI": "http://127.0.0.1:1", "TOKEN": "", "TIMEOUT": "1"}
    original = app.conf.broker_url
    app.conf.broker_url = "redis://:s3cret@127.0.0.1:1/0"
    try:
        body = client.get("/api/v1/health/").json()
    finally:
        app.conf.broker_url = original
    assert body["vector_store"].startswith("error: unreachable") and body["broker"].startswith("error: unreachable")
    assert "127.0.0.1" not in str(body) and "s3cret" not in str(body)
    assert "127.0.0.1" in caplog.text  # the operator still finds the cause in the log


def _schema(client: Client) -> dict[str, Any]:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_schema_is_valid_openapi_3(client: Client) -> None:
    schema = _schema(client)
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)  # JSON Schema of OpenAPI 3.0, bundled with drf-spectacular
    try:
        from openapi_spec_validator import validate
    except ImportError:
        from schemathesis.specs.openapi.definitions import OPENAPI_30_VALIDATOR

        OPENAPI_30_VALIDATOR.validate(schema)
    else:
        validate(schema)
    components = schema["components"]["schemas"]
    dangling = {ref for ref in _refs(schema) if ref.removeprefix("#/components/schemas/") not in components}
    assert not dangling


def test_schema_documents_the_api_key_and_errors(client: Client) -> None:
    schema = _schema(client)
    assert schema["components"]["securitySchemes"]["ApiKeyAuth"] == {"type": "apiKey", "in": "header",
                                                                    "name": "X-API-KEY"}
    sources = schema["paths"]["/api/v1/{slug}/data-sources/"]
    assert {"ApiKeyAuth": []} in sources["get"]["security"]
    assert set(sources["post"]["requestBody"]["content"]) == {"application/json", "multipart/form-data",
                                                              "application/x-www-form-urlencoded"}
    assert "409" not in sources["post"]["responses"]  # duplicates are per-item `exists` results (Gurubase)
    for status in ("400", "401", "403", "404", "413", "429"):
        ref = sources["post"]["responses"][status]["content"]["application/json"]["schema"]["$ref"]
        assert ref == "#/components/schemas/Error"
    assert "security" not in schema and not schema["paths"]["/api/v1/health/"]["get"].get("security")
    assert {"code", "msg"} <= set(schema["components"]["schemas"]["Error"]["required"])


def test_swagger_ui_is_served_from_the_sidecar_without_external_urls(client: Client) -> None:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "swagger-ui" in page
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page)
    assert urls and not [url for url in urls if "://" in url or url.startswith("//")]
    assert not re.search(r"https?://", page.replace("http://www.w3.org", ""))
    for url in urls:
        assert url.startswith("/static/drf_spectacular_sidecar/"), url
        assert client.get(url).status_code == 200, url
