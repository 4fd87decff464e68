"""The Evaluation tab's runs: side by side with regressions marked, a run's page, the threshold explorer, and a
run of the real pipeline started from the dashboard."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.evaluation.models import EvalRun, EvalSet, RunState
from backend.evaluation.sets import parse_jsonl, set_import
from backend.gurus.models import Guru
from tests.dashboard.evaluation_support import GOOD, WORSE, finished_run, flashes, score, url
from tests.integration.answering.answer_support import make_indexed_guru

pytestmark = pytest.mark.django_db


# ---- runs side by side ----------------------------------------------------------------------------


def _cells(response: Any, label: str) -> list[Any]:
    return next(row.cells for row in response.context["rows"] if row.label == label)


def test_runs_side_by_side_mark_a_drop_of_more_than_002_as_a_regression(client: Client, guru: Guru,
                                                                       smoke: EvalSet) -> None:
    first = finished_run(guru, GOOD, eval_set=smoke)
    slightly = finished_run(guru, GOOD, eval_set=smoke)
    slightly.summary["answer_rate"] = 0.985  # within 0.02: a change, not a regression
    slightly.save()
    worse = finished_run(guru, WORSE, eval_set=smoke, trust_threshold=0.6)
    other = finished_run(guru, WORSE, set_name="other")  # another set: compared with nothing
    running = EvalRun.objects.create(guru=guru, eval_set=smoke, set_name="smoke", trust_threshold=0.5,
                                     rerank_threshold=0.2, done=12, total=60)
    response = client.get(url("evaluation-runs", guru))
    html = response.content.decode()
    assert [r.pk for r in response.context["runs"]] == [running.pk, other.pk, worse.pk, slightly.pk, first.pk]
    recall = _cells(response, "recall@5")
    assert [c.value for c in recall] == ["—", "0.667", "0.667", "1.000", "1.000"]
    # worse against slightly (the previous run of its set), slightly against first; other and first: nothing before
    assert [c.delta for c in recall] == ["", "", "▼ \u22120.333", "= no change", ""]
    assert recall[2].regression and not recall[3].regression
    answer = _cells(response, "answer rate")
    assert answer[3].delta == "▼ \u22120.015" and not answer[3].regression
    assert answer[2].delta == "▼ \u22120.318" and answer[2].regression
    assert html.count('<td class="num regression">') >= 5
    assert "▼ \u22120.333 <strong>regression</strong>" in html
    assert "answering 12/60" in html and f'data-run-id="{running.pk}" data-state="running"' in html
    assert "0.60 / 0.20" in html and "ExtractiveAnswerer" in html
    latency = _cells(response, "p50 total latency")
    assert latency[2].value == "800 ms" and latency[2].delta == "= no change"


def test_a_run_made_while_the_guru_was_still_building_is_marked(client: Client, guru: Guru, smoke: EvalSet) -> None:
    settled = finished_run(guru, GOOD, eval_set=smoke)
    building = finished_run(guru, GOOD, eval_set=smoke)
    building.summary["unsettled"] = ["2 sources still being summarised"]
    building.save()
    runs = client.get(url("evaluation-runs", guru)).content.decode()
    assert runs.count(">not settled</span>") == 1
    assert 'title="Measured while the guru was still building: 2 sources still being summarised"' in runs
    page = client.get(url("evaluation-run", guru, run_id=building.pk)).content.decode()
    assert "measured while the guru was still building (2 sources still being summarised)" in page
    assert "still building" not in client.get(url("evaluation-run", guru, run_id=settled.pk)).content.decode()


def test_runs_page_reads_a_fixed_number_of_queries(client: Client, guru: Guru, smoke: EvalSet,
                                                  django_assert_max_num_queries: Any) -> None:
    for _ in range(12):
        finished_run(guru, GOOD, eval_set=smoke)
    # session, user, guru, the runs
    with django_assert_max_num_queries(5):
        assert client.get(url("evaluation-runs", guru)).status_code == 200
    with django_assert_max_num_queries(6):
        assert client.get(url("evaluation", guru)).status_code == 200


# ---- one run and the threshold explorer -----------------------------------------------------------


def test_a_run_shows_its_figures_tables_and_every_question(client: Client, guru: Guru, smoke: EvalSet) -> None:
    finished_run(guru, GOOD, eval_set=smoke)
    run = finished_run(guru, WORSE, eval_set=smoke)
    response = client.get(url("evaluation-run", guru, run_id=run.pk))
    html = response.content.decode()
    assert response.status_code == 200
    assert [r.question for r in response.context["questions"]] == [s["question"] for s in WORSE]
    wrong = [r for r in response.context["questions"] if not r.right]
    assert [r.question for r in wrong] == ["How many retries at most?"] and wrong[0].refused
    assert "✗ wrong" in html and html.count("✓ right") == 4 and "Near miss" in html
    assert [(c.bucket, c.n) for c in response.context["calibration"]][:1] == [("0.0–0.2", 1)]
    assert {c.name: c.right for c in response.context["categories"]} == {
        "lexical": "0.67", "near-miss": "1.00", "unrelated": "1.00"}
    assert "▼ \u22120.333 <strong>regression</strong>" in html  # against the earlier run of the set
    only = client.get(url("evaluation-run", guru, run_id=run.pk), {"wrong": "1"})
    assert [r.question for r in only.context["questions"]] == ["How many retries at most?"]


def test_the_explorer_marks_the_current_threshold_and_draws_the_sweep(client: Client, guru: Guru) -> None:
    run = finished_run(guru, GOOD)
    response = client.get(url("evaluation-run", guru, run_id=run.pk))
    html = response.content.decode()
    points = response.context["points"]
    assert len(points) == 21 and [p.threshold for p in points if p.current] == [0.5]
    at = {p.threshold: p for p in points}
    assert at[0.5].answer_rate == 1.0 and at[0.75].answer_rate == 0.6667 and at[0.95].answer_rate == 0.0
    # the near miss (trust 0.4) is refused from a threshold of 0.45 up
    assert at[0.4].near_miss_refusal == 0.0 and at[0.45].near_miss_refusal == 1.0
    assert '<tr class="current" aria-current="true"><td>0.50 <span class="badge ok">current</span>' in html
    assert html.count('<polyline class="series') == 3 and 'class="current-label"' in html
    assert "<title id=\"sweep-title\">" in html and 'value="0.50" selected' in html


def test_apply_a_threshold_from_the_sweep(client: Client, guru: Guru) -> None:
    run = finished_run(guru, GOOD)
    response = client.post(url("evaluation-threshold-apply", guru, run_id=run.pk), {"threshold": "0.35"})
    assert response.status_code == 302 and response["Location"].endswith("#explorer")
    assert Guru.objects.get(pk=guru.pk).trust_score_threshold == 0.35
    assert flashes(response) == ["Trust threshold of Celery Guru changed from 0.50 (the instance default) to 0.35. "
                                 "Answers use it from now on; run the set again to measure it."]
    again = client.post(url("evaluation-threshold-apply", guru, run_id=run.pk), {"threshold": "0.60"})
    assert flashes(again)[-1].startswith("Trust threshold of Celery Guru changed from 0.35 to 0.60.")
    page = client.get(url("evaluation-run", guru, run_id=run.pk))
    assert [p.threshold for p in page.context["points"] if p.current] == [0.6]


@pytest.mark.parametrize("value", ["0.37", "1.5", "-1", "", "abc"])
def test_only_a_threshold_of_the_sweep_can_be_applied(client: Client, guru: Guru, value: str) -> None:
    run = finished_run(guru, GOOD)
    response = client.post(url("evaluation-threshold-apply", guru, run_id=run.pk), {"threshold": value})
    assert response.status_code == 400 and Guru.objects.get(pk=guru.pk).trust_score_threshold is None


def test_a_failed_run_shows_its_error_and_what_it_answered(client: Client, guru: Guru) -> None:
    run = EvalRun.objects.create(guru=guru, set_name="smoke", state=RunState.FAILED, error="vector store down",
                                 trust_threshold=0.5, rerank_threshold=0.2, done=1, total=3,
                                 results=[score("How do I retry a task?", trust=0.9)])
    html = client.get(url("evaluation-run", guru, run_id=run.pk)).content.decode()
    assert "vector store down" in html and "How do I retry a task?" in html and "Threshold explorer" not in html
    runs = client.get(url("evaluation-runs", guru))
    assert all(c.value == "—" for c in _cells(runs, "recall@5"))


def test_a_run_whose_questions_failed_says_its_figures_measure_the_failure(client: Client, guru: Guru) -> None:
    failed = {**score("How do I retry a task?", trust=0.0), "error": "vector_store_unavailable: index down"}
    run = finished_run(guru, [failed, score("How many retries at most?", trust=0.9)])
    html = client.get(url("evaluation-run", guru, run_id=run.pk)).content.decode()
    assert 'id="run-errors"' in html and "1 failed with an error" in html and "index down" in html
    fine = finished_run(guru, [score("How many retries at most?", trust=0.9)])
    assert 'id="run-errors"' not in client.get(url("evaluation-run", guru, run_id=fine.pk)).content.decode()


def test_stored_text_is_escaped(client: Client, guru: Guru) -> None:
    hostile = "<script>alert(1)</script>"
    eval_set = set_import(guru, hostile,
                          parse_jsonl(json.dumps({"question": hostile, "category": "<b>x</b>"}))).eval_set
    finished_run(guru, [score(hostile, trust=0.9, references=(hostile,))], eval_set=eval_set)
    for page in (url("evaluation", guru), url("evaluation-set", guru, set_id=eval_set.pk),
                 url("evaluation-runs", guru), url("evaluation-run", guru, run_id=EvalRun.objects.get().pk)):
        assert "<script>alert" not in client.get(page).content.decode(), page
    export = client.get(url("evaluation-set-export", guru, set_id=eval_set.pk))
    assert export["Content-Disposition"] == 'attachment; filename="celery-script-alert-1-script.jsonl"'


# ---- a real run -----------------------------------------------------------------------------------

REAL_SET = "".join(json.dumps(case) + "\n" for case in [
    {"question": "How do I retry a task?", "expected_sources": ["Manual"], "expected_facts": ["self.retry()"]},
    {"question": "What does the countdown argument set?", "expected_sources": ["Manual"],
     "expected_facts": ["delay"]},
    {"question": "What is the best recipe for sourdough bread?", "refusal_kind": "unrelated"},
])


def test_run_evaluation_answers_a_set_with_the_real_pipeline(client: Client, maintainer: Any,
                                                             django_capture_on_commit_callbacks:
                                                             DjangoCaptureOnCommitCallbacks) -> None:
    docs = make_indexed_guru(django_capture_on_commit_callbacks)
    docs.maintainers.add(maintainer)
    client.post(url("evaluation-import", docs), {"import-name": "smoke", "import-mode": "append",
                                                 "import-text": REAL_SET})
    eval_set = EvalSet.objects.get(guru=docs)
    with django_capture_on_commit_callbacks(execute=True):  # the worker's task, run eagerly
        response = client.post(url("evaluation-run-start", docs, set_id=eval_set.pk))
    run = EvalRun.objects.get(guru=docs)
    assert run.state == RunState.DONE, run.error
    assert (run.done, run.total, len(run.results)) == (3, 3, 3)
    assert run.summary["recall"] == 1.0 and run.summary["unrelated_refusal"] == 1.0
    page = client.get(response["Location"])
    html = page.content.decode()
    assert [row.right for row in page.context["questions"]] == [True, True, True]
    assert "answering" not in html and "Threshold explorer" in html and len(page.context["points"]) == 21
    runs = client.get(url("evaluation-runs", docs))
    assert [c.value for c in _cells(runs, "recall@5")] == ["1.000"]
