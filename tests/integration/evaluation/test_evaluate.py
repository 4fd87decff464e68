"""`evaluate` runs the real pipeline over a set and reports, stores and gates the figures."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Binge, Question
from backend.evaluation.models import EvalRun, RunState
from backend.evaluation.runner import run_start
from backend.evaluation.sets import parse_jsonl, set_export, set_import
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SummaryState
from tests.support.git_servers import free_port

pytestmark = [pytest.mark.django_db]

SET = [
    {"question": "How do I reject uploads that are too large?", "expected_sources": ["Uploading files"],
     "expected_facts": ["MAX_CONTENT_LENGTH"], "category": "lexical"},
    {"question": "How should logging be configured in production?", "expected_sources": ["Logging"],
     "expected_facts": ["dictConfig"], "category": "lexical"},
    {"question": "Where does render_template look for template files?", "expected_sources": ["Templates"],
     "expected_facts": ["templates folder"], "category": "lexical"},
    {"question": "What is the best recipe for a sourdough bread?", "refusal_kind": "unrelated",
     "category": "unrelated"},
    {"question": "How do I change the template folder?", "history": ["How should logging be configured?"],
     "expected_sources": ["Templates"], "category": "follow-up"},
]


def _set_file(tmp_path: Path) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in SET))
    return path


def test_evaluate_reports_the_real_pipelines_figures_and_stores_the_run(docs: Guru, tmp_path: Path) -> None:
    out = StringIO()
    call_command("evaluate", docs.slug, "--set", str(_set_file(tmp_path)), "--json", stdout=out, stderr=StringIO())
    report = json.loads(out.getvalue())
    summary = report["summary"]
    assert summary["questions"] == 5 and summary["in_scope"] == 4 and summary["to_refuse"] == 1
    assert summary["recall"] == 1.0 and summary["hit_before"] == 1.0 and summary["mrr"] == 1.0
    assert summary["answer_rate"] == 1.0 and summary["unrelated_refusal"] == 1.0
    assert summary["near_miss_refusal"] is None  # the set has no near miss: not measurable, not zero
    assert summary["fact_coverage"] == 1.0
    assert summary["citation_validity"] is not None and summary["citation_validity"] > 0.5
    assert {"retrieve", "grade", "total"} <= set(summary["latency"])
    assert [p["threshold"] for p in summary["sweep"]][:3] == [0.0, 0.05, 0.1]
    run = EvalRun.objects.get(pk=report["run_id"])
    assert run.state == RunState.DONE and run.done == 5 and len(run.results) == 5
    # The trial conversations are gone: evaluation leaves no questions behind in the guru's analytics.
    assert not Question.objects.filter(guru=docs).exists() and not Binge.objects.filter(guru=docs).exists()


def test_a_run_made_while_the_guru_is_still_building_says_so(docs: Guru, tmp_path: Path) -> None:
    settled = StringIO()
    call_command("evaluate", docs.slug, "--set", str(_set_file(tmp_path)), stdout=settled, stderr=StringIO())
    assert "NOT SETTLED" not in settled.getvalue()
    assert EvalRun.objects.latest("pk").summary["unsettled"] == []
    # The worker is still writing a source's summaries (as right after add_source returns): answers may change.
    DataSource.objects.filter(guru=docs).update(summary_state=SummaryState.RUNNING)
    out = StringIO()
    call_command("evaluate", docs.slug, "--set", str(_set_file(tmp_path)), stdout=out, stderr=StringIO())
    sources = DataSource.objects.filter(guru=docs).count()
    building = f"{sources} source{'s' if sources != 1 else ''} still being summarised"
    assert f"NOT SETTLED: measured while the guru was still building ({building})" in out.getvalue()
    assert EvalRun.objects.latest("pk").summary["unsettled"] == [building]


def test_a_missed_threshold_fails_the_command_for_ci(docs: Guru, tmp_path: Path) -> None:
    out = StringIO()
    with pytest.raises(CommandError) as failure:
        call_command("evaluate", docs.slug, "--set", str(_set_file(tmp_path)), "--min-recall", "0.5",
                     "--min-near-miss-refusal", "0.9", stdout=out, stderr=StringIO())
    assert failure.value.returncode == 1
    assert "near misses: not measurable" in str(failure.value) and "recall" not in str(failure.value).split(";")[0]
    assert "recall@5 of the final references: 1.000" in out.getvalue()


def test_judge_without_a_language_model_says_so_before_answering(docs: Guru, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--judge asks a language model, and none is configured"):
        call_command("evaluate", docs.slug, "--set", str(_set_file(tmp_path)), "--judge", stdout=StringIO(),
                     stderr=StringIO())
    assert not EvalRun.objects.exists()


def test_questions_that_fail_fail_the_command_instead_of_scoring_as_refusals(docs: Guru, tmp_path: Path,
                                                                              settings: SettingsWrapper) -> None:
    """With the search index unreachable every question errors: the run says so and exits 1, with no gate
    asked for, rather than reporting a guru that refuses everything."""
    settings.OPENGURU_VECTOR_STORE = {**settings.OPENGURU_VECTOR_STORE, "URI": f"http://127.0.0.1:{free_port()}",
                                      "TIMEOUT": "2"}
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as failure:
        call_command("evaluate", docs.slug, "--set", str(_set_file(tmp_path)), stdout=out, stderr=err)
    assert failure.value.returncode == 1
    assert "5 of 5 questions failed with an error" in str(failure.value)
    assert "FAILED with an error: 5" in out.getvalue()
    assert "vector_store_unavailable" in err.getvalue()


def test_a_set_runs_in_the_worker_and_round_trips_as_jsonl(docs: Guru, tmp_path: Path,
                                                           django_capture_on_commit_callbacks:
                                                           DjangoCaptureOnCommitCallbacks) -> None:
    text = _set_file(tmp_path).read_text()
    eval_set = set_import(docs, "smoke", parse_jsonl(text)).eval_set
    assert parse_jsonl(set_export(eval_set)) == parse_jsonl(text)
    with django_capture_on_commit_callbacks(execute=True):
        run = run_start(docs, eval_set=eval_set)
    run.refresh_from_db()
    assert run.state == RunState.DONE and run.summary["recall"] == 1.0
