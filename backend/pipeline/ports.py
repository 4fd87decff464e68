"""Protocols the adapters implement; the pipeline and services depend only on these."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol

from backend.pipeline.answer_types import AnswerRequest, Grade, GradeInput, Understanding, UnderstandRequest
from backend.pipeline.budget import IngestBudget
from backend.pipeline.ingest_types import Document, FetchedPage, PlaylistVideos, RepoSnapshot, Transcript
from backend.pipeline.llm_types import (
    CancelToken,
    Completion,
    Flow,
    JsonCompletion,
    Message,
    Passage,
    RerankResult,
    StreamEvent,
    ToolMessage,
    ToolSpec,
    ToolTurn,
    Usage,
)
from backend.pipeline.types import Chunk, CollectionInfo, Hit, HybridHit


class Embedder(Protocol):
    """Turns text into dense vectors of a fixed dimension."""

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    @property
    def max_input_tokens(self) -> int:
        """Word pieces read per text; the rest is silently truncated by the model."""
        ...

    def count_tokens(self, text: str) -> int:
        """Input tokens the text takes (special tokens excluded); an upper estimate where not exact."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed passages in batches; one unit-length vector per text, same order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        ...


class VectorStore(Protocol):
    """One collection per guru holding chunks with dense + BM25 indexes.

    Errors: VectorStoreError (a TransientServiceError: the store is unreachable or failed a call),
    PermanentServiceError (a request that can never succeed). Searches of a collection the store
    holds released (after a restart of Milvus Lite) load it and retry instead of failing.
    """

    def ensure_collection(self, name: str, *, dimension: int) -> None:
        """Create the collection if missing; raise DimensionMismatchError if it exists with another dim.

        Idempotent.
        """
        ...

    def rename_collection(self, old: str, new: str) -> None:
        """Rename old to new and leave it loaded. Idempotent: done if only `new` exists."""
        ...

    def drop_collection(self, name: str) -> None:
        """Drop the collection and its data. Idempotent."""
        ...

    def collection_info(self, name: str) -> CollectionInfo | None:
        """Dimension, row count and load state, or None when the collection does not exist."""
        ...

    def list_collections(self) -> list[str]:
        """Names of all collections in the store."""
        ...

    def unloaded_collections(self, *, prefix: str = "") -> list[str]:
        """Names (starting with `prefix`) of collections that exist but are not loaded: searches need a load."""
        ...

    def upsert(self, name: str, chunks: Sequence[Chunk]) -> None:
        """Insert or replace chunks by id (dense vector and BM25 text written together)."""
        ...

    def delete_where(
        self, name: str, *, source_id: int, generation_lt: int | None = None, generation: int | None = None
    ) -> None:
        """Delete a source's chunks: all (summary rows too), those older than `generation_lt` (never summary
        rows: their generation is SUMMARY_GENERATION), or those of one `generation`."""
        ...

    def delete_ids(self, name: str, ids: Sequence[str]) -> None:
        """Delete chunks by id (missing ids are ignored)."""
        ...

    def scan(self, name: str, *, batch_size: int = 1000) -> Iterator[list[Chunk]]:
        """Every chunk of the collection with its stored vector, in batches of at most `batch_size`.

        For exports and backups: memory stays bounded by one batch whatever the collection's size.
        """
        ...

    def source_chunks(
        self, name: str, *, source_id: int, generation: int, limit: int, contains: str = ""
    ) -> list[Hit]:
        """At most `limit` chunks of one source's generation (text and metadata, no vector, score 0), unordered.

        With `contains`, only chunks whose text contains it literally (case-sensitive; no wildcards). For
        the dashboard's view of what a source indexed: memory is bounded by `limit`, not by the source.
        """
        ...

    def chunks(self, name: str, ids: Sequence[str]) -> list[Hit]:
        """The chunks with these ids that exist (text and metadata, no vector, score 0), in no particular order."""
        ...

    def chunk_vectors(self, name: str, ids: Sequence[str]) -> list[HybridHit]:
        """The chunks with these ids that exist, with their stored vectors (no leg ranks), in no particular order:
        what the reranker needs to grade chunks reached by id rather than by a search."""
        ...

    def search_hybrid(
        self, name: str, *, query_text: str, query_vector: Sequence[float], top_k: int, candidates: int = 50,
        live: Mapping[int, int] | None = None, summaries: Collection[int] = (),
    ) -> list[HybridHit]:
        """Dense (cosine) and BM25 (on `text`) searches of `candidates` each, fused by reciprocal rank.

        Returns at most top_k hits, best first, each with its stored vector (for reranking without
        re-embedding) and its rank in each leg (None when that leg did not find it). With `live`
        (source id -> generation), both searches see only those sources' chunks of that generation,
        so other generations never take a candidate slot; an empty mapping finds nothing but the
        summary rows (generation SUMMARY_GENERATION) of the source ids in `summaries`, which are searched too.
        """
        ...

    def search_dense(
        self, name: str, vector: Sequence[float], *, top_k: int, source_ids: Sequence[int] | None = None,
        live: Mapping[int, int] | None = None,
    ) -> list[Hit]:
        """Nearest chunks by cosine similarity, optionally restricted to some sources / live generations."""
        ...


class ChatModel(Protocol):
    """A chat LLM. Adapters retry 429/5xx with backoff, time out, and record usage.

    Errors: TransientServiceError (retry later), PermanentServiceError (bad key, unknown model).
    """

    @property
    def model(self) -> str:
        """The provider's model id."""
        ...

    def complete(self, messages: Sequence[Message], *, max_tokens: int, flow: Flow) -> Completion:
        """One whole answer."""
        ...

    def complete_json(
        self, messages: Sequence[Message], *, schema: dict[str, Any], schema_name: str, max_tokens: int, flow: Flow
    ) -> JsonCompletion:
        """An object matching the JSON schema (provider structured output where available)."""
        ...

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int, flow: Flow, cancel: CancelToken | None = None
    ) -> Iterator[StreamEvent]:
        """TextDelta events, then one Usage. Stops early (and closes the connection) once `cancel` is set."""
        ...

    def complete_tools(self, messages: Sequence[ToolMessage], tools: Sequence[ToolSpec], *, max_tokens: int,
                       flow: Flow) -> ToolTurn:
        """One step of a conversation with tools: the model's text and the calls it makes (none when it is done).
        Results go back as ToolMessage(Role.TOOL, content, call_id=…, name=…) after the assistant turn that
        made the calls (ToolMessage(Role.ASSISTANT, text, calls=…))."""
        ...

    def available_models(self) -> list[str]:
        """Model ids this provider offers for chat; raises TransientServiceError/PermanentServiceError like other calls.

        Bounded (at most MAX_MODEL_IDS ids) and quicker to give up than answers, as a settings page waits for it.
        """
        ...


class Reranker(Protocol):
    """Scores passages against a query; must not embed passages at query time."""

    @property
    def name(self) -> str:
        """What produced the scores, for telemetry (e.g. "local-fusion", "tei:bge-reranker-base")."""
        ...

    def rerank(
        self,
        query: str,
        passages: Sequence[Passage],
        *,
        query_vector: Sequence[float] | None = None,
        top_k: int | None = None,
    ) -> list[RerankResult]:
        """Results sorted by descending score in [0, 1]; at most top_k of them."""
        ...


class Answerer(Protocol):
    """The task-level model calls the answer pipeline makes; an LLM or the offline extractive answerer."""

    @property
    def uses_llm(self) -> bool:
        """False for the offline answerer, which never pretends to be a language model."""
        ...

    def understand(self, request: UnderstandRequest) -> tuple[Understanding, Usage | None]:
        """Validate, prettify and classify a question; rewrite a retrieval query from the history."""
        ...

    def grade(self, question: str, contexts: Sequence[GradeInput]) -> tuple[list[Grade], Usage | None]:
        """Relevance 0–1 of each context to the question, keyed by context id (one batched call)."""
        ...

    def answer(self, request: AnswerRequest, *, cancel: CancelToken | None = None) -> Iterator[StreamEvent]:
        """Stream the cited answer: TextDelta events, then one Usage."""
        ...

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> Completion:
        """A summary of the texts no longer than max_chars."""
        ...


class PageFetcher(Protocol):
    """Fetches one web page as markdown (built-in HTTP fetcher or Firecrawl)."""

    def fetch(self, url: str) -> FetchedPage:
        """The page; PermanentServiceError for 4xx / blocked / not HTML, Transient for 5xx / timeouts."""
        ...


class TranscriptFetcher(Protocol):
    """YouTube captions and playlist expansion."""

    def transcript(self, video_id: str, *, languages: Sequence[str] = ("en",)) -> Transcript:
        """Captions of one video; PermanentServiceError when private, missing or without captions."""
        ...

    def playlist(self, playlist_id: str) -> PlaylistVideos:
        """The videos of a public playlist, in order, up to the fetcher's limit, and whether some were left out.

        PermanentServiceError when the playlist is private, empty or missing; TransientServiceError when YouTube
        cannot be reached or fails (also while listing the videos after the first page), so a retry lists it all.
        """
        ...

    def playlist_video_ids(self, playlist_id: str) -> list[str]:
        """`playlist(playlist_id).video_ids` as a list; a truncation is only logged."""
        ...


class PdfExtractor(Protocol):
    """Text of a PDF file, one document per page."""

    def extract(self, path: str, *, title: str, link: str, budget: IngestBudget | None = None) -> list[Document]:
        """PermanentServiceError for encrypted, empty, image-only or malformed files; BudgetExceeded (a
        PermanentServiceError) as soon as the text read passes the budget's bound, mid-page if need be."""
        ...


class RepoReader(Protocol):
    """A git repository checked out locally (shallow), with the files worth indexing."""

    def snapshot(self, url: str, *, branch: str = "", token: str = "", include: Sequence[str] = (),
                 exclude: Sequence[str] = (), workdir: str) -> RepoSnapshot:
        """Clone or update into workdir and list files (blob sha, size) after filtering."""
        ...

    def read(self, snapshot: RepoSnapshot, path: str) -> str:
        """A file's text (UTF-8, undecodable bytes replaced)."""
        ...

    def check(self, url: str, *, branch: str = "", token: str = "") -> str:
        """Quickly confirm the remote is allowed and answers (the branch that would be indexed); raise otherwise."""
        ...
