"""Turn a YouTube, website or PDF source into documents and write their chunks (Git repositories: github_sync)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator

from backend.adapters import registry
from backend.pipeline.budget import IngestBudget
from backend.pipeline.chunking import TextChunk
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.ingest_types import Document, Segment, Transcript
from backend.pipeline.youtube_urls import parse_youtube_url, video_link
from backend.sources.models import DataSource, SourceKind
from backend.sources.plans import Plan
from backend.sources.progress import Progress
from backend.sources.writer import ChunkWriter, PageRecord, WriteResult

logger = logging.getLogger(__name__)


def transcript_document(transcript: Transcript) -> Document:
    """One document per video; segments map chunk offsets back to seconds for `&t=` links."""
    text, segments = "", []
    for seconds, cue in transcript.cues:
        segments.append(Segment(offset=len(text), seconds=seconds))
        text += cue + " "
    return Document(key=transcript.video_id, text=text.strip(), title=transcript.title,
                    link=video_link(transcript.video_id), segments=tuple(segments))


def _youtube_link(doc: Document, chunk: TextChunk) -> str:
    return video_link(doc.key, chunk.locator.get("seconds"))


def _youtube_plan(source: DataSource, plan_failures: list[tuple[str, str]]) -> Plan:
    ref = parse_youtube_url(source.url)
    fetcher = registry.transcript_fetcher()
    notes: list[str] = []
    if ref.kind == "video":
        video_ids = [ref.id]
    else:
        playlist = fetcher.playlist(ref.id)
        video_ids = list(playlist.video_ids)
        notes = [playlist.truncation] if playlist.truncation else []
    languages = tuple(source.options.get("languages") or ("en",))

    def documents() -> Iterator[Document]:
        for video_id in video_ids:
            try:
                yield transcript_document(fetcher.transcript(video_id, languages=languages))
            except PermanentServiceError as exc:
                if ref.kind == "video":
                    raise
                # One video of a playlist without captions must not fail the whole playlist.
                plan_failures.append((video_link(video_id), str(exc)))

    return Plan(total=len(video_ids), documents=documents(), failures=plan_failures, notes=notes)


def _pdf_plan(source: DataSource, budget: IngestBudget | None) -> Plan:
    # Citations point at the app (which checks visibility), never at the storage path.
    pages = registry.pdf_extractor().extract(source.file.path, title=source.title, link=f"/sources/{source.pk}/file",
                                             budget=budget)
    return Plan(total=len(pages), documents=iter(pages))


def plan_for(source: DataSource, budget: IngestBudget | None = None) -> Plan:
    """The documents of a non-Git source; a PDF's text is bounded by the budget while it is extracted."""
    if source.kind == SourceKind.YOUTUBE:
        return _youtube_plan(source, [])
    if source.kind == SourceKind.PDF:
        return _pdf_plan(source, budget)
    from backend.sources.website import website_plan

    return website_plan(source)


def load_and_write(source: DataSource, writer: ChunkWriter, progress: Progress) -> WriteResult:
    """Write every document's chunks under the writer's generation."""
    plan = plan_for(source, writer.budget)
    if source.kind == SourceKind.YOUTUBE:
        writer.link_for = _youtube_link
    progress.set_total(plan.total)
    title, documents, pages = plan.title, 0, []
    for doc in plan.documents:
        chunks = writer.add(doc)
        if plan.multi_page:
            pages.append(PageRecord(url=doc.link, title=doc.title, chunks=chunks,
                                    content_hash=hashlib.sha256(doc.text.encode()).hexdigest()))
        title = title or doc.title
        documents += 1
        if plan.total_now is not None:
            progress.update_total(plan.total_now())  # before advancing, so done never catches a stale total
        progress.advance()
    if plan.total_now is not None and progress.total != plan.total_now():
        progress.set_total(plan.total_now())  # units that failed left the estimate: the bar ends full
    writer.flush()
    if documents == 0:
        reasons = "; ".join(f"{unit}: {why}" for unit, why in plan.failures[:3])
        raise PermanentServiceError(f"Nothing could be indexed from this source. {reasons}".strip())
    if writer.written == 0:
        raise PermanentServiceError("The source has no text to index.")
    for unit, why in plan.failures:
        logger.warning("source %s: skipped %s: %s", source.pk, unit, why)
    note = ""
    if plan.failures:
        shown = "; ".join(f"{unit} ({why})" for unit, why in plan.failures[:5])
        more = f" and {len(plan.failures) - 5} more" if len(plan.failures) > 5 else ""
        note = f"Indexed {documents} of {documents + len(plan.failures)}; skipped {shown}{more}."
    note = " ".join([*plan.notes, note]).strip()  # notes first, so the cut at 2000 characters never hides them
    if plan.multi_page:
        pages += [PageRecord(url=unit, title="", error=why[:2000]) for unit, why in plan.failures]
    return WriteResult(chunks=writer.written, title=title, note=note[:2000], pages=tuple(pages),
                       first_page_title=pages[0].title if pages else "")


