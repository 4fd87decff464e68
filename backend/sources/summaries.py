"""Summary trees: a source's, built after each index run from its indexed text, then the guru's over them."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import F

from backend.adapters import registry
from backend.core.selectors import settings_get
from backend.core.tasks import enqueue_on_commit
from backend.gurus.models import CollectionStatus, Guru, VectorCollection
from backend.pipeline.answerer_offline import OFFLINE_MODEL
from backend.pipeline.contexts import join_chunks
from backend.pipeline.errors import PermanentServiceError, TransientServiceError
from backend.pipeline.llm_types import Completion
from backend.pipeline.sanitize import neutralise
from backend.pipeline.summary_tree import (
    Node,
    TokenBudget,
    TreeBuilder,
    TreeConfig,
    TreeRun,
    clip,
    split_pieces,
    tree_size,
)
from backend.sources.models import DataSource, SourceStatus, Summarization, SummaryState
from backend.sources.summary_selectors import summary_budget
from backend.sources.summary_vectors import summary_vectors_sync

logger = logging.getLogger(__name__)
PROGRESS_EVERY_SECONDS = 0.5
MAX_SOURCE_CHUNKS = 20000
"""Chunks read back to summarise one source: bounds memory whatever the source's size."""
_DIGITS = re.compile(r"(\d+)")


def stored_text(text: str, limit: int) -> str:
    """A summary as it is stored: clipped to a whole sentence under the limit, neutralised."""
    return neutralise(clip(text, limit))


@dataclass
class Summariser:
    """The guru's summariser and the id its summaries are recorded (and hashed) under.

    Each summary is handed to a background thread for embedding as soon as it is written: the tree's calls
    wait on the model, not on the CPU, so retrieval's vectors are ready when the tree is, at no cost to it.
    """

    summarise: Callable[[Sequence[str], int], Completion]
    model: str
    embed: Callable[[list[str]], list[list[float]]] | None = None
    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="summary-embed"))
    _pending: dict[str, Future[list[list[float]]]] = field(default_factory=dict)

    @property
    def extractive(self) -> bool:
        return self.model == OFFLINE_MODEL

    def __call__(self, texts: Sequence[str], limit: int) -> Completion:
        completion = self.summarise(texts, limit)
        if self.embed is not None:
            text = stored_text(completion.text, limit)
            self._pending.setdefault(text, self._pool.submit(self.embed, [text]))
        return completion

    def vectors(self) -> dict[str, tuple[float, ...]]:
        """The vectors of the summaries written, by stored text (waits for the last ones)."""
        return {text: tuple(future.result()[0]) for text, future in self._pending.items()}

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def summariser_model(guru: Guru) -> str:
    """The id the guru's summaries are written (and hashed) under: its chat model's, or the offline one."""
    model = guru.chat_model or settings_get().answer_model
    chat = registry.chat_model(model=model)
    return chat.model if chat is not None else OFFLINE_MODEL


@contextmanager
def summariser_for(guru: Guru) -> Iterator[Summariser]:
    """The configured LLM (the guru's model), or the offline extractive summariser; its embedding thread
    ends with the block."""
    answerer = registry.answerer(model=guru.chat_model or settings_get().answer_model)
    summariser = Summariser(summarise=lambda texts, limit: answerer.summarize(texts, max_chars=limit),
                            model=summariser_model(guru), embed=registry.embedder().embed_documents)
    try:
        yield summariser
    finally:
        summariser.close()


def tree_config(model: str) -> TreeConfig:
    return TreeConfig(max_length=settings.SUMMARIZATION_MAX_LENGTH, overlap=settings.SUMMARIZATION_OVERLAP_LENGTH,
                      min_length=settings.SUMMARIZATION_MIN_LENGTH,
                      summary_length=settings.SUMMARIZATION_SUMMARY_LENGTH, fingerprint=model)


def _natural(key: str) -> list[object]:
    """Sort key reading numbers as numbers ("page-2" before "page-10")."""
    return [int(part) if part.isdigit() else part for part in _DIGITS.split(key)]


def source_documents(source: DataSource, collection: str) -> list[str]:
    """The source's indexed text, document by document, rebuilt from its live chunks (titles first)."""
    if source.indexed_generation is None:
        return []
    hits = registry.vector_store().source_chunks(collection, source_id=source.pk, generation=source.indexed_generation,
                                                 limit=min(max(source.chunk_count, 1), MAX_SOURCE_CHUNKS))
    by_doc: dict[str, list[tuple[int, str, str]]] = {}
    for hit in hits:
        key = str(hit.metadata.get("doc_key", ""))
        by_doc.setdefault(key, []).append((int(hit.metadata.get("chunk_index", 0)), hit.text,
                                           str(hit.metadata.get("title", ""))))
    documents = []
    for key in sorted(by_doc, key=_natural):
        parts = sorted(by_doc[key])
        title = parts[0][2]
        body = join_chunks([text for _, text, _ in parts])
        # The title as a heading: a model reads what the text is, an extract never quotes it as a sentence.
        documents.append(f"# {title}\n\n{body}" if title and not body.startswith(title) else body)
    return documents


@dataclass
class _Recorder:
    """Stores nodes as they are made (so a crash re-uses them), charges the guru, reports progress."""

    guru: Guru
    source: DataSource | None
    summariser: Summariser
    summary_length: int
    done: int = 0
    total: int = 0
    _last: float = 0.0

    def known(self, existing: dict[str, Summarization]) -> Callable[[str], Node | None]:
        def find(digest: str) -> Node | None:
            row = existing.get(digest)
            if row is None:
                return None
            return Node(level=row.level, position=row.position, content_hash=digest, text=row.text,
                        model=row.model, key=row.pk)
        return find

    def stored(self, node: Node) -> None:
        row = Summarization.objects.create(
            guru=self.guru, source=self.source, level=node.level, position=node.position,
            content_hash=node.content_hash, text=stored_text(node.text, self.summary_length),
            model=node.model or self.summariser.model,
            extractive=self.summariser.extractive, prompt_tokens=node.prompt_tokens,
            completion_tokens=node.completion_tokens,
        )
        node.key = row.pk
        spent = node.prompt_tokens + node.completion_tokens
        if spent:
            Guru.objects.filter(pk=self.guru.pk).update(summary_tokens_used=F("summary_tokens_used") + spent)

    def advance(self, step: int) -> None:
        self.done = min(self.total, self.done + step) if self.total else self.done + step
        now = time.monotonic()
        if now - self._last < PROGRESS_EVERY_SECONDS and self.done != self.total:
            return
        self._last = now
        if self.source is not None:
            DataSource.objects.filter(pk=self.source.pk).update(summary_done=self.done, summary_total=self.total)


def _builder(recorder: _Recorder, config: TreeConfig, existing: dict[str, Summarization]) -> TreeBuilder:
    guru = Guru.objects.get(pk=recorder.guru.pk)  # the spend as stored now, other trees' calls included
    budget = TokenBudget(limit=summary_budget(guru), used=guru.summary_tokens_used)
    return TreeBuilder(config=config, summarise=recorder.summariser, known=recorder.known(existing),
                       stored=recorder.stored, budget=budget, progress=recorder.advance,
                       workers=settings.OPENGURU_SUMMARY_CONCURRENCY)


def _link_tree(run: TreeRun, scope: list[Summarization]) -> set[int]:
    """Write the run's shape (levels, positions, parents, source root) and delete the scope's stale nodes."""
    nodes = run.nodes()
    kept = {n.key for n in nodes if n.key is not None}
    parent_of = {child.key: node.key for node in nodes for child in node.children}
    with transaction.atomic():
        for node in nodes:
            Summarization.objects.filter(pk=node.stored_id).update(level=node.level, position=node.position,
                                                             parent_id=parent_of.get(node.key))
        # Stale nodes go last: a parent's deletion cascades, and no kept node points at one any more.
        stale = [row.pk for row in scope if row.pk not in kept]
        Summarization.objects.filter(pk__in=stale).delete()
    return kept


def collection_name(guru_id: int) -> str | None:
    record = VectorCollection.objects.filter(guru_id=guru_id, status=CollectionStatus.READY).first()
    return record.name if record is not None else None


def summarize_source(*, source_id: int) -> None:
    """Build (or bring up to date) one indexed source's tree; over budget it stops, keeping what it made."""
    source = DataSource.objects.select_related("guru").filter(pk=source_id, status=SourceStatus.INDEXED).first()
    collection = collection_name(source.guru_id) if source is not None else None
    if source is None or collection is None:
        return
    guru = source.guru
    with summariser_for(guru) as summariser:
        config = tree_config(summariser.model)
        pieces = split_pieces(source_documents(source, collection), config)
        scope = list(Summarization.objects.filter(source=source, guru=guru))
        recorder = _Recorder(guru=guru, source=source, summariser=summariser, summary_length=config.summary_length,
                             total=tree_size(len(pieces), config.fan_in))
        DataSource.objects.filter(pk=source_id).update(summary_state=SummaryState.RUNNING, summary_done=0,
                                                       summary_total=recorder.total, summary_note="")
        run = _builder(recorder, config, {row.content_hash: row for row in scope}).leaves(pieces)
        _link_tree(run, scope)
        Summarization.objects.filter(source=source).update(is_source_root=False)
        if run.root is not None:
            Summarization.objects.filter(pk=run.root.stored_id).update(is_source_root=True)
        summary_vectors_sync(guru_id=guru.pk, collection=collection, source_id=source_id,
                             vectors=summariser.vectors())
    state, note = _outcome(run, len(pieces), recorder, guru)
    DataSource.objects.filter(pk=source_id).update(summary_state=state, summary_note=note,
                                                   summary_done=recorder.done)


def _outcome(run: TreeRun, pieces: int, recorder: _Recorder, guru: Guru) -> tuple[str, str]:
    if not pieces:
        return SummaryState.DONE, "The source has no text to summarise."
    if run.complete:
        return SummaryState.DONE, ""
    budget = summary_budget(Guru.objects.get(pk=guru.pk))
    return SummaryState.OVER_BUDGET, (
        f"Stopped at the summary token budget ({budget:,} tokens): {recorder.done} of {recorder.total} summaries "
        "made. Raise the budget on the Overview tab to finish it; indexing and answering are not affected.")


def summarize_guru(*, guru_id: int) -> None:
    """Merge the sources' summaries into the guru's; a guru with one summarised source takes that summary."""
    guru = Guru.objects.filter(pk=guru_id).first()
    collection = collection_name(guru_id)
    if guru is None or collection is None:
        return
    tops = list(Summarization.objects.filter(guru=guru, is_source_root=True).order_by("source_id"))
    scope = list(Summarization.objects.filter(guru=guru, source__isnull=True))
    with summariser_for(guru) as summariser:
        config = tree_config(summariser.model)
        recorder = _Recorder(guru=guru, source=None, summariser=summariser, summary_length=config.summary_length)
        leaves = [Node(level=row.level, position=i, content_hash=row.content_hash, text=row.text, key=row.pk)
                  for i, row in enumerate(tops)]
        run = _builder(recorder, config, {row.content_hash: row for row in scope}).above(leaves)
        # The sources' roots are not this tree's to re-level: only their parent changes.
        for leaf in leaves:
            parent = next((n.key for n in run.nodes() for c in n.children if c.key == leaf.key), None)
            Summarization.objects.filter(pk=leaf.stored_id).update(parent_id=parent)
        guru_nodes = [n for n in run.nodes() if n.key not in {leaf.key for leaf in leaves}]
        _link_tree(TreeRun(layers=[guru_nodes]), scope)
        Summarization.objects.filter(guru=guru, is_root=True).update(is_root=False)
        if run.root is not None:
            Summarization.objects.filter(pk=run.root.stored_id).update(is_root=True)
        summary_vectors_sync(guru_id=guru_id, collection=collection, source_id=None, vectors=summariser.vectors())
    Guru.objects.filter(pk=guru_id).update(summary_note="" if run.complete else (
        f"The guru's summary stopped at the token budget ({summary_budget(guru):,} tokens)."))


def summaries_queue(*, guru_id: int, source_id: int | None) -> None:
    """After commit, (re)build a source's tree and then the guru's (source None: the guru's only)."""
    if not settings.OPENGURU_SUMMARIES:
        return
    if source_id is not None:
        DataSource.objects.filter(pk=source_id).update(summary_state=SummaryState.QUEUED, summary_note="")
    enqueue_on_commit("sources.summarize", guru_id=guru_id, source_id=source_id)


def summaries_run(*, guru_id: int, source_id: int | None) -> None:
    """The task's work, under the guru's summary lock: the source's tree, then the guru's."""
    if source_id is not None:
        try:
            summarize_source(source_id=source_id)
        except PermanentServiceError as exc:
            # A refused key or model: said on the source, and the guru's tree is still rebuilt from the rest.
            DataSource.objects.filter(pk=source_id).update(summary_state=SummaryState.FAILED,
                                                           summary_note=str(exc)[:500])
        except TransientServiceError as exc:
            DataSource.objects.filter(pk=source_id).update(summary_note=f"Retrying: {exc}"[:500])
            raise
    summarize_guru(guru_id=guru_id)


def summary_mark_failed(*, source_id: int | None, exc: BaseException) -> None:
    """A bug or a time limit: say so on the source rather than leave it "summarising" for ever."""
    if source_id is not None:
        DataSource.objects.filter(pk=source_id).update(summary_state=SummaryState.FAILED,
                                                       summary_note=f"Summarising failed: {exc}"[:500])


def summaries_recover() -> int:
    """Trees left queued or half-built when the workers stopped are queued again; finished nodes are re-used,
    so a tree resumes where it stopped. Returns how many were queued."""
    stalled = list(DataSource.objects.filter(status=SourceStatus.INDEXED,
                                             summary_state__in=[SummaryState.QUEUED, SummaryState.RUNNING])
                   .values_list("guru_id", "pk"))
    for guru_id, source_id in stalled:
        summaries_queue(guru_id=guru_id, source_id=source_id)
    return len(stalled)
