"""Helpers of the Evaluation tab's tests: per-question scores as the scorer stores them, and finished runs."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from backend.evaluation.models import EvalRun, EvalSet, RunState
from backend.gurus.models import Guru
from backend.pipeline.evaluation import CaseScore
from backend.pipeline.evaluation_report import summarise, sweep


def score(question: str, *, trust: float, rank: int | None = 1, refusal_kind: str = "", category: str = "lexical",
          facts: int = 1, facts_total: int = 1, references: tuple[str, ...] = ("Retrying tasks",),
          total_ms: int = 800) -> dict[str, Any]:
    """One stored question result: answered when its trust reaches 0.5 (the default threshold), else refused."""
    refused = trust < 0.5
    in_scope = not refusal_kind
    found = rank is not None and not refused and in_scope
    return CaseScore(
        question=question, category=category, refusal_kind=refusal_kind, refused=refused, trust=trust,
        hit_before=(rank is not None) if in_scope else None, rank=rank if found else None,
        recall=(1.0 if found else 0.0) if in_scope else None, facts=facts if found else 0,
        facts_total=facts_total if in_scope else 0, citations_valid=1 if not refused else 0,
        citations_total=1 if not refused else 0, grounded=in_scope and rank is not None,
        timings={"retrieve_ms": total_ms // 4, "total_ms": total_ms}, tokens=0 if refused else 120,
        cost_usd=0.0, judge=None, references=[] if refused else list(references),
        answer="" if refused else "Call self.retry() [1].").as_dict()


GOOD = [
    score("How do I retry a task?", trust=0.9),
    score("How long does a retry wait?", trust=0.8, references=("Retry countdown",)),
    score("How many retries at most?", trust=0.7, rank=2, references=("Retrying tasks", "Retry limits")),
    score("What is the best sourdough recipe?", trust=0.1, refusal_kind="unrelated", category="unrelated"),
    score("How do I retry a Kafka consumer?", trust=0.4, refusal_kind="near_miss", category="near-miss"),
]
WORSE = [*GOOD[:2], score("How many retries at most?", trust=0.45, rank=None), *GOOD[3:]]


def finished_run(guru: Guru, scores: list[dict[str, Any]], *, eval_set: EvalSet | None = None,
                 set_name: str = "smoke", trust_threshold: float = 0.5) -> EvalRun:
    """A DONE run with the figures summarise/sweep compute from these scores (as the runner stores them)."""
    summary = summarise(scores, k=5)
    summary.update(sweep=sweep(scores), judge=False)
    return EvalRun.objects.create(
        guru=guru, eval_set=eval_set, set_name=eval_set.name if eval_set else set_name, state=RunState.DONE,
        finished_at=timezone.now(), trust_threshold=trust_threshold, rerank_threshold=0.2,
        answer_model="ExtractiveAnswerer", sources_version="v1", done=len(scores), total=len(scores),
        summary=summary, results=scores)


CASES = [
    {"question": "How do I retry a task?", "expected_sources": ["Retrying tasks"], "expected_facts": ["self.retry()"],
     "refusal_kind": "", "category": "lexical", "history": []},
    {"question": "And how long does it wait?", "expected_sources": ["Retry countdown", "docs/retry.md"],
     "expected_facts": [], "refusal_kind": "", "category": "follow-up", "history": ["How do I retry a task?"]},
    {"question": "Quelle est la meilleure recette de pain ?", "expected_sources": [], "expected_facts": [],
     "refusal_kind": "unrelated", "category": "unrelated", "history": []},
]
JSONL = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in CASES)


def url(name: str, guru: Guru, **kwargs: Any) -> str:
    return reverse(f"dashboard:{name}", kwargs={"slug": guru.slug, **kwargs})


def flashes(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]
