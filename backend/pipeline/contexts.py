"""From reranked chunks to numbered answer contexts: liveness filter, grouping, merging, duplicates."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from backend.pipeline.code_fences import fence_label, reopening
from backend.pipeline.text import content_key, same_content
from backend.pipeline.types import SUMMARY_GENERATION, SourceKind

MAX_OVERLAP_CHARS = 600


@dataclass(frozen=True)
class ScoredChunk:
    """A retrieved chunk after reranking."""

    chunk_id: str
    source_id: int
    generation: int
    kind: SourceKind
    text: str
    metadata: dict[str, Any]
    score: float
    selection: float | None = None
    """What decides whether its document makes the cut, when the reranker gives it (see RerankResult)."""


@dataclass(frozen=True)
class SourceMention:
    """Another source holding the same content as a context (a page added alone and again via its sitemap)."""

    source_id: int
    title: str
    link: str


@dataclass(frozen=True)
class Context:
    """Neighbouring chunks of one document merged into one citable context."""

    source_id: int
    kind: SourceKind
    title: str
    link: str
    text: str
    score: float
    locator: str
    chunk_ids: tuple[str, ...] = field(default=())
    also_in: tuple[SourceMention, ...] = field(default=())
    summary: bool = False
    """A node of a summary tree (a source's or the guru's), not a passage of the source's own text."""
    document: str = ""
    """The page or file it is from, within its source (one source may be a whole site or repository)."""
    linked_from: str = ""
    """The title of the document found by the search that links to (or imports) this one, when the source graph
    reached it rather than the search."""


def live_only(chunks: Sequence[ScoredChunk], live: Mapping[int, int],
              summaries: Collection[int] = ()) -> list[ScoredChunk]:
    """Chunks of the generation their source publishes (a half-written re-index is never read), and the
    summary rows of the sources in `summaries`."""
    return [c for c in chunks if live.get(c.source_id) == c.generation
            or (c.generation == SUMMARY_GENERATION and c.source_id in summaries)]


def overlap_length(left: str, right: str) -> int:
    """How many leading characters of `right`, a document's next chunk, repeat the end of `left` (0 if none)."""
    limit = min(len(left), len(right), MAX_OVERLAP_CHARS)
    return next((size for size in range(limit, 20, -1) if left.endswith(right[:size])), 0)


def _aligned(left: str, right: str) -> tuple[str, int]:
    """`right`, the document's chunk after `left`, without the fence it reopens (see code_fences.reopened)
    when `left` ends inside that block and the two do not already overlap as they are; and their overlap."""
    if size := overlap_length(left, right):
        return right, size
    if not (skip := reopening(left, right)):
        return right, 0
    rest = right[skip:]
    size = overlap_length(left, rest)
    # A bare fence line may instead be the block's real closing fence, left to the next chunk: only a reopening
    # fence names a language, or is followed by text the chunk before ends with (the chunks' overlap).
    return (rest, size) if fence_label(right) or size else (right, 0)


def unrepeated(left: str, right: str) -> str:
    """What `right`, the document's chunk after `left`, adds to it: without their overlap or a reopened fence."""
    right, size = _aligned(left, right)
    return right[size:]


def _join(left: str, right: str) -> str:
    """Concatenate consecutive chunks without repeating their overlap."""
    right, size = _aligned(left, right)
    if size:
        return left + right[size:]
    return f"{left}\n\n{right}" if right[:1] in (" ", "\t") else f"{left}\n{right}"  # an indented block stands apart


def join_chunks(texts: Sequence[str]) -> str:
    """A document's consecutive chunks (in order) as one text, each overlap kept once."""
    joined = ""
    for text in texts:
        joined = _join(joined, text) if joined else text
    return joined


def locator_text(kind: SourceKind, metadata: Mapping[str, Any]) -> str:
    """Where in the source: a page, a time, or a line range."""
    if "page" in metadata:
        return f"page {metadata['page']}"
    if "seconds" in metadata:
        seconds = int(metadata["seconds"])
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
            else f"{seconds // 60}:{seconds % 60:02d}"
    if "line_start" in metadata:
        return f"lines {metadata['line_start']}–{metadata.get('line_end', metadata['line_start'])}"
    return ""


def _merge_run(run: list[ScoredChunk]) -> Context:
    first = run[0]
    text = first.text
    for chunk in run[1:]:
        text = _join(text, chunk.text)
    meta = dict(first.metadata)
    if "line_end" in run[-1].metadata:
        meta["line_end"] = run[-1].metadata["line_end"]
    return Context(source_id=first.source_id, kind=first.kind, title=str(meta.get("title", "")),
                   link=str(meta.get("link", "")), text=text, score=max(c.score for c in run),
                   locator=locator_text(first.kind, meta), chunk_ids=tuple(c.chunk_id for c in run),
                   summary=bool(meta.get("summary")), document=f"{first.source_id}:{meta.get('doc_key', '')}",
                   linked_from=str(meta.get("linked_from", "")))


def _runs(chunks: list[ScoredChunk]) -> list[list[ScoredChunk]]:
    """Consecutive chunks of the same document, in document order."""
    ordered = sorted(chunks, key=lambda c: (str(c.metadata.get("doc_key", "")), int(c.metadata.get("chunk_index", 0))))
    runs: list[list[ScoredChunk]] = []
    for chunk in ordered:
        last = runs[-1][-1] if runs else None
        if (last is not None and last.metadata.get("doc_key") == chunk.metadata.get("doc_key")
                and int(chunk.metadata.get("chunk_index", -9)) == int(last.metadata.get("chunk_index", -9)) + 1):
            runs[-1].append(chunk)
        else:
            runs.append([chunk])
    return runs


def collapse_duplicates(contexts: Sequence[Context]) -> list[Context]:
    """Contexts (best first) with near-identical ones folded into the best of them, which names the others'
    sources: the answerer never sees, and the asker never gets, the same text twice under two numbers."""
    kept: list[Context] = []
    keys: list[tuple[str, frozenset[tuple[str, ...]]]] = []  # each kept context's, computed once
    for context in contexts:
        key = content_key(context.text)
        twin = next((i for i, k in enumerate(keys) if same_content(k, key)), None)
        if twin is None:
            kept.append(context)
            keys.append(key)
            continue
        first = kept[twin]
        known = {first.source_id, *(m.source_id for m in first.also_in)}
        mentions = (*first.also_in, *((SourceMention(context.source_id, context.title, context.link),)
                                      if context.source_id not in known else ()), *context.also_in)
        kept[twin] = replace(first, also_in=tuple(m for m in mentions if m.source_id != first.source_id))
    return kept


PASSAGE_BREAK = "\n\n…\n\n"
"""Between two passages of one page that are not neighbours: the reader sees that text was left out."""


def _one_per_document(runs: list[Context]) -> Context:
    """A page's passages (in reading order) as one context: one reference, one [n], per page."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    return replace(first, text=PASSAGE_BREAK.join(r.text for r in runs), score=max(r.score for r in runs),
                   chunk_ids=tuple(i for r in runs for i in r.chunk_ids))


def build_contexts(chunks: Sequence[ScoredChunk], *, max_documents: int, chunks_per_document: int) -> list[Context]:
    """Best chunks of the best documents, neighbours merged, duplicates collapsed, best context first.

    Documents, not sources, share the slots: one source may be a whole site or repository, and a question
    whose answer spans two of its pages needs both. A page's passages make one context (one reference).
    Duplicates collapse before the documents are capped, so a second copy of a page takes no page's place.
    """
    by_document: dict[tuple[int, str], list[ScoredChunk]] = {}
    for chunk in sorted(chunks, key=lambda c: c.score, reverse=True):
        by_document.setdefault((chunk.source_id, str(chunk.metadata.get("doc_key", ""))), []).append(chunk)
    merged = [_one_per_document([_merge_run(run) for run in _runs(group[:chunks_per_document])])
              for group in by_document.values()]
    selection = {f"{source}:{key}": max(c.score if c.selection is None else c.selection for c in group)
                 for (source, key), group in by_document.items()}
    ranked = sorted(merged, key=lambda c: (-selection.get(c.document, c.score), c.source_id))  # ties: oldest source
    distinct = collapse_duplicates(ranked)
    chosen = list(dict.fromkeys(c.document for c in distinct))[:max_documents]
    # The chosen ones in the order of their own grades: the best-graded passage is still quoted first.
    return sorted((c for c in distinct if c.document in chosen), key=lambda c: (-c.score, c.source_id))
