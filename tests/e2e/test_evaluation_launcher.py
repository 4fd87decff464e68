"""Evaluation through `./openguru start`: `manage evaluate` beside the running product gates like CI would, a
run queued from the dashboard's service is answered by the worker, and the runs outlive a restart."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.product import Product, eventually, launch, manage, manage_run, stop
from tests.support.summaries import guru_with_two_manuals

pytestmark = pytest.mark.slow

SLUG = "queue-guru"
SET = [
    {"question": "Which option configures scheduler feature 2?", "expected_sources": ["scheduler.pdf"],
     "expected_facts": ["scheduler_2"], "category": "lexical"},
    {"question": "Which option configures workers feature 1?", "expected_sources": ["workers.pdf"],
     "expected_facts": ["workers_1"], "category": "lexical"},
    {"question": "What is a good recipe for banana bread?", "refusal_kind": "unrelated", "category": "unrelated"},
]
RUNS = ("import json; from backend.evaluation.models import EvalRun as R; print(json.dumps(list(R.objects.filter("
        "guru__slug='queue-guru').order_by('pk').values_list('state', 'done', 'total'))))")
QUEUE = ("from backend.evaluation.sets import parse_jsonl, set_import; from backend.evaluation.runner import run_start;"
         "from backend.gurus.models import Guru; g = Guru.objects.get(slug='queue-guru');"
         "run_start(g, eval_set=set_import(g, 'smoke', parse_jsonl(open({path!r}).read())).eval_set)")


def _evaluate(product: Product, *args: str) -> subprocess.CompletedProcess[str]:
    return manage_run(product, "evaluate", SLUG, *args)


def _runs(product: Product) -> list[list[object]]:
    return list(json.loads(manage(product, "shell", "-c", RUNS).strip().splitlines()[-1]))


def test_evaluate_gates_a_worker_runs_a_queued_set_and_runs_survive_a_restart(tmp_path: Path) -> None:
    data_dir, set_file = tmp_path / "var", tmp_path / "set.jsonl"
    set_file.write_text("".join(json.dumps(row) + "\n" for row in SET))
    product = launch(data_dir, env={"OPENGURU_WEB_RATE_LIMIT": "0"})
    try:
        guru_with_two_manuals(product, tmp_path, SLUG)
        passed = _evaluate(product, "--set", str(set_file), "--json", "--min-recall", "0.9",
                           "--min-refusal-rate", "0.9")
        assert passed.returncode == 0, passed.stderr
        assert "answered 3/3\n" in passed.stderr and "\r" not in passed.stderr, "a pipe gets lines, not redraws"
        figures = json.loads(passed.stdout)["summary"]
        assert figures["recall"] == 1.0 and figures["unrelated_refusal"] == 1.0 and figures["fact_coverage"] == 1.0
        manage(product, "shell", "-c", QUEUE.format(path=str(set_file)))
        eventually(lambda: _runs(product)[-1] == ["done", 3, 3], "the worker's run of the queued set", timeout=120)
    finally:
        assert stop(product) == 0
    product = launch(data_dir, env={"OPENGURU_WEB_RATE_LIMIT": "0"})
    try:
        assert _runs(product) == [["done", 3, 3], ["done", 3, 3]], "both runs outlive the processes"
        missed = _evaluate(product, "--set", "smoke", "--min-near-miss-refusal", "0.5")
        assert missed.returncode == 1 and "near misses: not measurable" in missed.stderr
        assert "recall@5 of the final references: 1.000" in missed.stdout
    finally:
        assert stop(product) == 0
