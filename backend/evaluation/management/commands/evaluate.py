"""Measure a guru's answers on an evaluation set with the real pipeline; exit non-zero under a threshold."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backend.adapters import registry
from backend.core.errors import AppError
from backend.evaluation.runner import K, run_cases, run_create
from backend.evaluation.services import cases_for
from backend.gurus.models import Guru
from backend.pipeline.evaluation_report import GATES, gate, report_text


class Command(BaseCommand):
    help = ("Answer every question of an evaluation set with the guru's real pipeline and report recall@k, MRR, "
            "hit@k before the trust step, answer and refusal rates, calibration, citation validity, fact coverage, "
            "latency, tokens and cost. Exits with status 1 when a --min-… threshold is missed.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("guru", help="The guru's slug.")
        parser.add_argument("--set", default="", help="A JSONL file, or the name of one of the guru's sets "
                                                      "(default: its only set).")
        parser.add_argument("--json", action="store_true", help="Print the figures and every question as JSON.")
        parser.add_argument("--k", type=int, default=K, help=f"References counted by recall, MRR, hit (default {K}).")
        parser.add_argument("--judge", action="store_true",
                            help="Also ask the configured LLM how well each answer is supported (costs tokens).")
        for name, label in GATES.items():
            parser.add_argument(f"--min-{name.replace('_', '-')}", type=float, dest=f"min_{name}",
                                help=f"Fail when {label} is below this (0–1).")

    def handle(self, *args: Any, **options: Any) -> None:
        guru = Guru.objects.filter(slug=options["guru"]).first()
        if guru is None:
            raise CommandError(f"No guru with slug {options['guru']!r}.")
        if not 1 <= options["k"] <= 20:
            raise CommandError("--k takes 1 to 20.")
        if options["judge"] and not registry.llm_enabled():
            raise CommandError("--judge asks a language model, and none is configured (an API key in the "
                               "environment, or the Settings page); run without --judge, or configure one.")
        try:
            name, cases, eval_set = cases_for(guru, options["set"])
        except AppError as exc:
            raise CommandError(exc.detail) from exc
        run = run_create(guru, set_name=name, total=len(cases), eval_set=eval_set)
        run = run_cases(run, cases, k=options["k"], judge=options["judge"], progress=self._progress)
        minimums = {n: options[f"min_{n}"] for n in GATES if options.get(f"min_{n}") is not None}
        missed = gate(run.summary, minimums)
        if options["json"]:
            self.stdout.write(json.dumps({"run_id": run.pk, "summary": run.summary, "missed": missed,
                                          "results": run.results}, indent=2))
        else:
            self.stdout.write("\n".join([f"Evaluation run {run.pk} of {guru.slug} on {name} "
                                         f"(trust threshold {run.trust_threshold}):", *report_text(run.summary)]))
        failed = [r for r in run.results if r.get("error")]
        if failed:
            self.stderr.write(f"First error ({failed[0]['question'][:80]!r}): {failed[0]['error']}")
        if missed:
            raise CommandError("Missed: " + "; ".join(missed), returncode=1)

    def _progress(self, done: int, total: int) -> None:
        # A terminal redraws one line; a pipe or a log gets a line per tenth, not one line of redraws.
        if sys.stderr.isatty():
            sys.stderr.write(f"\ranswered {done}/{total}" + ("\n" if done == total else ""))
        elif done == total or done % max(1, total // 10) == 0:
            sys.stderr.write(f"answered {done}/{total}\n")
        sys.stderr.flush()
