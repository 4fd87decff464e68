"""The tools the agentic path's model may call over one guru: search its sources (by kind), read on in a document,
see the documents linked to one, read its summary. Each returns passages the answer can cite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from backend.adapters import registry
from backend.gurus.models import Guru
from backend.pipeline.agent import ToolFailed, ToolOutput
from backend.pipeline.contexts import Context, join_chunks
from backend.pipeline.llm_types import ToolCall, ToolSpec
from backend.pipeline.types import GURU_SUMMARY_SOURCE, SourceKind
from backend.retrieval.services import retrieve
from backend.sources.models import DocumentEdge, DocumentNode
from backend.sources.summaries import collection_name
from backend.sources.summary_selectors import guru_summary

SEARCH_RESULTS = 4
READ_ON_CHUNKS = 2
NEIGHBOURS = 3
_KINDS = {"website": SourceKind.WEBSITE, "pdf": SourceKind.PDF, "video": SourceKind.YOUTUBE,
          "repository": SourceKind.GITHUB_REPO}
_PASSAGE = {"type": "integer", "minimum": 1, "description": "The number [n] of a passage already read."}
TOOLS = (
    ToolSpec("search", "Search the knowledge base's sources; returns numbered passages.", {
        "type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for, in words the sources would use."},
            "kind": {"type": "string", "enum": sorted(_KINDS), "description": "Only sources of this kind."}},
        "required": ["query"]}),
    ToolSpec("open_source", "Read on in the document a passage comes from: the text that follows it.", {
        "type": "object", "properties": {"passage": _PASSAGE}, "required": ["passage"]}),
    ToolSpec("neighbours", "The documents that the document of a passage links to, is linked from or imports.", {
        "type": "object", "properties": {"passage": _PASSAGE}, "required": ["passage"]}),
    ToolSpec("summary", "The summary of the whole knowledge base (what it covers).", {
        "type": "object", "properties": {}}),
)


class GuruTools:
    """Runs the model's calls over one guru (see pipeline.agent.ToolRunner)."""

    def __init__(self, guru: Guru, *, rerank_threshold: float) -> None:
        self.guru, self.rerank_threshold = guru, rerank_threshold
        self.collection = collection_name(guru.pk) or ""

    def __call__(self, call: ToolCall, read: Sequence[Context]) -> ToolOutput:
        runner = {"search": self._search, "open_source": self._open, "neighbours": self._neighbours,
                  "summary": self._summary}.get(call.name)
        if runner is None:
            raise ToolFailed(f"there is no tool named {call.name!r}")
        return runner(call, read)

    def _search(self, call: ToolCall, read: Sequence[Context]) -> ToolOutput:
        query = str(call.arguments.get("query") or "").strip()[:500]
        if not query:
            raise ToolFailed("search needs a query")
        kind = _KINDS.get(str(call.arguments.get("kind") or ""))
        found = retrieve(guru=self.guru, query=query, rerank_threshold=self.rerank_threshold).contexts
        return ToolOutput(contexts=tuple(c for c in found if kind is None or c.kind is kind)[:SEARCH_RESULTS])

    def _passage(self, call: ToolCall, read: Sequence[Context]) -> tuple[Context, DocumentNode]:
        number = call.arguments.get("passage")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= len(read):
            raise ToolFailed(f"there is no passage [{number}] yet")
        passage = read[number - 1]
        source_id, _, key = passage.document.partition(":")
        node = DocumentNode.objects.filter(guru=self.guru, source_id=int(source_id) if source_id.isdigit() else -1,
                                           key=key).first()
        if node is None:
            raise ToolFailed(f"passage [{number}] is not from a document that can be opened")
        return passage, node

    def _open(self, call: ToolCall, read: Sequence[Context]) -> ToolOutput:
        passage, node = self._passage(call, read)
        ids = list(node.chunk_ids)
        last = max((ids.index(c) for c in passage.chunk_ids if c in ids), default=-1)
        following = ids[last + 1 : last + 1 + READ_ON_CHUNKS]
        if not following:
            return ToolOutput(note=f"The document of passage [{call.arguments['passage']}] ends there.")
        by_id = {h.chunk_id: h.text for h in registry.vector_store().chunks(self.collection, following)}
        text = join_chunks([by_id[i] for i in following if i in by_id])
        return ToolOutput(contexts=(replace(passage, text=text, chunk_ids=tuple(following)),))

    def _neighbours(self, call: ToolCall, read: Sequence[Context]) -> ToolOutput:
        passage, node = self._passage(call, read)
        edges = DocumentEdge.objects.filter(origin=node).select_related("target")[:20]
        incoming = DocumentEdge.objects.filter(target=node).select_related("origin")[:20]
        others = [(e.target, f"{e.get_kind_display().lower()}") for e in edges] + \
                 [(e.origin, f"{e.get_kind_display().lower()} (from it)") for e in incoming]
        if not others:
            return ToolOutput(note=f"No document is connected to the one of passage [{call.arguments['passage']}].")
        note = "Connected documents: " + "; ".join(f"{n.title or n.key} — {how}" for n, how in others[:10])
        firsts = [n.chunk_ids[0] for n, _ in others[:NEIGHBOURS] if n.chunk_ids]
        hits = {h.chunk_id: h for h in registry.vector_store().chunks(self.collection, firsts)}
        contexts = tuple(Context(source_id=h.source_id, kind=h.kind, title=str(h.metadata.get("title", "")),
                                 link=str(h.metadata.get("link", "")), text=h.text, score=passage.score, locator="",
                                 chunk_ids=(h.chunk_id,), document=f"{h.source_id}:{h.metadata.get('doc_key', '')}")
                         for h in (hits.get(i) for i in firsts) if h is not None)
        return ToolOutput(contexts=contexts, note=note)

    def _summary(self, call: ToolCall, read: Sequence[Context]) -> ToolOutput:
        found = guru_summary(guru_id=self.guru.pk)
        if found is None:
            raise ToolFailed("the knowledge base has no summary yet")
        return ToolOutput(contexts=(Context(
            source_id=GURU_SUMMARY_SOURCE, kind=SourceKind.WEBSITE, title=f"Summary of {self.guru.name}",
            link=f"/g/{self.guru.slug}/summary/", text=found.text, score=1.0, locator="", summary=True,
            document="summary:guru"),))
