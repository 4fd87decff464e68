"""Edges between a guru's documents from what the documents say: links, imports, duplicates, near-duplicates."""

from __future__ import annotations

import enum
import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from urllib.parse import unquote, urlsplit

from backend.pipeline.source_links import (
    MAX_IMPORTS_PER_FILE,
    MAX_LINKS_PER_DOCUMENT,
    MAX_TEXT_CHARS,
    PDF,
    REPOSITORY,
    YOUTUBE,
    Target,
    imported_targets,
    link_tables,
    linked_targets,
    normalise_url,
)

__all__ = [
    "MAX_IMPORTS_PER_FILE", "MAX_LINKS_PER_DOCUMENT", "MAX_POSTING", "MAX_TEXT_CHARS", "MIN_DUPLICATE_CHARS",
    "MIN_SAMPLED", "NEAR_DUPLICATE_THRESHOLD", "SAMPLE_MODULUS", "SHINGLE_WORDS", "Edge", "EdgeKind",
    "GraphDocument", "breadcrumbs", "extract_edges",
]

NEAR_DUPLICATE_THRESHOLD = 0.8
MIN_DUPLICATE_CHARS = 200  # shorter identical texts ("Page not found") are boilerplate, not a duplicate signal
SHINGLE_WORDS = 5
SAMPLE_MODULUS = 4
MIN_SAMPLED = 8
MAX_POSTING = 50  # a sampled shingle held by more documents is site boilerplate (menus, footers)

# Below 1.0: a near-duplicate is never identical, even when its sample happens to match the other's exactly.
_NEAR_SCORE_CAP = 0.999


class EdgeKind(str, enum.Enum):
    """Why one document is connected to another."""

    LINK = "link"  # the text links to the other document (URL, relative link, RST :doc:/:ref:)
    IMPORT = "import"  # a code file imports another file of the same repository
    DUPLICATE = "duplicate"  # same text after whitespace and case normalisation
    NEAR_DUPLICATE = "near_duplicate"  # Jaccard of sampled word 5-gram shingles at or above the threshold


@dataclass(frozen=True)
class GraphDocument:
    """One indexed document: `key` identifies it inside its source (URL, file path, "page-3", video id)."""

    source_id: int
    key: str
    title: str
    link: str  # where a citation points ("" for local repositories; PDF pages end in "#page=N")
    text: str
    kind: str  # "website", "github_repo", "pdf", "youtube"; anything else is read like a website


@dataclass(frozen=True)
class Edge:
    """A directed edge from (source_id, key) to (target_source_id, target_key)."""

    source_id: int
    key: str
    target_source_id: int
    target_key: str
    kind: EdgeKind
    score: float  # 1.0 except for NEAR_DUPLICATE, where it is the Jaccard estimate


def extract_edges(documents: Sequence[GraphDocument], *,
                  near_threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[Edge]:
    """Every edge between the documents, one per (from, to, kind), no self edge, sorted.

    Duplicate and near-duplicate edges appear once per pair, from the document that sorts first by
    (source_id, key). A document listed twice under the same (source_id, key) counts once (the first).
    """
    if not 0.0 < near_threshold <= 1.0:
        raise ValueError(f"near_threshold must be within (0, 1], got {near_threshold}")
    unique = sorted({(d.source_id, d.key): d for d in reversed(documents)}.values(), key=_position)
    edges: dict[tuple[int, str, int, str, EdgeKind], Edge] = {}
    tables = link_tables(unique)
    for document in unique:
        _add(edges, document, linked_targets(document, tables), EdgeKind.LINK)
        _add(edges, document, imported_targets(document, tables), EdgeKind.IMPORT)
    normals = [_normalised(document.text) for document in unique]
    digests = [hashlib.sha256(normal.encode()).hexdigest() for normal in normals]
    for first, second in _duplicate_pairs(normals, digests):
        edges[_edge_key(unique[first], unique[second], EdgeKind.DUPLICATE)] = _pair_edge(
            unique[first], unique[second], EdgeKind.DUPLICATE, 1.0)
    for (first, second), score in _near_duplicate_pairs(normals, digests, near_threshold):
        edges[_edge_key(unique[first], unique[second], EdgeKind.NEAR_DUPLICATE)] = _pair_edge(
            unique[first], unique[second], EdgeKind.NEAR_DUPLICATE, score)
    return sorted(edges.values(), key=_edge_order)


def _position(document: GraphDocument) -> tuple[int, str]:
    return document.source_id, document.key


def _edge_order(edge: Edge) -> tuple[int, str, int, str, str]:
    return edge.source_id, edge.key, edge.target_source_id, edge.target_key, edge.kind.value


def _edge_key(first: GraphDocument, second: GraphDocument, kind: EdgeKind) -> tuple[int, str, int, str, EdgeKind]:
    return first.source_id, first.key, second.source_id, second.key, kind


def _pair_edge(first: GraphDocument, second: GraphDocument, kind: EdgeKind, score: float) -> Edge:
    return Edge(source_id=first.source_id, key=first.key, target_source_id=second.source_id,
                target_key=second.key, kind=kind, score=score)


def _add(edges: dict[tuple[int, str, int, str, EdgeKind], Edge], document: GraphDocument,
         targets: Iterable[Target], kind: EdgeKind) -> None:
    for source_id, key in targets:
        if (source_id, key) != _position(document):
            edges[(document.source_id, document.key, source_id, key, kind)] = Edge(
                source_id=document.source_id, key=document.key, target_source_id=source_id, target_key=key,
                kind=kind, score=1.0)


def _normalised(text: str) -> str:
    return " ".join(text.casefold().split())


def _duplicate_pairs(normals: Sequence[str], digests: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (first sorts first) with the same normalised text of at least MIN_DUPLICATE_CHARS.

    A group larger than MAX_POSTING (one error page served at a thousand URLs) is joined as a star from its
    first document, so the edges stay linear in the group's size instead of quadratic.
    """
    groups: dict[str, list[int]] = defaultdict(list)
    for index, (normal, digest) in enumerate(zip(normals, digests, strict=True)):
        if len(normal) >= MIN_DUPLICATE_CHARS:
            groups[digest].append(index)
    pairs: list[tuple[int, int]] = []
    for members in groups.values():
        if len(members) > MAX_POSTING:
            pairs.extend((members[0], other) for other in members[1:])
        else:
            pairs.extend(combinations(members, 2))
    return pairs


def _sampled_shingles(normal: str) -> frozenset[int]:
    """Hashes of the word 5-grams that fall in the sample (hash % SAMPLE_MODULUS == 0); stable across runs."""
    words = normal[:MAX_TEXT_CHARS].split()
    sample: set[int] = set()
    for start in range(len(words) - SHINGLE_WORDS + 1):
        shingle = " ".join(words[start : start + SHINGLE_WORDS]).encode()
        value = int.from_bytes(hashlib.blake2b(shingle, digest_size=8).digest(), "big")
        if value % SAMPLE_MODULUS == 0:
            sample.add(value)
    return frozenset(sample)


def _near_duplicate_pairs(normals: Sequence[str], digests: Sequence[str],
                          threshold: float) -> list[tuple[tuple[int, int], float]]:
    """Index pairs whose sampled shingle sets overlap at least `threshold` (Jaccard), identical texts excepted.

    Candidates come from an inverted index (sample -> documents), so unrelated documents are never compared.
    Samples held by more than MAX_POSTING documents are boilerplate: they are left out of the counts and of
    the Jaccard itself, so pages that share only a site's menu and footer do not look alike.
    """
    postings: dict[int, list[int]] = defaultdict(list)
    kept: Counter[int] = Counter()  # sampled shingles per document, boilerplate taken off below
    for index, normal in enumerate(normals):
        sample = _sampled_shingles(normal)
        if len(sample) >= MIN_SAMPLED:
            kept[index] = len(sample)
            for value in sample:
                postings[value].append(index)
    shared: Counter[tuple[int, int]] = Counter()
    for holders in postings.values():
        if len(holders) > MAX_POSTING:
            kept.subtract(holders)
        elif len(holders) > 1:
            shared.update(combinations(holders, 2))  # holders ascend, so each pair is (first, second)
    pairs: list[tuple[tuple[int, int], float]] = []
    for (first, second), count in shared.items():
        if digests[first] == digests[second] or min(kept[first], kept[second]) < MIN_SAMPLED:
            continue
        jaccard = count / (kept[first] + kept[second] - count)
        if jaccard >= threshold:
            pairs.append(((first, second), min(round(jaccard, 3), _NEAR_SCORE_CAP)))
    return pairs


def breadcrumbs(document: GraphDocument) -> tuple[str, ...]:
    """The document's place: a repository file's directories, a web page's URL directories, () for PDFs, videos."""
    if document.kind in (PDF, YOUTUBE):
        return ()
    if document.kind == REPOSITORY:
        return tuple(part for part in document.key.split("/")[:-1] if part not in ("", "."))
    # Normalised like link matching, so "/guide/install/" and "/guide/install" sit in the same place.
    normal = next((n for address in (document.key, document.link) if (n := normalise_url(address))), "")
    segments = urlsplit(normal).path.split("/")[1:-1]
    return tuple(unquote(segment) for segment in segments if segment)
