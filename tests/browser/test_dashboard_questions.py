"""Dashboard questions in Chromium: the list, a question's answer rendered safely, the unanswered groups."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache

from backend.answering.models import Binge, Channel, Question
from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory
from tests.support.browser import playwright_sync_api, submit_login_form

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect

PASSWORD = "correct horse battery staple"  # the UserFactory's
HOSTILE_ANSWER = (
    "## Retrying\n\nCall **`self.retry()`** inside a bound task [1].\n\n"
    "- `countdown`: seconds to wait [1]\n- `max_retries`: at most this many times [2]\n\n"
    "```python\nraise self.retry(exc=exc, countdown=5)\n```\n\n"
    "<img src=x onerror=window.__pwned=1> [click](javascript:window.__pwned=1) <script>window.__pwned=1</script>"
)
GAPS = ["How do I configure single sign on with Okta?", "How can I configure single sign on with Okta SAML?",
        "How do I configure single sign on using Okta?", "What is the price of the enterprise plan?",
        "What is the price of the enterprise plan per seat?", "Does it run on a Raspberry Pi?"]


def _question(guru: Guru, text: str, n: int, **fields: Any) -> Question:
    values: dict[str, Any] = {"user_question": text.lower(), "content": "Short answer [1].", "trust_score": 0.8,
                              "intent": "question", "latency_ms": 900 + n, "cost_usd": Decimal("0.0004")}
    values.update(fields)
    return Question.objects.create(guru=guru, question=text, slug=f"q-{n}", **values)


@pytest.fixture
def seeded() -> dict[str, Any]:
    cache.clear()
    user = UserFactory(username="ana")
    guru: Guru = GuruFactory(slug="celery", name="Celery Guru")
    guru.maintainers.add(user)
    binge = Binge.objects.create(guru=guru)
    first = _question(guru, "How do I retry a task?", 1, binge=binge, feedback=1, channel=Channel.API)
    detail = _question(
        guru, "How many times is a task retried at most?", 2, binge=binge, parent=first, content=HOSTILE_ANSWER,
        trust_score=0.42, feedback=-1, user_question="and how many times?",
        references=[{"n": 1, "source_id": 1, "title": "Retrying tasks", "link": "https://docs.example.com/retry",
                     "kind": "WEBSITE", "score": 0.91, "locator": ""},
                    {"n": 2, "source_id": 2, "title": "Celery manual", "link": "javascript:window.__pwned=1",
                     "kind": "PDF", "score": 0.7, "locator": "page 4"}],
        timings={"understand_ms": 350, "retrieve_ms": 120, "grade_ms": 800, "first_token_ms": 1400,
                 "generate_ms": 2300, "total_ms": 3600},
        usage={"grade": {"model": "gpt-4o-mini", "prompt_tokens": 1800, "completion_tokens": 40,
                         "cached_prompt_tokens": 1024},
               "answer": {"model": "gpt-4o-mini", "prompt_tokens": 2400, "completion_tokens": 210,
                          "cached_prompt_tokens": 0}})
    for n, text in enumerate(GAPS, start=10):
        _question(guru, text, n, out_of_context=True, trust_score=0.0, content="Not covered.",
                  channel=Channel.WIDGET if n % 2 else Channel.WEB)
    return {"guru": guru, "detail": detail}


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    submit_login_form(page, "ana", PASSWORD)
    expect(page.get_by_role("heading", level=1)).to_have_text("Your gurus")


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_list_then_a_question_rendered_safely(
    page: Page, asgi_live_server: str, seeded: dict[str, Any], page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    _log_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/questions/")
    expect(page.locator(".dq-table tbody tr")).to_have_count(8)
    screenshot("list")
    page.get_by_role("searchbox", name="Search").fill("RETRIED")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".dq-table tbody tr")).to_have_count(1)
    with page.expect_download() as download_info:  # the CSV link carries the filter
        page.get_by_role("link", name="export these as CSV").click()
    exported = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text(encoding="utf-8"))))
    assert [r["question"] for r in exported] == ["How many times is a task retried at most?"]
    row = page.locator(".dq-table tbody tr").first
    expect(row.locator(".badge.warn")).to_have_text("42%")
    expect(row).to_contain_text("follow-up")
    row.get_by_role("link", name="How many times is a task retried at most?").click()

    expect(page.get_by_role("heading", name="How many times is a task retried at most?")).to_be_visible()
    answer = page.locator("#dq-answer")
    expect(answer).to_have_class("dq-answer markdown rendered")
    expect(answer.locator("h2")).to_have_text("Retrying")
    expect(answer.locator("code.language-python")).to_contain_text("raise self.retry(exc=exc, countdown=5)")
    expect(answer.locator("li")).to_have_count(2)
    expect(answer.locator("a.cite").first).to_have_attribute("href", "#ref-1")
    # Raw HTML and javascript: links in the stored answer are shown as text, never run.
    expect(answer).to_contain_text("<img src=x onerror=window.__pwned=1>")
    assert answer.locator("img, script, [onerror]").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0
    assert page.evaluate("window.__pwned") is None
    expect(page.locator("#ref-1 a")).to_have_attribute("href", "https://docs.example.com/retry")
    expect(page.locator("#ref-2")).to_contain_text("Celery manual")
    expect(page.locator(".dq-facts")).to_contain_text("👎 Not helpful")
    expect(page.locator(".dq-turns li")).to_have_count(2)
    answer.locator("a.cite").first.click()
    expect(page).to_have_url(f"{asgi_live_server}/dashboard/g/celery/questions/{seeded['detail'].pk}/#ref-1")
    screenshot("detail")
    page.locator(".dq-turns").get_by_role("link", name="How do I retry a task?").click()
    expect(page.locator(".dq-facts")).to_contain_text("👍 Helpful")
    assert page_errors == []


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_unanswered_groups_open_to_their_questions(
    page: Page, asgi_live_server: str, seeded: dict[str, Any], page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    _log_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/")
    page.get_by_role("navigation", name="Guru sections").get_by_role("link", name="Unanswered").click()
    groups = page.locator(".dq-gap")
    expect(groups).to_have_count(3)
    expect(groups.nth(0).locator(".badge")).to_have_text("asked 3 times")
    expect(groups.nth(1).locator(".badge")).to_have_text("asked 2 times")
    members = groups.nth(0).locator(".dq-gap-members li")
    expect(members.first).to_be_hidden()
    groups.nth(0).locator("summary").click()
    expect(members).to_have_count(3)
    expect(members.first).to_be_visible()
    groups.nth(1).locator("summary").click()
    screenshot("groups")
    members.first.get_by_role("link").click()
    expect(page.locator(".dq-badges .badge.error")).to_have_text("not covered by the sources")
    assert page_errors == []
