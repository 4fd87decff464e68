"""Example questions: only what a maintainer publishes on the Overview tab is suggested to visitors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.answering.models import Channel, Question
from backend.gurus.examples import guru_example_texts
from backend.gurus.models import MAX_EXAMPLES, ExampleQuestion, Guru
from backend.pipeline.sanitize import ZWSP
from backend.widget.models import WidgetId
from tests.factories import GuruFactory, UserFactory

pytestmark = pytest.mark.django_db

ORIGIN = "https://docs.example.com"


def _add(client: Client, guru: Guru, text: str) -> str:
    response = client.post(f"/dashboard/g/{guru.slug}/examples/", {"text": text}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def _change(client: Client, guru: Guru, example: ExampleQuestion, action: str, text: str = "") -> str:
    response = client.post(f"/dashboard/g/{guru.slug}/examples/{example.pk}/", {"action": action, "text": text},
                           follow=True)
    assert response.status_code == 200
    return response.content.decode()


def _visitor_question(guru: Guru, text: str, **fields: Any) -> Question:
    values: dict[str, Any] = {"guru": guru, "user_question": text, "question": text, "slug": text[:40].lower()
                              .replace(" ", "-").replace("?", ""), "content": "An answer [1].", "intent": "question",
                              "channel": Channel.WIDGET, **fields}
    return Question.objects.create(**values)


def test_write_edit_reorder_and_remove(client: Client, maintainer: Any, guru: Guru) -> None:
    for text in ["How do I retry a task?", "  Which   brokers\nare supported?  ", "What is beat?"]:
        page = _add(client, guru, text)
    assert "Published the example" in page
    assert guru_example_texts(guru=guru) == ["How do I retry a task?", "Which brokers are supported?", "What is beat?"]

    first, second, third = ExampleQuestion.objects.filter(guru=guru).order_by("position")
    _change(client, guru, third, "up")
    assert guru_example_texts(guru=guru) == ["How do I retry a task?", "What is beat?", "Which brokers are supported?"]
    _change(client, guru, first, "down")
    _change(client, guru, first, "down")
    _change(client, guru, first, "down")  # already last: stays there
    assert guru_example_texts(guru=guru)[-1] == "How do I retry a task?"
    _change(client, guru, second, "save", "Which brokers does Celery support?")
    assert "Which brokers does Celery support?" in guru_example_texts(guru=guru)
    page = _change(client, guru, third, "remove")
    assert "visitors no longer see it" in page
    assert guru_example_texts(guru=guru) == ["Which brokers does Celery support?", "How do I retry a task?"]
    assert list(ExampleQuestion.objects.filter(guru=guru).order_by("position").values_list("position", flat=True)) \
        == [0, 1]


def test_limits_and_neutralised_text(client: Client, maintainer: Any, guru: Guru) -> None:
    assert "limited to 200 characters" in _add(client, guru, "x" * 201)
    assert "Write the example question first" in _add(client, guru, " \u200b\u202e\x00 ")
    _add(client, guru, "<img src=x onerror=alert(1)> \u202eevil\x00 [x](javascript:alert(1))")
    (stored,) = guru_example_texts(guru=guru)
    assert "<img" not in stored and "javascript:" not in stored and "\u202e" not in stored and "\x00" not in stored
    assert stored.startswith("<" + ZWSP + "img")
    assert "already has the example" in _add(client, guru, stored)
    for number in range(MAX_EXAMPLES - 1):
        _add(client, guru, f"Question number {number}?")
    page = _add(client, guru, "One too many?")
    assert f"at most {MAX_EXAMPLES} example questions" in page and "The list is full" in page
    assert ExampleQuestion.objects.filter(guru=guru).count() == MAX_EXAMPLES
    public = Client().get(f"/g/{guru.slug}/").content.decode()
    assert "<img src=x" not in public and public.count('class="example-chip"') == MAX_EXAMPLES


def test_visitor_questions_are_offered_to_the_maintainer_but_never_shown_to_visitors(
    client: Client, maintainer: Any, guru: Guru,
) -> None:
    asked = "How do I keep my API token secret from Bob?"
    _visitor_question(guru, asked)
    _visitor_question(guru, "Was this answer bad?", feedback=-1)
    _visitor_question(guru, "What is the capital of Peru?", out_of_context=True)

    public = Client().get(f"/g/{guru.slug}/").content.decode()
    assert asked not in public and "example-chip" not in public and "Try:" not in public

    overview = client.get(f"/dashboard/g/{guru.slug}/").content.decode()
    candidates = overview.split('class="example-candidates"', 1)[1]
    assert asked in candidates
    assert "Was this answer bad?" not in candidates and "capital of Peru" not in candidates

    _add(client, guru, "How do I keep an API token secret?")  # picked, edited before publishing
    public = Client().get(f"/g/{guru.slug}/").content.decode()
    assert "How do I keep an API token secret?" in public and asked not in public
    _add(client, guru, asked)  # published word for word: no longer offered
    overview = client.get(f"/dashboard/g/{guru.slug}/").content.decode()
    assert 'class="example-candidates"' not in overview


def test_the_widget_gets_the_approved_examples_and_the_answerer(
    client: Client, maintainer: Any, guru: Guru, settings: Any,
) -> None:
    cache.clear()
    widget = WidgetId.objects.create(guru=guru, allowed_origins=[ORIGIN])
    _visitor_question(guru, "A visitor's private question?")
    ExampleQuestion.objects.create(guru=guru, text="Proposed, not approved?", approved=False, position=0)
    _add(client, guru, "How do I retry a task?")

    def config() -> dict[str, Any]:
        response = Client().get("/widget/guru/", headers={"Authorization": widget.key, "Origin": ORIGIN})
        assert response.status_code == 200
        return json.loads(response.content)

    body = config()
    assert body["example_questions"] == ["How do I retry a task?"] and body["answerer"] == "offline"
    settings.OPENGURU_LLM = {"PROVIDER": "openai", "MODEL": "gpt-4o-mini", "API_KEY": "sk-test",
                             "BASE_URL": "http://127.0.0.1:9/v1"}
    assert config()["answerer"] == "llm"


def test_only_maintainers_change_examples(client: Client, maintainer: Any) -> None:
    other = GuruFactory(slug="other")
    other.maintainers.add(UserFactory(username="bob"))
    example = ExampleQuestion.objects.create(guru=other, text="Bob's example?")
    assert client.post("/dashboard/g/other/examples/", {"text": "Mine now?"}).status_code == 404
    assert client.post(f"/dashboard/g/other/examples/{example.pk}/", {"action": "remove"}).status_code == 404
    assert Client().post("/dashboard/g/other/examples/", {"text": "Anonymous?"}).status_code == 302
    assert list(ExampleQuestion.objects.values_list("text", flat=True)) == ["Bob's example?"]


def test_deleting_the_guru_deletes_its_examples(
    client: Client, maintainer: Any, guru: Guru, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    _add(client, guru, "How do I retry a task?")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/dashboard/g/{guru.slug}/delete/", {"confirm_slug": guru.slug})
    assert not ExampleQuestion.objects.exists()
