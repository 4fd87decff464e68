"""Summary trees: LLM calls and tokens per 100k characters of source text, wall time against the LLM's (issue #18).

Corpus: deterministic technical documentation (bench/answer_corpus.py pages, no sentence twice) written into
PDFs of different sizes (300k characters over 9 sources; --quick: 100k over 5), added to one guru with
`source_create` and indexed for real (eager tasks, the embedded default: MiniLM, Milvus Lite) with
OPENGURU_SUMMARIES off, so indexing is never timed. The LLM: the OpenAI-compatible provider pointed at
tests/fakes/paced_llm.py in its own uvicorn process, answering each summary after a fixed latency (1 s;
--quick 0.5 s) with ~1,200 characters and usage at 4 characters a token, counting calls and its own service
time. Measured: `summarize_source()` for each source in turn, then `summarize_guru()`, exactly as the task
runs them (reading the text back from the store, the tree, the rows, embedding the summary nodes).

Figures:
- calls: what the server answered. minimum: for each source of p pieces (`split_pieces` of its indexed text,
  fan-in f from TreeConfig) p + ceil((p - 1) / (f - 1)), and ceil((n - 1) / (f - 1)) for the guru's tree
  over n source summaries: the fewest calls any tree of merges of at most f summaries can make.
  Target: calls == minimum (also checked against `tree_size`, the builder's own count).
- tokens_per_100k, calls_per_100k: prompt + completion tokens the server reported, per 100k characters of
  the text the trees summarise (the sources' indexed text as `source_documents` reads it back).
- llm_s, the physical limit: a layer's calls run OPENGURU_SUMMARY_CONCURRENCY at a time and a layer starts
  when the one below is done, trees one after the other, so
      llm_s = sum over trees, over layers L of ceil(calls(L) / concurrency) * mean service time
  with the layers from `merge_groups` and the server's own mean service time per call.
- wall_s: the summarising as the pipeline does it. ratio = wall_s / llm_s; target <= 1.10.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import math
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.answer_corpus import CorpusWriter  # noqa: E402

FULL_SIZES = (96_000, 64_000, 48_000, 32_000, 24_000, 16_000, 10_000, 6_000, 4_000)
QUICK_SIZES = (48_000, 24_000, 16_000, 8_000, 4_000)
TARGET_OVERHEAD = 1.10
LINE_WIDTH = 95


# --- corpus -----------------------------------------------------------------------------------------------

def _pages(writer: CorpusWriter) -> Iterator[tuple[str, list[str]]]:
    """(title, paragraphs) of each generated page, in order."""
    title, key = "", None
    paragraphs: list[str] = []
    for chunk in writer.chunks(10**9):
        if chunk.doc_key != key and paragraphs:
            yield title, paragraphs
            paragraphs = []
        key, title = chunk.doc_key, chunk.title
        paragraphs.append(chunk.text.removeprefix(f"## {chunk.title}\n").strip())


def source_pdfs(sizes: tuple[int, ...]) -> list[tuple[bytes, int]]:
    """One PDF per size (whole pages until the size is reached; one page a generated page) and its characters."""
    from tests.fakes.pdfs import pdf_bytes

    pages, made = _pages(CorpusWriter(seed=18, sources=1)), []
    for size in sizes:
        lines_by_page: list[list[str]] = []
        chars = 0
        while chars < size:
            title, paragraphs = next(pages)
            lines = [title, ""]
            for paragraph in paragraphs:
                lines += [*textwrap.wrap(paragraph, LINE_WIDTH), ""]
            lines_by_page.append(lines)
            chars += len(title) + sum(len(p) + 2 for p in paragraphs)
        made.append((pdf_bytes(lines_by_page), chars))
    return made


# --- the fake LLM -----------------------------------------------------------------------------------------

@contextmanager
def paced_llm(work: Path, latency_ms: float) -> Iterator[str]:
    """tests/fakes/paced_llm.py in its own uvicorn process, answering after latency_ms; its base URL."""
    from backend.core.sidecars import free_port, wait_for_port

    port = free_port()
    env = {**os.environ, "PACED_LLM_JSON_MS": str(latency_ms)}
    with (work / "paced-llm.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "tests.fakes.paced_llm:app", "--host", "127.0.0.1", "--port", str(port),
             "--no-access-log", "--log-level", "warning"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port("127.0.0.1", port, timeout=30)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def llm_stats(url: str, *, reset: bool = False) -> dict[str, Any]:
    request = urllib.request.Request(f"{url}/stats", method="POST" if reset else "GET", data=b"" if reset else None)
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (127.0.0.1)
        return dict(json.loads(response.read()))


# --- Django -----------------------------------------------------------------------------------------------

def configure(data_dir: Path, llm_url: str, embedder: str) -> None:
    """Test settings (throwaway SQLite, eager tasks), Milvus Lite under data_dir, the paced LLM; summaries off."""
    os.environ.update(DJANGO_SETTINGS_MODULE="backend.config.settings.test", OPENGURU_DATA_DIR=str(data_dir),
                      DATABASE_URL=f"sqlite:///{data_dir / 'bench.sqlite3'}")
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from backend.config.celery_app import app
    from backend.config.settings.components.models import llm_from_env

    app.conf.update(task_always_eager=True, broker_url="memory://")
    settings.OPENGURU_EMBEDDER = {"BACKEND": embedder, "DIMENSION": "384"}
    settings.OPENGURU_VECTOR_STORE = {"BACKEND": "milvus", "URI": str(data_dir / "milvus.db"), "TOKEN": "",
                                      "TIMEOUT": "60"}
    settings.OPENGURU_LLM = llm_from_env({"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": f"{llm_url}/v1",
                                          "OPENGURU_CHAT_MODEL": "paced"})
    settings.OPENGURU_SUMMARIES = False  # indexing must not summarise: only our own calls below are timed
    call_command("migrate", verbosity=0)
    import pymilvus  # noqa: F401  (its import runs dictConfig, which would reset the level set below)

    # pymilvus warns on every query iterator that Milvus Lite has no server timestamp; not ours to fix.
    logging.getLogger("pymilvus").setLevel(logging.ERROR)


def index_sources(pdfs: list[tuple[bytes, int]]) -> tuple[Any, list[int]]:
    """A guru with one indexed PDF source per entry; its sources' ids."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from backend.gurus.models import Guru
    from backend.sources.models import DataSource, SourceKind, SourceStatus
    from backend.sources.services import source_create

    guru = Guru.objects.create(slug="bench-summaries", name="Ops Guru", domain_knowledge="operations")
    ids = []
    for n, (data, _) in enumerate(pdfs):
        upload = SimpleUploadedFile(f"manual-{n}.pdf", data, content_type="application/pdf")
        ids.append(source_create(guru=guru, kind=SourceKind.PDF, upload=upload, title=f"Manual {n}").pk)
    states = dict(DataSource.objects.filter(pk__in=ids).values_list("pk", "status"))
    if any(state != SourceStatus.INDEXED for state in states.values()):
        raise SystemExit(f"indexing failed: {states}")
    return guru, ids


# --- expectations -----------------------------------------------------------------------------------------

def layer_calls(count: int, fan_in: int, *, leaves: bool) -> list[int]:
    """Calls per layer of a tree over `count` nodes (leaves: they are summarised first, as a source's pieces)."""
    from backend.pipeline.summary_tree import merge_groups

    layers = [count] if leaves and count else []
    while count > 1:
        groups = merge_groups(count, fan_in)
        layers.append(sum(1 for g in groups if len(g) > 1))
        count = len(groups)
    return layers


@dataclass
class Plan:
    """What the trees must take, from the pure functions, before anything is summarised."""

    fan_in: int
    pieces: list[int]
    chars: int
    layers: list[list[int]] = field(default_factory=list)
    minimum: int = 0
    tree_size: int = 0

    def rounds(self, concurrency: int) -> int:
        return sum(math.ceil(calls / concurrency) for tree in self.layers for calls in tree)


def plan(guru: Any, source_ids: list[int]) -> Plan:
    from backend.pipeline.summary_tree import split_pieces, tree_size
    from backend.sources.models import DataSource
    from backend.sources.summaries import collection_name, source_documents, summariser_model, tree_config

    config = tree_config(summariser_model(guru))
    collection = collection_name(guru.pk) or ""
    pieces, chars = [], 0
    for source in DataSource.objects.filter(pk__in=source_ids).order_by("pk"):
        documents = source_documents(source, collection)
        chars += len("\n\n\n".join(documents))
        pieces.append(len(split_pieces(documents, config)))
    result = Plan(fan_in=config.fan_in, pieces=pieces, chars=chars)
    merges = lambda n: math.ceil((n - 1) / (config.fan_in - 1)) if n > 1 else 0  # noqa: E731
    result.layers = [layer_calls(p, config.fan_in, leaves=True) for p in pieces]
    result.layers.append(layer_calls(len(pieces), config.fan_in, leaves=False))
    result.minimum = sum(p + merges(p) for p in pieces) + merges(len(pieces))
    result.tree_size = sum(tree_size(p, config.fan_in) for p in pieces) + tree_size(len(pieces), config.fan_in) - len(
        pieces)
    return result


# --- the measured run -------------------------------------------------------------------------------------

@dataclass
class Parts:
    """Seconds spent in the service's steps that run on the calling thread (between and around the LLM layers)."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: list[float] = field(default_factory=list)
    """Each LLM call as the worker thread saw it (SDK, HTTP and the server's time)."""

    def add(self, key: str, spent: float) -> None:
        self.seconds[key] = self.seconds.get(key, 0.0) + spent


@contextmanager
def timed_parts(parts: Parts) -> Iterator[None]:
    """Time the service's steps by wrapping them where it looks them up (its module, its recorder, the adapters)."""
    from backend.adapters import registry
    from backend.sources import summaries

    targets: list[tuple[Any, str, str]] = [
        (summaries, "source_documents", "read text"), (summaries, "split_pieces", "split"),
        (summaries._Recorder, "stored", "store nodes"), (summaries._Recorder, "advance", "progress"),
        (summaries, "_link_tree", "link tree"), (summaries, "summary_vectors_sync", "summary vectors"),
        (registry.embedder(), "embed_documents", "  of which embedding")]
    saved = [(obj, name, obj.__dict__.get(name)) for obj, name, _ in targets]
    chat = registry.chat_model()
    if chat is None:
        raise SystemExit("no chat model: OPENGURU_LLM should name the paced server")
    saved.append((chat, "complete", None))
    original_complete = chat.complete

    def complete(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_complete(*args, **kwargs)
        finally:
            parts.calls.append(time.perf_counter() - start)  # list.append is atomic: the workers share it

    def wrap(fn: Callable[..., Any], key: str) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts.add(key, time.perf_counter() - start)
        return run

    for obj, name, key in targets:
        setattr(obj, name, wrap(getattr(obj, name), key))
    setattr(chat, "complete", complete)  # noqa: B010 (an instance attribute shadowing the method)
    try:
        yield
    finally:
        for obj, name, original in saved:
            if original is None:
                delattr(obj, name)
            else:
                setattr(obj, name, original)


def warm_up(guru: Any) -> None:
    """Load the URLconf (0.3-0.6 s, once per process: the summary vectors' links are reversed) before timing."""
    from django.urls import reverse

    reverse("answering:guru-summary", kwargs={"slug": guru.slug})


def summarise_all(guru: Any, source_ids: list[int], parts: Parts, profile: cProfile.Profile | None) -> float:
    """Every source's tree, then the guru's, as the summaries task builds them; the wall time."""
    from backend.sources.summaries import summarize_guru, summarize_source

    with timed_parts(parts):
        if profile is not None:
            profile.enable()
        start = time.perf_counter()
        for source_id in source_ids:
            summarize_source(source_id=source_id)
        summarize_guru(guru_id=guru.pk)
        wall = time.perf_counter() - start
        if profile is not None:
            profile.disable()
    return wall


def stored_rows(guru: Any) -> dict[str, int]:
    from django.db.models import Sum

    from backend.gurus.models import Guru
    from backend.sources.models import DataSource, Summarization, SummaryState

    rows = Summarization.objects.filter(guru=guru)
    tokens = rows.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    return {"nodes": rows.count(), "roots": rows.filter(is_root=True).count(),
            "source_roots": rows.filter(is_source_root=True).count(),
            "vectors": rows.filter(vector_written=True).count(), "tokens": (tokens["p"] or 0) + (tokens["c"] or 0),
            "guru_tokens_used": Guru.objects.get(pk=guru.pk).summary_tokens_used,
            "sources_done": DataSource.objects.filter(guru=guru, summary_state=SummaryState.DONE).count()}


def report(expected: Plan, stats: dict[str, Any], rows: dict[str, int], wall: float, parts: Parts,
           concurrency: int) -> None:
    calls = int(stats["plain_calls"])
    tokens = int(stats["plain_prompt_tokens"]) + int(stats["plain_completion_tokens"])
    service_s = float(stats["plain_mean_ms"]) / 1000
    llm_s = expected.rounds(concurrency) * service_s
    per_100k = 100_000 / expected.chars
    print(f"sources={len(expected.pieces)} chars={expected.chars} fan_in={expected.fan_in} "
          f"pieces={expected.pieces} concurrency={concurrency} (server saw at most {stats['plain_max_in_flight']})")
    print(f"layers per tree (calls)={expected.layers} rounds={expected.rounds(concurrency)} "
          f"mean_service_ms={stats['plain_mean_ms']} tree_size={expected.tree_size}")
    print(f"stored: {rows} server tokens={tokens} (prompt {stats['plain_prompt_tokens']}, "
          f"completion {stats['plain_completion_tokens']})")
    on_thread = sum(v for k, v in parts.seconds.items() if not k.startswith(" "))
    for key, spent in parts.seconds.items():
        print(f"  {key:<22} {spent * 1000:8.1f} ms  ({spent / wall:5.1%} of wall)")
    print(f"  {'LLM layers (rest)':<22} {(wall - on_thread) * 1000:8.1f} ms  vs the physical limit "
          f"{llm_s * 1000:.1f} ms")
    rest = wall - parts.seconds.get("summary vectors", 0.0)
    print(f"without the summary vectors step: {rest:.2f} s, {rest / llm_s:.3f} x the LLM's time")
    if parts.calls:
        print(f"  one LLM call seen by the client: mean {statistics.fmean(parts.calls) * 1000:.1f} ms, "
              f"max {max(parts.calls) * 1000:.1f} ms (server: {stats['plain_mean_ms']} ms)")
    print(f"calls={calls} minimum={expected.minimum} calls_ratio={calls / expected.minimum:.2f} "
          f"tokens_per_100k={tokens * per_100k:.0f} calls_per_100k={calls * per_100k:.1f} wall_s={wall:.2f} "
          f"llm_s={llm_s:.2f} target=calls==minimum,overhead<{TARGET_OVERHEAD:.2f} ratio={wall / llm_s:.3f}")


def print_profile(profile: cProfile.Profile, top: int = 30) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).sort_stats("cumulative")
    stats.print_stats(top)
    stats.print_stats("vector_store/milvus.py|summaries.py|summary_vectors.py", 20)  # where the store's time goes
    print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k characters, 0.5 s a call (< 60 s)")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="the fake LLM's latency (default 1000; quick 500)")
    parser.add_argument("--embedder", default="local-minilm", help="local-minilm (the default's) or hashing")
    parser.add_argument("--profile", action="store_true", help="cProfile the summarising (calling thread)")
    args = parser.parse_args()
    # A real model takes seconds to summarise a 12k-character piece; 1 s is faster than any of them, so the
    # pipeline's fixed costs weigh more here than they would in use (200 ms is a stress run: --latency-ms 200).
    latency = args.latency_ms or (500.0 if args.quick else 1000.0)
    pdfs = source_pdfs(QUICK_SIZES if args.quick else FULL_SIZES)
    with tempfile.TemporaryDirectory(prefix="bench-summaries-") as tmp, paced_llm(Path(tmp), latency) as url:
        configure(Path(tmp), url, args.embedder)
        from django.conf import settings

        started = time.perf_counter()
        guru, source_ids = index_sources(pdfs)
        print(f"indexed {len(pdfs)} PDFs ({sum(c for _, c in pdfs)} characters generated) in "
              f"{time.perf_counter() - started:.1f} s; LLM latency {latency:.0f} ms", flush=True)
        expected = plan(guru, source_ids)
        warm_up(guru)
        llm_stats(url, reset=True)
        parts, profile = Parts(), cProfile.Profile() if args.profile else None
        wall = summarise_all(guru, source_ids, parts, profile)
        stats = llm_stats(url)
        if profile is not None:
            print_profile(profile)
        report(expected, stats, stored_rows(guru), wall, parts, settings.OPENGURU_SUMMARY_CONCURRENCY)


if __name__ == "__main__":
    main()
