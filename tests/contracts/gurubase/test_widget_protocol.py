"""Gurubase's widget protocol (GURUBASE-NOTES.md §7 "Widget, bots, misc", §9, and the widget's source).

Each test names the Gurubase behaviour it pins: what its published widget script (the 2025 build and the
newer one) sends and reads. The calls are the widget's own, in its order, against the real answer flow.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.answering.models import Question
from backend.gurus.examples import guru_example_add
from backend.gurus.models import Guru
from backend.sources.models import SourceKind
from backend.sources.services import source_create
from backend.widget.models import WidgetId
from tests.factories import GuruFactory
from tests.fakes.pdfs import pdf_bytes
from tests.widget.test_widget_api import _fresh_rate_limits  # noqa: F401 - autouse: counters outlive a test

pytestmark = [pytest.mark.django_db(transaction=True),  # answers stream from their own thread and connection
              pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")]

SITE = "https://docs.example.com"
MANUAL = [["Retrying tasks", "Call self.retry() inside a bound task to retry it.",
           "The countdown argument sets the delay before the retry in seconds."]]
FIRST, SECOND = "How do I retry a task?", "and the delay?"
EXAMPLES = ["How do I set the retry delay?", "Which brokers are supported?"]
# Every path the widget builds from its base URL: `{base}/widget/…` and `{base}/<guru>/…`, where the
# self-hosted snippet's base is `<host>/api` (and our own root works too).
BASES = ["/api", ""]


@pytest.fixture
def widget(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> WidgetId:
    with django_capture_on_commit_callbacks(execute=True):
        guru: Guru = GuruFactory(slug="docs", name="Docs", base_color="#0f9500")
        source_create(guru=guru, kind=SourceKind.PDF, title="Manual",
                      upload=SimpleUploadedFile("manual.pdf", pdf_bytes(MANUAL), content_type="application/pdf"))
    for text in EXAMPLES:
        guru_example_add(guru=guru, text=text)
    return WidgetId.objects.create(guru=guru, allowed_origins=[SITE])


def send(method: str, path: str, widget: WidgetId | None, body: dict[str, Any] | None = None,
         origin: str = SITE, **headers: str) -> HttpResponse:
    """A request as the widget's fetch() makes it: the widget id alone in Authorization, the page's Origin."""
    sent = {"Origin": origin, **headers, **({"Authorization": widget.key} if widget else {})}
    client = Client(enforce_csrf_checks=True)  # the widget has no CSRF token
    if body is None:
        return client.generic(method, path, headers=sent)  # type: ignore[no-any-return]
    return client.generic(method, path, data=json.dumps(body),  # type: ignore[no-any-return]
                          content_type="application/json", headers=sent)


def streamed(response: HttpResponse) -> str:
    return b"".join(response).decode()  # type: ignore[attr-defined]


def ask(widget: WidgetId, base: str, question: str, binge_id: str | None = None, slug: str | None = None,
        fetch_existing: bool = False) -> HttpResponse:
    """The widget's prepareRequestBody: all four fields, always."""
    return send("POST", f"{base}/widget/ask/", widget, {"question": question, "parent_slug": slug,
                                                        "binge_id": binge_id, "fetch_existing": fetch_existing})


def assert_loads_from_any_page(url: str) -> None:
    """An image URL the widget puts in <img src>: absolute (a path would load from the host page) and served."""
    parts = urlsplit(url)
    assert parts.scheme in ("http", "https") and parts.netloc, url
    response = Client().get(parts.path)
    assert response.status_code == 200 and response["Content-Type"].startswith("image/"), url


@pytest.mark.parametrize("base", BASES)
def test_guru_config_is_what_the_widget_reads_for_missing_options(widget: WidgetId, base: str) -> None:
    """Gurubase: GET /widget/guru/ → {colors.base_color, icon_url, name, slug}; the newer build also reads
    example_questions. The icon goes in <img src> on the host page, so it must be an absolute, working URL."""
    response = send("GET", f"{base}/widget/guru/", widget)
    data = response.json()
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == SITE
    assert data["slug"] == "docs" and data["name"] == "Docs" and data["colors"] == {"base_color": "#0f9500"}
    assert data["example_questions"] == EXAMPLES
    assert_loads_from_any_page(data["icon_url"])


@pytest.mark.parametrize("path", ["/widget/guru/", "/widget/binge/", "/widget/ask/", "/docs/follow_up/examples/",
                                  "/docs/record_vote/"])
@pytest.mark.parametrize("base", BASES)
def test_every_call_passes_the_cors_preflight(widget: WidgetId, base: str, path: str) -> None:
    """Gurubase's widget sends `Authorization` and `Content-Type: application/json` cross-origin, so each of
    its calls is preceded by a preflight that must allow those headers for the page's origin."""
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization,content-type"}
    response = send("OPTIONS", f"{base}{path}", None, **preflight)
    assert response.status_code == 204 and response["Access-Control-Allow-Origin"] == SITE
    allowed = {name.strip().lower() for name in response["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed and "POST" in response["Access-Control-Allow-Methods"]


def test_the_widget_id_binds_to_its_domains(widget: WidgetId) -> None:
    """Gurubase's widget_id_auth: the key in Authorization, and the Origin must match the widget's domain."""
    assert send("GET", "/api/widget/guru/", None).status_code == 401
    refused = send("GET", "/api/widget/guru/", widget, origin="https://elsewhere.example.net")
    assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused


@pytest.mark.parametrize("base", BASES)
def test_a_conversation_as_the_widget_holds_it(widget: WidgetId, base: str) -> None:
    """Gurubase: the first question streams raw markdown (content-type text/event-stream, no SSE framing, and
    the widget renders from its first line break on);
    then fetch_existing gives {slug, content, question, date_updated, trust_score, references[{question,
    link, icon}]}; before the next question POST /widget/binge/ {root_slug} → {id, root_slug}, and follow-ups
    carry binge_id and parent_slug."""
    first = ask(widget, base, FIRST)
    assert first.status_code == 200 and "text/event-stream" in first["Content-Type"]
    assert first["Access-Control-Allow-Origin"] == SITE
    text = streamed(first)
    assert "self.retry()" in text and "event:" not in text and "data:" not in text
    # Its renderer shows nothing before the first line break (Gurubase's answers open with a "# Title" line).
    assert text.startswith("\n")

    answer = ask(widget, base, FIRST, fetch_existing=True).json()
    assert {"slug", "content", "question", "date_updated", "trust_score", "references"} <= set(answer)
    assert answer["content"] == text[1:] and isinstance(answer["date_updated"], str)
    assert isinstance(answer["trust_score"], int) and 0 <= answer["trust_score"] <= 100
    reference = answer["references"][0]
    assert reference["question"] == "Manual — page 1" and urlsplit(reference["link"]).scheme == "http"
    assert_loads_from_any_page(reference["icon"])

    binge = send("POST", f"{base}/widget/binge/", widget, {"root_slug": answer["slug"]}).json()
    assert set(binge) >= {"id", "root_slug"} and binge["root_slug"] == answer["slug"]
    follow_up = ask(widget, base, SECOND, binge["id"], answer["slug"])
    assert follow_up.status_code == 200 and streamed(follow_up)
    second = ask(widget, base, SECOND, binge["id"], answer["slug"], fetch_existing=True).json()
    asked = Question.objects.get(binge_id=binge["id"], slug=second["slug"])
    assert asked.parent is not None and asked.parent.slug == answer["slug"]  # the session continued


def test_errors_carry_the_field_the_widget_shows(widget: WidgetId) -> None:
    """Gurubase: widget errors are 400 `{error}`; the widget shows `data.error`."""
    response = send("POST", "/api/widget/ask/", widget, {"question": "", "fetch_existing": False})
    assert response.status_code == 400 and response.json()["error"]
    assert response["Access-Control-Allow-Origin"] == SITE  # so the page can read it


@pytest.mark.parametrize("base", BASES)
def test_suggested_follow_ups_after_each_answer(widget: WidgetId, base: str) -> None:
    """Gurubase's widget, after each answer: POST {base}/<guru>/follow_up/examples/ {binge_id, question_slug,
    question_text, widget: true} and renders the JSON list of question strings it gets (any failure is a
    console error)."""
    streamed(ask(widget, base, FIRST))
    slug = ask(widget, base, FIRST, fetch_existing=True).json()["slug"]
    response = send("POST", f"{base}/docs/follow_up/examples/", widget,
                    {"binge_id": None, "question_slug": slug, "question_text": FIRST, "widget": True})
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == SITE
    suggestions = response.json()
    assert isinstance(suggestions, list) and set(suggestions) <= set(EXAMPLES) and 0 < len(suggestions) <= 3
    assert suggestions[0] == "How do I set the retry delay?"  # the one related to the question first


@pytest.mark.parametrize("base", BASES)
def test_votes_as_the_newer_widget_sends_them(widget: WidgetId, base: str) -> None:
    """Gurubase's newer widget shows thumbs only when fetch_existing says `can_receive_feedback: true` (with
    `user_vote`), then POSTs {base}/<guru>/record_vote/ {content_slug, binge_id (null before a binge exists),
    vote_type: upvote | downvote, feedback (a downvote's comment or null)}."""
    streamed(ask(widget, base, FIRST))
    answer = ask(widget, base, FIRST, fetch_existing=True).json()
    assert answer["can_receive_feedback"] is True and answer["user_vote"] is None
    response = send("POST", f"{base}/docs/record_vote/", widget,
                    {"content_slug": answer["slug"], "binge_id": None, "vote_type": "downvote", "feedback": "Vague."})
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == SITE
    assert Question.objects.get(slug=answer["slug"], binge__isnull=False).feedback == -1
    assert ask(widget, base, FIRST, fetch_existing=True).json()["user_vote"] == "downvote"
