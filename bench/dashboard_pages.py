"""Dashboard page server time for a guru with 10,000 questions against the same guru with 100 (issue #8).

Two throwaway SQLite databases (migrated once, then copied) hold the same shape: one superuser, one
guru `bench` with 50 sources and N questions spread over 90 days (mixed channels, ~20 % refused, answers
citing ~20 of the sources by id, feedback on ~15 %, trust scores, ~30 % in 2–4 turn sessions), three
API keys and two widget ids. Baseline = 100 questions, measured = 10,000 (`--questions`). Each request
goes through Django's test Client in-process (no network) as the logged-in superuser; the two databases
alternate request by request, the connection being reopened before each one (as CONN_MAX_AGE=0 does in
production), so both sides see the same machine noise. Per page: one warm-up, then the median of N
requests (N=15, `--quick` 5); the SQL query count of one request at 10k is captured too. The unanswered
page's first visit after the vectors are dropped (as after an embedder change) embeds 16 refusals itself
and queues the rest for the worker: that cold visit is timed once and reported apart, then the backfill
runs (in-process, untimed) before the warm timings. Models are the test ones (hashing embedder, in-memory
vector store, offline LLM), so the figure is the dashboard, not model loading.
Target: every page under 300 ms server time at 10k; ratio = worst page at 10k / the same page at 100.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import logging
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_MS = 300.0
SLUG = "bench"
SOURCES = 50
CITED_SOURCES = 20
DAYS = 90
SEARCH_WORD = "retry"
TOPIC_VERBS = ["retry", "schedule", "route", "cancel", "monitor", "configure", "chain", "serialize", "limit", "debug"]
TOPIC_NOUNS = ["task", "worker", "queue", "broker", "result backend", "beat schedule", "chord", "message",
               "time limit", "prefork pool"]
OFF_TOPICS = ["the capital of Peru", "a good pasta recipe", "the weather tomorrow", "the best football team",
              "how tall Everest is", "a cheap flight to Rome", "who won the 1998 world cup", "how to knit a scarf"]
CHANNELS = ["WEB"] * 45 + ["API"] * 20 + ["WIDGET"] * 20 + ["SLACK"] * 10 + ["DISCORD"] * 5


def _configure(data_dir: Path) -> None:
    """The test settings on a throwaway data dir and SQLite file; must run before Django is imported."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "backend.config.settings.test"
    os.environ["OPENGURU_DATA_DIR"] = str(data_dir)
    os.environ["DATABASE_URL"] = f"sqlite:///{data_dir / 'base.sqlite3'}"
    os.environ.pop("REDIS_URL", None)  # the database cache, as in the embedded default
    import django

    django.setup()
    logging.getLogger("kombu").setLevel(logging.ERROR)  # the eager broker's "no hostname" notice
    from backend.config.celery_app import app

    # Queued work (the unanswered page's backfill) is published to memory and left there: the page's own
    # time is measured, and Side.backfill() plays the worker.
    app.conf.update(task_always_eager=False, broker_url="memory://")


@contextmanager
def _database(path: Path) -> Iterator[None]:
    """Point the default connection at one of the two database files (reopened on the next query)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = str(path)
    yield


@contextmanager
def _explicit_created_at() -> Iterator[None]:
    """Let bulk_create keep the created_at values we set (auto_now_add would overwrite them)."""
    from backend.answering.models import Question

    field = Question._meta.get_field("created_at")
    field.auto_now_add = False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        field.auto_now_add = True  # type: ignore[attr-defined]


def _sources(guru: Any, rng: random.Random) -> list[Any]:
    from django.utils import timezone

    from backend.sources.models import DataSource, SourceKind, SourceStatus

    kinds = [SourceKind.WEBSITE] * 6 + [SourceKind.YOUTUBE, SourceKind.PDF, SourceKind.GITHUB_REPO]
    rows = []
    for i in range(SOURCES):
        kind = kinds[i % len(kinds)]
        status = SourceStatus.INDEXED
        if i in (3, 17):
            status = SourceStatus.PROCESSING
        elif i == 29:
            status = SourceStatus.FAILED
        elif i == 41:
            status = SourceStatus.PENDING
        total = 40 if status == SourceStatus.PROCESSING else 0
        row = DataSource(
            guru=guru, kind=kind, title=f"{rng.choice(TOPIC_NOUNS).title()} guide part {i}", status=status,
            chunk_count=0 if status != SourceStatus.INDEXED else rng.randint(5, 400),
            progress_done=total // 2, progress_total=total, generation=1,
            indexed_generation=1 if status == SourceStatus.INDEXED else None,
            last_indexed_at=timezone.now() - timedelta(days=rng.randint(0, DAYS)) if status == SourceStatus.INDEXED
            else None,
            indexing_started_at=timezone.now() if status == SourceStatus.PROCESSING else None,
            error_message="Fetch failed: HTTP 404" if status == SourceStatus.FAILED else "",
        )
        if kind == SourceKind.PDF:
            row.file, row.content_hash = f"sources/{guru.pk}/manual-{i}.pdf", f"{i:064x}"
        elif kind == SourceKind.YOUTUBE:
            row.url = f"https://www.youtube.com/watch?v=video{i:05d}"
        elif kind == SourceKind.GITHUB_REPO:
            row.url, row.options = f"https://github.com/example/repo-{i}", {"branch": "main", "globs": ["docs/**"]}
        else:
            row.url = f"https://docs.example.com/page-{i}"
        rows.append(row)
    return DataSource.objects.bulk_create(rows)


def _question(guru: Any, i: int, rng: random.Random, sources: list[Any], now: Any, **fields: Any) -> Any:
    from backend.answering.models import Question

    refused = rng.random() < 0.2
    if refused:
        text = f"What about {rng.choice(OFF_TOPICS)}? ({i})"
        content, references, trust = "This guru's sources do not cover that.", [], 0.0
    else:
        text = f"How do I {rng.choice(TOPIC_VERBS)} a {rng.choice(TOPIC_NOUNS)} when {rng.choice(TOPIC_NOUNS)}s fail?"
        cited = rng.sample(sources[:CITED_SOURCES], rng.randint(1, 4))
        references = [{"n": n, "source_id": s.pk, "title": s.title, "link": s.url, "kind": s.kind,
                       "score": round(rng.uniform(0.3, 0.99), 3), "locator": f"section {n}"}
                      for n, s in enumerate(cited, 1)]
        content = " ".join(f"Step {n}: use the option described in [{n}]." for n in range(1, len(cited) + 1)) * 4
        trust = round(rng.uniform(0.2, 1.0), 3)
    roll = rng.random()
    feedback = 1 if roll < 0.10 else -1 if roll < 0.15 else None
    return Question(
        guru=guru, user_question=text.lower(), question=text, slug=f"q-{i}", intent="question",
        answer_length="medium", content=content, references=references, trust_score=trust,
        channel=rng.choice(CHANNELS), out_of_context=refused, feedback=feedback,
        usage={"answer": {"model": "offline-extractive", "prompt_tokens": 900, "completion_tokens": 150}},
        timings={"understand_ms": 40, "retrieve_ms": 120, "rerank_ms": 30, "generate_ms": 800, "total_ms": 990},
        cost_usd=Decimal("0.000420"), latency_ms=rng.randint(300, 4000),
        created_at=now - timedelta(seconds=rng.uniform(0, DAYS * 86400)), **fields,
    )


def _questions(guru: Any, count: int, rng: random.Random, sources: list[Any]) -> None:
    """Singles and sessions of 2–4 turns (each turn's parent is the previous one), bulk-created by turn."""
    from django.utils import timezone

    from backend.answering.citations import citations_from
    from backend.answering.models import Binge, Citation, Question

    now = timezone.now()
    lengths: list[int] = []  # questions per session; 1 = no session
    while sum(lengths) < count:
        lengths.append(rng.choice([2, 3, 4]) if rng.random() < 0.12 else 1)
    lengths[-1] -= sum(lengths) - count
    sessions = [n for n in lengths if n > 1]
    binges = Binge.objects.bulk_create([Binge(guru=guru, channel=rng.choice(CHANNELS)) for _ in sessions])
    index = 0
    with _explicit_created_at():
        singles = []
        for n in lengths:
            if n == 1:
                singles.append(_question(guru, index, rng, sources, now))
                index += 1
        Question.objects.bulk_create(singles, batch_size=1000)
        previous: list[Any] = [None] * len(sessions)
        for turn in range(max(sessions, default=0)):
            wave, owners = [], []
            for s, (binge, n) in enumerate(zip(binges, sessions, strict=True)):
                if turn < n:
                    parent = previous[s]
                    question = _question(guru, index, rng, sources, now, binge=binge, parent=parent)
                    if parent is not None:
                        question.created_at = min(now, parent.created_at + timedelta(minutes=2))
                    wave.append(question)
                    owners.append(s)
                    index += 1
            for s, question in zip(owners, Question.objects.bulk_create(wave, batch_size=1000), strict=True):
                previous[s] = question
    # The answer flow records a citation row per cited source; bulk-created answers need theirs too.
    created = Question.objects.filter(guru=guru).only("id", "guru_id", "created_at", "references")
    Citation.objects.bulk_create([c for q in created.iterator() for c in citations_from(q, q.references)],
                                 batch_size=1000)


def _build(path: Path, template: Path, questions: int, seed: int) -> dict[str, Any]:
    """Copy the migrated template to `path` and fill it; returns what the page URLs need."""
    from backend.answering.models import Question
    from backend.api.services import api_key_create
    from backend.gurus.services import guru_create
    from backend.widget.services import widget_id_create

    shutil.copy(template, path)
    rng = random.Random(seed)
    with _database(path):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.create_superuser("admin", "admin@example.com", "bench-password")
        guru = guru_create(user=user, slug=SLUG, name="Celery Guru", domain_knowledge="Celery task queues")
        sources = _sources(guru, rng)
        _questions(guru, questions, rng, sources)
        for k in range(3):
            api_key_create(user=user, name=f"key {k}", guru=guru)
        for w in range(2):
            widget_id_create(guru=guru, name=f"site {w}", allowed_origins=[f"https://site{w}.example.com"])
        # The detail page: an answered follow-up in a session, from the middle of the history.
        middle = Question.objects.filter(guru=guru, parent__isnull=False, out_of_context=False).order_by(
            "created_at")
        detail = middle[middle.count() // 2]
        assert Question.objects.filter(guru=guru).count() == questions
    return {"user": user, "detail": detail.pk}


def _pages(detail_id: int) -> list[tuple[str, str]]:
    g = f"/dashboard/g/{SLUG}"
    return [
        ("gurus", "/"), ("overview", f"{g}/"), ("sources", f"{g}/sources/"),
        ("sources_progress", f"{g}/sources/progress.json"), ("questions", f"{g}/questions/"),
        ("questions_search", f"{g}/questions/?q={SEARCH_WORD}"), ("questions_page100", f"{g}/questions/?page=100"),
        ("question_detail", f"{g}/questions/{detail_id}/"), ("unanswered", f"{g}/unanswered/"),
        ("channels", f"{g}/channels/"), ("integrations", f"{g}/integrations/"), ("settings", f"{g}/settings/"),
        ("analytics_90d", f"{g}/analytics/?days=90"), ("instance_settings", "/dashboard/settings/"),
    ]


class Side:
    """One database, its logged-in client and its page URLs."""

    def __init__(self, name: str, path: Path, info: dict[str, Any]) -> None:
        from django.test import Client

        self.name, self.path, self.client = name, path, Client(SERVER_NAME="localhost")
        with _database(path):
            self.client.force_login(info["user"])
        self.urls = dict(_pages(info["detail"]))

    def get(self, page: str) -> float:
        """Server time of one request in seconds, on a freshly opened connection."""
        with _database(self.path):
            start = time.perf_counter()
            response = self.client.get(self.urls[page])
            elapsed = time.perf_counter() - start
        assert response.status_code == 200, f"{self.name} {page}: HTTP {response.status_code}"
        return elapsed

    def queries(self, page: str) -> list[dict[str, str]]:
        """The SQL of one request, with each statement's execute time (a streamed query's rows not included)."""
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with _database(self.path), CaptureQueriesContext(connection) as captured:
            self.client.get(self.urls[page])
        return captured.captured_queries

    def forget_vectors(self) -> None:
        """Drop the refusals' cached vectors so that the next unanswered visit is a cold one again."""
        from backend.answering.models import Question

        with _database(self.path):
            Question.objects.update(embedding=None, embedding_model="")

    def backfill(self) -> None:
        """What the worker does after a cold unanswered visit: embed the refusals that visit left out."""
        from backend.answering.models import Question
        from backend.answering.vectors import questions_embed

        with _database(self.path):
            missing = Question.objects.filter(out_of_context=True, embedding__isnull=True)
            questions_embed(question_ids=list(missing.values_list("pk", flat=True)))

    def profile(self, page: str, top: int = 12) -> str:
        profiler = cProfile.Profile()
        with _database(self.path):
            profiler.enable()
            self.client.get(self.urls[page])
            profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats("/backend/", top)  # our code, by time including callees
        stats.sort_stats("tottime").print_stats(top)  # anything, by time in the function itself
        return out.getvalue()


Medians = dict[str, dict[str, float]]


def _timed(base: Side, big: Side, pages: list[str], repeats: int) -> tuple[dict[str, float], Medians]:
    """Each page's cold unanswered visit and median warm time on both sides, alternating which goes first."""
    # Warm-up: every page once on both sides; the first unanswered visit (which also pays the process's
    # first imports and template compiles) is thrown away and its vectors forgotten, then each side's
    # cold visit is timed once.
    for page in pages:
        base.get(page)
        big.get(page)
    base.forget_vectors()
    big.forget_vectors()
    cold = {side.name: side.get("unanswered") * 1000 for side in (base, big)}
    base.backfill()
    big.backfill()
    samples: dict[str, dict[str, list[float]]] = {"10k": {p: [] for p in pages}, "base": {p: [] for p in pages}}
    for r in range(repeats):
        for page in pages:
            for side in (big, base) if r % 2 else (base, big):
                samples[side.name][page].append(side.get(page) * 1000)
    medians = {side: {p: statistics.median(v) for p, v in pages_.items()} for side, pages_ in samples.items()}
    return cold, medians


def _report(big: Side, pages: list[str], medians: Medians, queries: dict[str, list[dict[str, str]]],
            args: argparse.Namespace) -> None:
    """Per-page table, the slowest pages' SQL, profiles asked for or over target, and the summary line."""
    print(f"{'page':<20} {'10k_ms':>8} {'base_ms':>8} {'ratio':>6} {'queries':>7}  target<{TARGET_MS:.0f}ms")
    for page in pages:
        ms, base_ms = medians["10k"][page], medians["base"][page]
        verdict = "met" if ms < TARGET_MS else "MISSED"
        print(f"{page:<20} {ms:>8.1f} {base_ms:>8.1f} {ms / base_ms:>6.2f} {len(queries[page]):>7}  {verdict}")
    worst = max(pages, key=lambda p: medians["10k"][p])
    slow = [p for p in pages if medians["10k"][p] >= TARGET_MS]
    for page in sorted(pages, key=lambda p: -medians["10k"][p])[:3]:
        sql = sorted(queries[page], key=lambda q: -float(q["time"]))
        print(f"sql of {page} at 10k: {sum(float(q['time']) for q in sql) * 1000:.0f} ms executing "
              f"{len(sql)} queries; slowest {float(sql[0]['time']) * 1000:.0f} ms: {sql[0]['sql'][:110]}")
    for page in dict.fromkeys([*slow, *args.profile]):
        print(f"--- profile of {page} at 10k (one request, cumulative) ---")
        print(big.profile(page))
    print(f"target {'met' if not slow else 'MISSED'}: every page under {TARGET_MS:.0f} ms at {args.questions} "
          f"questions" + (f" (over: {', '.join(slow)})" if slow else ""))
    worst_ms = medians["10k"][worst]
    print(f"worst_page_ms={worst_ms:.1f} page={worst} target={TARGET_MS:.0f} "
          f"ratio={worst_ms / medians['base'][worst]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="5 timed requests per page instead of 15 (< 60 s)")
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--baseline-questions", type=int, default=100)
    parser.add_argument("--profile", action="append", default=[], metavar="PAGE",
                        help="also print a cProfile of one request of PAGE at 10k (pages over target always are)")
    args = parser.parse_args()
    repeats = 5 if args.quick else 15
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        _configure(data_dir)
        from django.core.management import call_command
        from django.db import connection

        start = time.perf_counter()
        template = data_dir / "base.sqlite3"
        call_command("migrate", verbosity=0)
        connection.close()
        big_info = _build(data_dir / "big.sqlite3", template, args.questions, seed=8)
        base_info = _build(data_dir / "small.sqlite3", template, args.baseline_questions, seed=8)
        build_s = time.perf_counter() - start
        big = Side("10k", data_dir / "big.sqlite3", big_info)
        base = Side("base", data_dir / "small.sqlite3", base_info)
        pages = [name for name, _ in _pages(0)]
        cold, medians = _timed(base, big, pages, repeats)
        queries = {page: big.queries(page) for page in pages}
        unknown = sorted(set(args.profile) - set(pages))
        if unknown:
            parser.error(f"unknown page {', '.join(unknown)}; pages: {', '.join(pages)}")
        print(f"questions={args.questions} baseline_questions={args.baseline_questions} sources={SOURCES} "
              f"days={DAYS} repeats={repeats} build_s={build_s:.1f} nproc={os.cpu_count()}")
        print(f"unanswered cold first visit (embeds 16 refusals, queues the rest): 10k={cold['10k']:.1f} ms "
              f"base={cold['base']:.1f} ms")
        _report(big, pages, medians, queries, args)
        connection.close()


if __name__ == "__main__":
    main()
