"""The widget endpoints: CORS and preflights, widget-id and origin checks, the Gurubase protocol, SSE, limits."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Binge, Question
from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from backend.sources.services import source_create
from backend.widget.models import WidgetId
from tests.factories import GuruFactory
from tests.fakes.pdfs import pdf_bytes

pytestmark = pytest.mark.django_db

ORIGIN = "https://docs.example.com"
EVIL = "https://docs.example.com.evil.com"
MANUAL = [["Retrying tasks", "Call self.retry() inside a bound task to retry it.",
           "The countdown argument sets the delay before the retry in seconds."]]
CORS_NAMES = {"access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers",
              "access-control-max-age", "access-control-allow-credentials", "access-control-expose-headers"}


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    # Rate-limit counters live in the shared cache, which outlives a test's transaction.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    with django_capture_on_commit_callbacks(execute=True):  # creates its (in-memory) collection
        created: Guru = GuruFactory(slug="docs", name="Docs Guru", base_color="#0f9500", intro_text="Ask me.",
                                    icon_url="https://docs.example.com/icon.png")
    return created


@pytest.fixture
def indexed(guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    upload = SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title="Manual")
    return guru


@pytest.fixture
def widget(guru: Guru) -> WidgetId:
    return WidgetId.objects.create(guru=guru, allowed_origins=[ORIGIN, "http://localhost:*"])


def call(method: str, path: str, key: str | None = None, origin: str | None = ORIGIN, body: Any = None,
         remote_addr: str = "127.0.0.1", **headers: str) -> HttpResponse:
    sent = dict(headers)
    if key is not None:
        sent["Authorization"] = key
    if origin is not None:
        sent["Origin"] = origin
    send = getattr(Client(enforce_csrf_checks=True), method.lower())  # widget calls carry no CSRF token
    if body is None:
        return send(path, headers=sent, REMOTE_ADDR=remote_addr)  # type: ignore[no-any-return]
    data = body if isinstance(body, str) else json.dumps(body)
    return send(path, data=data, content_type="application/json", headers=sent,  # type: ignore[no-any-return]
                REMOTE_ADDR=remote_addr)


def cors_headers(response: HttpResponse) -> dict[str, str]:
    return {name.lower(): value for name, value in response.headers.items() if name.lower() in CORS_NAMES}


def body_text(response: Any) -> str:
    return b"".join(response).decode()


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.split("\n"))
            events.append((lines["event"], json.loads(lines["data"])))
    return events


@pytest.mark.parametrize("path", ["/widget/ask/", "/widget/guru/", "/widget/binge/", "/widget/stream/",
                                  "/api/widget/ask/"])
def test_preflight_from_an_allowed_origin(widget: WidgetId, path: str) -> None:
    response = call("OPTIONS", path, **{"Access-Control-Request-Method": "POST",
                                        "Access-Control-Request-Headers": "authorization,content-type"})
    assert response.status_code == 204
    assert cors_headers(response) == {
        "access-control-allow-origin": ORIGIN, "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": "Authorization, Content-Type, Accept", "access-control-max-age": "600"}
    assert "Origin" in response["Vary"]


@pytest.mark.parametrize("origin", [EVIL, "https://evilexample.com", "null", None])
def test_preflight_from_any_other_origin_is_refused(widget: WidgetId, origin: str | None) -> None:
    response = call("OPTIONS", "/widget/ask/", origin=origin, **{"Access-Control-Request-Method": "POST"})
    assert response.status_code == 403 and cors_headers(response) == {}


def test_preflight_ignores_inactive_widgets(widget: WidgetId) -> None:
    WidgetId.objects.filter(pk=widget.pk).update(active=False)
    assert call("OPTIONS", "/widget/ask/").status_code == 403


def test_guru_endpoint_and_exact_cors_headers(widget: WidgetId) -> None:
    response = call("GET", "/widget/guru/", key=widget.key)
    assert response.status_code == 200
    assert response.json() == {"slug": "docs", "name": "Docs Guru", "colors": {"base_color": "#0f9500"},
                               "icon_url": "https://docs.example.com/icon.png", "intro_text": "Ask me.",
                               "domain": "Task queues for Python", "example_questions": [], "answerer": "offline",
                               "can_receive_feedback": True}
    assert cors_headers(response) == {"access-control-allow-origin": ORIGIN,
                                      "access-control-expose-headers": "Retry-After"}
    assert "Origin" in response["Vary"]


@pytest.mark.parametrize("authorization", ["Widget {key}", "Bearer {key}", "  {key}  ", "widget {key}"])
def test_authorization_schemes_are_tolerated(widget: WidgetId, authorization: str) -> None:
    response = call("GET", "/widget/guru/", key=authorization.format(key=widget.key))
    assert response.status_code == 200


@pytest.mark.parametrize("key", [None, "", "nope", "x" * 500])
def test_unknown_widget_ids_get_401(widget: WidgetId, key: str | None) -> None:
    response = call("POST", "/widget/ask/", key=key, body={"question": "How do I retry a task?"})
    data = response.json()
    assert response.status_code == 401 and data["code"] == "invalid_widget_id" and data["msg"] == data["error"]
    # The origin is one a widget allows, so the page may read why it failed.
    assert response["Access-Control-Allow-Origin"] == ORIGIN


@pytest.mark.django_db(transaction=True)  # the answer runs in its own thread and connection
def test_unknown_binge_is_a_404_and_fetch_existing_of_a_new_question_answers_it(widget: WidgetId) -> None:
    gone = call("POST", "/widget/ask/", key=widget.key,
                body={"question": "hi", "binge_id": "00000000-0000-0000-0000-000000000000"})
    assert gone.status_code == 404 and gone.json()["code"] == "not_found" and gone.json()["error"]
    # Gurubase's api_ask: `fetch_existing` for a question never answered makes the answer, as without it.
    fresh = call("POST", "/widget/ask/", key=widget.key, body={"question": "never asked", "fetch_existing": True})
    assert fresh.status_code == 200 and fresh["Content-Type"] == "text/event-stream"
    assert Question.objects.filter(user_question="never asked").exists()


@pytest.mark.parametrize("change", [{"active": False}, {"guru_active": False}])
def test_inactive_widgets_and_gurus_get_401(widget: WidgetId, change: dict[str, bool]) -> None:
    if "active" in change:
        WidgetId.objects.filter(pk=widget.pk).update(active=False)
    else:
        Guru.objects.filter(pk=widget.guru_id).update(active=False)
    assert call("GET", "/widget/guru/", key=widget.key).status_code == 401


@pytest.mark.parametrize("origin", [EVIL, "https://evilexample.com", "http://docs.example.com", "null", None])
def test_other_origins_get_403_without_cors_headers(widget: WidgetId, origin: str | None) -> None:
    response = call("POST", "/widget/ask/", key=widget.key, origin=origin, body={"question": "How to retry?"})
    data = response.json()
    assert response.status_code == 403 and data["code"] == "origin_not_allowed" and "allowed origins" in data["msg"]
    assert data["error"] == data["msg"] and cors_headers(response) == {}
    assert not Question.objects.exists()


def test_wildcard_localhost_origin(widget: WidgetId) -> None:
    response = call("GET", "/widget/guru/", key=widget.key, origin="http://localhost:5173")
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == "http://localhost:5173"


@pytest.mark.parametrize(("body", "status", "code"), [
    ("not json", 400, "invalid_json"), ([1, 2], 400, "invalid_json"), ({}, 400, "invalid_question"),
    ({"question": "   "}, 400, "invalid_question"), ({"question": "x" * 2001}, 400, "invalid_question"),
    ({"question": "hi", "padding": "x" * 20_000}, 413, "too_large"),
    ({"question": "hi", "binge_id": "nope"}, 400, "invalid_session"),
    ({"question": "hi", "parent_slug": 5}, 400, "invalid_parent_slug"),
])
def test_bad_input_is_json_with_both_msg_and_error(widget: WidgetId, body: Any, status: int, code: str) -> None:
    response = call("POST", "/widget/ask/", key=widget.key, body=body)
    data = response.json()
    assert response.status_code == status and data["code"] == code and data["error"] == data["msg"]
    assert response["Access-Control-Allow-Origin"] == ORIGIN


def test_wrong_method_is_405(widget: WidgetId) -> None:
    response = call("GET", "/widget/ask/", key=widget.key)
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"


@pytest.mark.django_db(transaction=True)  # the stream runs in its own thread and connection
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")
def test_gurubase_protocol_stream_fetch_existing_binge_and_follow_up(indexed: Guru, widget: WidgetId) -> None:
    question = "How do I retry a task?"
    streamed = call("POST", "/widget/ask/", key=widget.key,
                    body={"question": question, "binge_id": None, "parent_slug": None, "fetch_existing": False})
    assert streamed.status_code == 200 and streamed["Content-Type"] == "text/event-stream"
    assert streamed["Access-Control-Allow-Origin"] == ORIGIN
    text = body_text(streamed)
    assert "self.retry()" in text and "event:" not in text and "data:" not in text

    existing = call("POST", "/widget/ask/", key=widget.key, body={"question": question, "fetch_existing": True})
    answer = existing.json()
    assert existing.status_code == 200 and answer["content"] == text.removeprefix("\n")
    assert isinstance(answer["trust_score"], int) and 0 <= answer["trust_score"] <= 100
    reference = answer["references"][0]
    assert reference["question"] == "Manual — page 1" and reference["icon"].endswith("/static/img/sources/pdf.svg")
    assert reference["link"].startswith("http://testserver/sources/")
    root = Question.objects.get(slug=answer["slug"])
    assert root.channel == "WIDGET"

    made = call("POST", "/widget/binge/", key=widget.key, body={"root_slug": answer["slug"]})
    binge = made.json()
    assert made.status_code == 200 and binge["root_slug"] == answer["slug"]
    stored = Binge.objects.get(pk=binge["id"])
    assert stored.channel == "WIDGET" and stored.root_question is not None
    assert stored.root_question.slug == root.slug and stored.root_question.content == root.content

    follow_up = call("POST", "/widget/ask/", key=widget.key,
                     body={"question": "and the delay?", "binge_id": binge["id"], "parent_slug": answer["slug"]})
    assert follow_up.status_code == 200 and body_text(follow_up)
    second = call("POST", "/widget/ask/", key=widget.key,
                  body={"question": "and the delay?", "binge_id": binge["id"], "fetch_existing": True}).json()
    assert second["binge_id"] == binge["id"] and second["session_id"] == binge["id"]
    asked = Question.objects.get(binge_id=binge["id"], slug=second["slug"])
    assert asked.parent_id == stored.root_question.pk and asked.channel == "WIDGET"


@pytest.mark.django_db(transaction=True)  # the stream runs in its own thread and connection
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")
def test_our_sse_stream(indexed: Guru, widget: WidgetId) -> None:
    response = call("POST", "/widget/stream/", key=widget.key, body={"question": "How do I retry a task?"})
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    assert response["Access-Control-Allow-Origin"] == ORIGIN and response["Cache-Control"] == "no-cache"
    events = sse_events(body_text(response))
    names = [name for name, _ in events]
    assert names[0] == "question" and "references" in names and "delta" in names and names[-1] == "done"
    session = events[0][1]["session_id"]
    assert Question.objects.get(pk=events[0][1]["question_id"]).channel == "WIDGET"
    again = call("POST", "/widget/stream/", key=widget.key, body={"question": "and the delay?", "session_id": session})
    assert sse_events(body_text(again))[0][1]["session_id"] == session
    gone = call("POST", "/widget/stream/", key=widget.key,
                body={"question": "and the delay?", "session_id": "00000000-0000-0000-0000-000000000000"})
    # Known before the first byte: a real 404, not a 200 stream holding an error event (issue #12 item 5).
    assert gone.status_code == 404 and gone.json()["code"] == "not_found"
    bad = call("POST", "/widget/stream/", key=widget.key, body={"question": "hi", "session_id": 5})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_session"


def test_binge_without_a_known_root(widget: WidgetId) -> None:
    response = call("POST", "/widget/binge/", key=widget.key, body={"root_slug": "never-asked"})
    assert response.status_code == 200
    assert Binge.objects.get(pk=response.json()["id"]).root_question is None


@pytest.mark.production_profile
def test_per_ip_limit_answers_429_with_retry_after(widget: WidgetId) -> None:
    WidgetId.objects.filter(pk=widget.pk).update(per_ip_rate_limit_per_minute=1, rate_limit_per_minute=100)
    # Three requests against one per minute: even across a minute boundary, one is refused.
    replies = [call("POST", "/widget/binge/", key=widget.key, body={}, remote_addr="10.0.0.1") for _ in range(3)]
    refused = [r for r in replies if r.status_code == 429]
    assert replies[0].status_code == 200 and refused
    assert int(refused[0]["Retry-After"]) >= 1 and refused[0].json()["code"] == "rate_limited"
    assert refused[0]["Access-Control-Allow-Origin"] == ORIGIN
    assert refused[0]["Access-Control-Expose-Headers"] == "Retry-After"
    other = call("POST", "/widget/binge/", key=widget.key, body={}, remote_addr="10.0.0.2")
    assert other.status_code == 200


@pytest.mark.production_profile
def test_per_widget_limit_answers_429_across_addresses(widget: WidgetId) -> None:
    WidgetId.objects.filter(pk=widget.pk).update(per_ip_rate_limit_per_minute=100, rate_limit_per_minute=1)
    replies = [call("POST", "/widget/binge/", key=widget.key, body={},
                    remote_addr=f"10.0.1.{n}") for n in range(3)]
    refused = [r for r in replies if r.status_code == 429]
    assert replies[0].status_code == 200 and refused and int(refused[0]["Retry-After"]) >= 1


@pytest.fixture
def script_files(settings: SettingsWrapper, tmp_path: Path) -> tuple[Path, Path]:
    settings.BASE_DIR = tmp_path
    markdown = tmp_path / "frontend" / "static" / "js" / "markdown.js"
    widget_js = tmp_path / "frontend" / "widget" / "widget.js"
    markdown.parent.mkdir(parents=True)
    markdown.write_text("window.OpenGuruMarkdown = {};\n")
    (markdown.parent / "markdown-inline.js").write_text("window.OpenGuruMarkdownInline = {};\n")
    (markdown.parent / "sse.js").write_text("window.OpenGuruSSE = {};\n")
    (markdown.parent / "answer-parts.js").write_text("window.OpenGuruAnswerParts = {};\n")
    widget_js.parent.mkdir(parents=True)
    (widget_js.parent / "widget.css").write_text(".og{}\n")
    (widget_js.parent / "widget-panel.js").write_text("var panel = {};\n")
    (widget_js.parent / "widget-turn.js").write_text("var turn = {};\n")
    return markdown, widget_js


def test_widget_js_is_503_until_the_script_exists(script_files: tuple[Path, Path]) -> None:
    response = Client().get("/widget.js")
    assert response.status_code == 503 and "widget.js" in response.content.decode()
    assert response["Cache-Control"] == "no-store"


def test_widget_js_is_one_cacheable_public_script(script_files: tuple[Path, Path]) -> None:
    markdown, widget_js = script_files
    widget_js.write_text("window.OpenGuruWidget = true;\n")
    response = Client().get("/widget.js", headers={"Origin": EVIL})
    body = response.content.decode()
    assert response.status_code == 200 and response["Content-Type"] == "application/javascript; charset=utf-8"
    assert body.index("OpenGuruMarkdown") < body.index("OpenGuruSSE") < body.index("OpenGuruWidget")
    assert response["Cache-Control"] == "public, max-age=300" and response["Access-Control-Allow-Origin"] == "*"
    etag = response["ETag"]
    head = Client().head("/widget.js")
    assert head.status_code == 200 and head.content == b"" and head["ETag"] == etag
    assert head["Content-Length"] == str(len(response.content))
    unchanged = Client().get("/widget.js", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b"" and unchanged["ETag"] == etag
    widget_js.write_text("window.OpenGuruWidget = 'v2';\n")
    changed = Client().get("/widget.js", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag and b"v2" in changed.content


def test_admin_validates_origins_and_shows_the_embed_snippet(admin_client: Client, guru: Guru) -> None:
    form = {"guru": guru.pk, "name": "Docs", "rate_limit_per_minute": 60, "per_ip_rate_limit_per_minute": 10,
            "active": "on"}
    refused = admin_client.post("/admin/widget/widgetid/add/",
                                {**form, "allowed_origins": '["docs.example.com", "https://*.com"]'})
    page = refused.content.decode()
    assert refused.status_code == 200 and "needs a scheme" in page and "registered domain" in page
    assert not WidgetId.objects.exists()
    saved = admin_client.post("/admin/widget/widgetid/add/", {
        **form, "allowed_origins": '["HTTPS://Docs.Example.com:443/", "http://localhost:*", "https://docs.example.com"]'})
    assert saved.status_code == 302
    widget = WidgetId.objects.get()
    assert widget.allowed_origins == ["https://docs.example.com", "http://localhost:*"]
    change = admin_client.get(f"/admin/widget/widgetid/{widget.pk}/change/").content.decode()
    snippet = (f'<script async src="http://testserver/widget.js" id="guru-widget-id" '
               f'data-widget-id="{widget.key}"></script>')
    assert html.escape(snippet) in change  # as frontend/widget/README.md documents it
