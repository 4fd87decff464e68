"""The guru's memory in Chromium: a 👎 resolved from the question's page, then the Memory tab's approve, edit,
reject and delete."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from backend.answering.memory import memory_add
from backend.answering.models import Memory, MemoryOrigin, MemoryStatus, Question
from backend.gurus.models import Guru
from tests.support.browser import log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect

CORRECTION = "Tasks are retried three times by default."
PROPOSAL = "A retried task keeps its task id."


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_resolve_a_thumbs_down_then_review_the_memory(
    page: Page, asgi_live_server: str, maintainer: Any, guru: Guru, page_errors: list[str],
    screenshot: Callable[..., Path],
) -> None:
    question = Question.objects.create(guru=guru, user_question="how often is a task retried?",
                                       question="How often is a task retried?", slug="q", content="Five times.",
                                       feedback=-1)
    proposal = memory_add(guru=guru, text=PROPOSAL, origin=MemoryOrigin.CONVERSATION,
                          status=MemoryStatus.PROPOSED, question=question)
    log_in_as(page, asgi_live_server, maintainer)

    page.goto(f"{asgi_live_server}/dashboard/g/celery/questions/{question.pk}/")
    notes = page.locator("#dq-memory")
    expect(notes).to_contain_text(PROPOSAL)
    notes.get_by_label("Resolve this 👎 with a note").fill(CORRECTION)
    notes.get_by_role("button", name="Save the note").click()
    expect(page.locator(".message.success")).to_contain_text("Saved the note")
    expect(notes.locator(".mm-note")).to_have_count(2)
    expect(notes).to_contain_text(CORRECTION)
    screenshot("question")

    page.locator(".message.success").get_by_role("link", name="Memory").click()
    expect(page).to_have_url(f"{asgi_live_server}/dashboard/g/celery/memory/")
    expect(page.get_by_role("link", name="Memory", exact=True)).to_have_attribute("aria-current", "page")
    approved, waiting = page.locator("#approved"), page.locator("#waiting")
    expect(approved.locator(".mm-note")).to_have_count(1)
    expect(approved).to_contain_text(CORRECTION)
    expect(approved).to_contain_text("Resolution of a 👎")
    expect(waiting.locator(".mm-note")).to_have_count(1)
    screenshot("tab")

    waiting.locator(f"#memory-{proposal.pk}").get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator(".message.success")).to_contain_text("Approved the note")
    expect(approved.locator(".mm-note")).to_have_count(2)
    expect(waiting).to_contain_text("Nothing waits for approval.")

    item = approved.locator(f"#memory-{proposal.pk}")
    item.get_by_text("Edit", exact=True).click()
    item.get_by_label("Text").fill("A retried task keeps its id and its arguments.")
    item.get_by_role("button", name="Save").click()
    expect(page.locator(".message.success")).to_have_text("Saved the note.")
    expect(approved).to_contain_text("A retried task keeps its id and its arguments.")

    approved.locator(f"#memory-{proposal.pk}").get_by_role("button", name="Reject").click()
    expect(page.locator(".message.success")).to_contain_text("Rejected the note")
    rejected = page.locator("#rejected")
    expect(rejected.locator(f"#memory-{proposal.pk}")).to_be_visible()  # the redirect's #memory-<id> unfolds it
    page.goto(f"{asgi_live_server}/dashboard/g/celery/memory/")
    expect(rejected.locator(".mm-note")).not_to_be_visible()  # folded until opened
    rejected.locator("summary").first.click()
    item = rejected.locator(f"#memory-{proposal.pk}")
    expect(item).to_be_visible()
    item.get_by_text("Delete", exact=True).click()
    item.get_by_role("button", name="Delete for good").click()
    expect(page.locator(".message.success")).to_contain_text("Deleted the note")
    assert list(Memory.objects.values_list("text", "status")) == [(CORRECTION, MemoryStatus.APPROVED)]
    assert page_errors == []
