"""The Evaluation tab in Chromium: import a JSONL set, see its questions, open a finished run, read the threshold
explorer and apply a threshold; a running evaluation's progress follows without a reload and its figures appear
when it ends."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.core.cache import cache
from django.utils import timezone

from backend.evaluation.models import EvalRun, EvalSet, RunState
from backend.gurus.models import Guru
from tests.dashboard.evaluation_support import GOOD, WORSE, finished_run
from tests.factories import GuruFactory, UserFactory
from tests.support.browser import ARTIFACTS, log_in_as, playwright_sync_api

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = playwright_sync_api().expect  # without the package: a loud skip, or a failure under CI=true

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SET = "".join(json.dumps(case) + "\n" for case in [
    {"question": "How do I retry a task?", "expected_sources": ["Retrying tasks"], "expected_facts": ["self.retry()"],
     "category": "lexical"},
    {"question": "How long does a retry wait?", "expected_sources": ["Retry countdown"], "category": "lexical"},
    {"question": "How many retries at most?", "expected_sources": ["Retry limits"], "category": "lexical"},
    {"question": "What is the best sourdough recipe?", "refusal_kind": "unrelated", "category": "unrelated"},
    {"question": "How do I retry a Kafka consumer?", "refusal_kind": "near_miss", "category": "near-miss"},
])


def _guru() -> tuple[Guru, object]:
    guru: Guru = GuruFactory(slug="celery", name="Celery Guru")
    maintainer = UserFactory(username="ana")
    guru.maintainers.add(maintainer)
    return guru, maintainer


def _paste(page: Page, text: str, name: str = "") -> None:
    """Paste JSONL into the Import card (the set's name kept from the last try unless given) and send it."""
    importer = page.locator("#import")
    if name:
        importer.get_by_label("Set", exact=True).fill(name)
    importer.get_by_label("…or paste the JSONL").fill(text)
    importer.get_by_role("button", name="Import").click()


def test_import_a_set_open_a_run_and_apply_a_threshold_from_the_explorer(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    guru, maintainer = _guru()
    log_in_as(page, asgi_live_server, maintainer)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/")
    page.get_by_role("navigation", name="Guru sections").get_by_role("link", name="Evaluation").click()
    expect(page.locator(".empty")).to_contain_text("No evaluation set yet")

    _paste(page, '{"question": "fine"}\n{"question": 42}\n', name="smoke")
    expect(page.locator("#import .errorlist")).to_contain_text("Line 2: 'question' must be text")
    _paste(page, SET)
    expect(page.locator(".message.success")).to_have_text("Imported into “smoke”: 5 questions added.")
    expect(page.get_by_role("heading", name="Set “smoke”")).to_be_visible()
    rows = page.locator("table.ev-items tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.nth(0)).to_contain_text("Retrying tasks")
    expect(rows.nth(4)).to_contain_text("near miss")
    screenshot("set")

    eval_set = EvalSet.objects.get(guru=guru, name="smoke")
    finished_run(guru, GOOD, eval_set=eval_set)
    run = finished_run(guru, WORSE, eval_set=eval_set)
    page.get_by_role("navigation", name="Evaluation").get_by_role("link", name="Runs side by side").click()
    recall = page.locator("table.ev-compare tr", has_text="recall@5")
    expect(recall.locator("td.regression")).to_contain_text("▼ \u22120.333 regression")
    screenshot("runs")
    page.locator("table.ev-compare thead").get_by_role("link").first.click()
    expect(page.get_by_role("heading", name=re.compile("Run of “smoke”"))).to_be_visible()
    explorer = page.locator("#explorer")
    expect(explorer.locator("svg.sweep-chart")).to_be_visible()
    expect(explorer.locator("tr.current")).to_contain_text("0.50")
    expect(page.locator("table.ev-results tbody tr")).to_have_count(5)
    screenshot("run")
    page.get_by_role("link", name="Wrong only").click()
    expect(page.locator("table.ev-results tbody tr")).to_have_count(1)
    expect(page.locator("table.ev-results tbody tr")).to_contain_text("✗ wrong")

    explorer.get_by_label("Apply a trust threshold").select_option("0.35")
    explorer.get_by_role("button", name="Apply threshold").click()
    expect(page.locator(".message.success")).to_contain_text(
        "Trust threshold of Celery Guru changed from 0.50 (the instance default) to 0.35.")
    expect(page.locator("#explorer tr.current")).to_contain_text("0.35")
    assert Guru.objects.get(pk=guru.pk).trust_score_threshold == 0.35
    assert EvalRun.objects.filter(guru=guru).count() == 2 and run.pk == EvalRun.objects.latest("pk").pk
    screenshot("applied")
    page.locator("#explorer .ev-chart").screenshot(path=str(ARTIFACTS / "evaluation-threshold-explorer.png"))
    # The one console error is the invalid file's page, answered 400 on purpose.
    assert page_errors == ["console: Failed to load resource: the server responded with a status of 400 (Bad Request) "
                           f"({asgi_live_server}/dashboard/g/celery/evaluation/import/)"]


def test_a_running_evaluation_is_followed_and_its_figures_appear_when_it_ends(
    page: Page, asgi_live_server: str, page_errors: list[str], screenshot: Callable[..., Path],
) -> None:
    cache.clear()
    guru, maintainer = _guru()
    run = EvalRun.objects.create(guru=guru, set_name="smoke", trust_threshold=0.5, rerank_threshold=0.2,
                                 done=1, total=5)
    log_in_as(page, asgi_live_server, maintainer)
    page.goto(f"{asgi_live_server}/dashboard/g/celery/evaluation/runs/")
    state = page.locator(f'table.ev-compare [data-run-id="{run.pk}"]')
    expect(state).to_have_text("answering 1/5")
    EvalRun.objects.filter(pk=run.pk).update(done=4)
    expect(state).to_have_text("answering 4/5")
    screenshot("running")

    done = finished_run(guru, GOOD)
    EvalRun.objects.filter(pk=run.pk).update(state=RunState.DONE, done=5, finished_at=timezone.now(),
                                             summary=done.summary, results=done.results)
    done.delete()
    expect(page.locator("table.ev-compare .ev-figures tr").first).to_contain_text("1.000")
    expect(page.locator("[data-state=running]")).to_have_count(0)
    assert page_errors == []
