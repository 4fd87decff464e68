"""The source page's connections: each of its documents with the documents the source graph connects it to."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from backend.pipeline.sanitize import safe_link
from backend.sources.models import DataSource, DocumentEdge, EdgeKind, SourceGraphState

MAX_EDGES = 300
"""Connections listed on one source page; the count says when there are more."""
_OUTGOING = {EdgeKind.LINK: "links to", EdgeKind.IMPORT: "imports", EdgeKind.DUPLICATE: "same text as",
             EdgeKind.NEAR_DUPLICATE: "nearly the same text as"}
_INCOMING = {EdgeKind.LINK: "linked from", EdgeKind.IMPORT: "imported by", EdgeKind.DUPLICATE: "same text as",
             EdgeKind.NEAR_DUPLICATE: "nearly the same text as"}
_ORDER = tuple(dict.fromkeys([_OUTGOING[EdgeKind.LINK], _OUTGOING[EdgeKind.IMPORT], _INCOMING[EdgeKind.LINK],
                              _INCOMING[EdgeKind.IMPORT], *_OUTGOING.values()]))


@dataclass(frozen=True)
class Neighbour:
    """One connection as the page lists it: how, to what, and where that lives."""

    relation: str
    title: str
    link: str
    source_title: str
    """The other document's source when it is another one ("" for a document of the same source)."""
    score: float | None
    """The overlap of a near-duplicate; None for what the text states."""


@dataclass(frozen=True)
class DocumentConnections:
    title: str
    link: str
    breadcrumbs: str
    neighbours: list[Neighbour]

    @property
    def groups(self) -> list[tuple[str, list[Neighbour]]]:
        """The neighbours by relation, outgoing ones first ("links to", "imports", then "linked from", …)."""
        grouped: dict[str, list[Neighbour]] = {relation: [] for relation in _ORDER}
        for neighbour in self.neighbours:
            grouped[neighbour.relation].append(neighbour)
        return [(relation, items) for relation, items in grouped.items() if items]


@dataclass(frozen=True)
class Connections:
    documents: list[DocumentConnections]
    total: int
    built: bool
    """Whether the guru's graph has been built at all (a worker builds it after each index run)."""


def _neighbour(edge: DocumentEdge, source: DataSource, outgoing: bool) -> Neighbour:
    other = edge.target if outgoing else edge.origin
    kind = EdgeKind(edge.kind)
    score = round(edge.score, 2) if kind is EdgeKind.NEAR_DUPLICATE else None
    return Neighbour(relation=(_OUTGOING if outgoing else _INCOMING)[kind], title=other.title or other.key,
                     link=safe_link(other.link), score=score,
                     source_title="" if other.source_id == source.pk else str(other.source))


def source_connections(*, source: DataSource) -> Connections:
    """The source's documents that have connections, in path order, each with its neighbours (bounded)."""
    edges = (DocumentEdge.objects.filter(Q(origin__source=source) | Q(target__source=source), guru_id=source.guru_id)
             .select_related("origin", "target", "origin__source", "target__source")
             .order_by("origin__key", "target__key", "kind"))
    total = edges.count()
    by_document: dict[int, DocumentConnections] = {}
    for edge in edges[:MAX_EDGES]:
        for node, outgoing in ((edge.origin, True), (edge.target, False)):
            if node.source_id != source.pk:
                continue
            entry = by_document.setdefault(node.pk, DocumentConnections(
                title=node.title or node.key, link=safe_link(node.link), breadcrumbs=" › ".join(node.breadcrumbs),
                neighbours=[]))
            entry.neighbours.append(_neighbour(edge, source, outgoing))
    built = SourceGraphState.objects.filter(guru_id=source.guru_id).exists()
    return Connections(sorted(by_document.values(), key=lambda d: d.title), total, built)
