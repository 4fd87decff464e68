"""The recursive summary tree: pieces of a text, summarised, then merged layer by layer into one summary.

Pure: the caller gives the summariser, the nodes it already has (by content hash) and a token budget, and
stores what comes out. Groups have a fixed fan-in, so the tree's shape follows from the number of pieces
alone: its progress total is known up front, and an edit that changes one piece changes only that piece's
node and the path above it (every other node's hash, and so its summary, is re-used).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from backend.pipeline.llm_types import Completion

TREE_VERSION = "1"
"""Part of every hash: bump it when prompts or splitting change, so old summaries are rebuilt."""
JOINER = "\n\n"
DOCUMENT_BREAK = "\n\n\n"
CHARS_PER_TOKEN = 4
_SENTENCE_END = re.compile(r"[.!?…](?=\s|$)")

Summarise = Callable[[Sequence[str], int], Completion]
"""(texts, max_chars) → the summary; the LLM's or the extractive summariser's."""


@dataclass(frozen=True)
class TreeConfig:
    """Sizes in characters (SUMMARIZATION_MAX_LENGTH, _OVERLAP_LENGTH, _MIN_LENGTH and the summary's own)."""

    max_length: int
    overlap: int
    min_length: int
    summary_length: int
    fingerprint: str = ""
    """Who summarises (the model id): a different model writes different summaries, so hashes differ."""

    def __post_init__(self) -> None:
        if not (0 <= self.overlap < self.max_length // 2 and 0 <= self.min_length < self.max_length
                and 0 < self.summary_length * 2 + len(JOINER) <= self.max_length):
            raise ValueError(f"unusable summary sizes: {self}")

    @property
    def fan_in(self) -> int:
        """How many summaries one merge reads: as many as fit under max_length (at least two)."""
        return max(2, (self.max_length + len(JOINER)) // (self.summary_length + len(JOINER)))


def split_pieces(documents: Sequence[str], config: TreeConfig) -> list[str]:
    """The text in pieces below max_length (documents kept whole where they fit); a short tail joins the one before."""
    text = DOCUMENT_BREAK.join(d.strip() for d in documents if d.strip())
    if not text:
        return []
    # Imported here: langchain costs every process that loads the project 0.3 s at start (see chunking.py).
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=config.max_length, chunk_overlap=config.overlap, add_start_index=True, strip_whitespace=True,
        separators=[DOCUMENT_BREAK, "\n\n", "\n", ". ", " ", ""],
    )
    parts = splitter.create_documents([text])
    pieces = [p.page_content for p in parts]
    if len(parts) > 1 and len(pieces[-1]) < config.min_length:
        # The tail is merged from the original text, so its overlap with the piece before is not repeated.
        start = int(parts[-2].metadata["start_index"])
        pieces[-2:] = [text[start:].strip()]
    return pieces


def node_hash(config: TreeConfig, *, level: int, inputs: Sequence[str]) -> str:
    """A leaf hashes its text; a merge hashes its children's hashes (so equal subtrees are recognised)."""
    digest = hashlib.sha256(f"{TREE_VERSION}|{config.summary_length}|{config.fingerprint}|{level}".encode())
    for item in inputs:
        digest.update(b"\x00" + item.encode())
    return digest.hexdigest()


def clip(text: str, max_chars: int) -> str:
    """At most max_chars, cut after the last whole sentence that fits (a summariser may overrun its limit)."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    return head[: ends[-1]] if ends and ends[-1] > max_chars // 2 else head.rsplit(" ", 1)[0]


def merge_groups(count: int, fan_in: int) -> list[range]:
    """How a layer of `count` nodes is merged: full groups of fan_in, the remainder carried up alone (a range
    of one), or all of them at once when they fit. Every merge but the last is full, so the tree makes the
    fewest calls any tree of fan_in-sized merges can: ceil((pieces - 1) / (fan_in - 1)) merges."""
    if count <= fan_in:
        return [range(count)]
    full = count // fan_in * fan_in
    return [range(i, i + fan_in) for i in range(0, full, fan_in)] + [range(i, i + 1) for i in range(full, count)]


def tree_size(pieces: int, fan_in: int) -> int:
    """Nodes a tree over `pieces` holds, which is also the calls it takes to build it from nothing."""
    total, layer = pieces, pieces
    while layer > 1:
        groups = merge_groups(layer, fan_in)
        total += sum(1 for g in groups if len(g) > 1)
        layer = len(groups)
    return total


@dataclass
class Node:
    """One node: a new summary, or one re-used because a node with its hash already existed."""

    level: int
    position: int
    content_hash: str
    text: str
    children: tuple[Node, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    reused: bool = False
    key: int | None = None
    """The caller's id once stored."""

    @property
    def stored_id(self) -> int:
        """The id the caller stored it under (every node of a finished run has one)."""
        if self.key is None:
            raise ValueError(f"node {self.content_hash[:12]} was never stored")
        return self.key


Spec = tuple[int, int, str, tuple[str, ...], tuple[Node, ...]]
"""(level, position, content hash, texts to summarise, children) of one node to make."""


@dataclass
class TokenBudget:
    """Tokens left to spend; a call is started only when its estimate fits."""

    limit: int
    used: int = 0

    def fits(self, texts: Sequence[str], max_chars: int) -> bool:
        estimate = (sum(len(t) for t in texts) + max_chars) // CHARS_PER_TOKEN
        return self.used + estimate <= self.limit

    def spend(self, tokens: int) -> None:
        self.used += tokens


@dataclass
class TreeRun:
    """What one build produced: the nodes by layer, and whether the top was reached within the budget."""

    layers: list[list[Node]] = field(default_factory=list)
    complete: bool = True
    calls: int = 0

    @property
    def root(self) -> Node | None:
        return self.layers[-1][0] if self.complete and self.layers and len(self.layers[-1]) == 1 else None

    def nodes(self) -> list[Node]:
        seen: dict[int, Node] = {}
        for layer in self.layers:
            for node in layer:
                seen.setdefault(id(node), node)
        return list(seen.values())


@dataclass
class TreeBuilder:
    """Builds one tree. `known` maps a content hash to a stored node; `stored` is told of every new node."""

    config: TreeConfig
    summarise: Summarise
    known: Callable[[str], Node | None]
    stored: Callable[[Node], None]
    budget: TokenBudget
    progress: Callable[[int], None] = lambda step: None
    workers: int = 4

    def leaves(self, pieces: Sequence[str]) -> TreeRun:
        """Summarise pieces of raw text (level 0), then merge up to one node."""
        specs: list[Spec] = [(0, i, node_hash(self.config, level=0, inputs=[p]), (p,), ())
                             for i, p in enumerate(pieces)]
        run = TreeRun()
        first = self._layer(specs, run)
        return self._merge_up(first, run)

    def above(self, tops: Sequence[Node]) -> TreeRun:
        """Merge existing summaries (each source's top) up to one node; nothing is re-summarised at level 0."""
        return self._merge_up(list(tops), TreeRun())

    def _merge_up(self, layer: list[Node], run: TreeRun) -> TreeRun:
        if layer:
            run.layers.append(layer)
        while run.complete and len(layer) > 1:
            groups = [tuple(layer[i] for i in group) for group in merge_groups(len(layer), self.config.fan_in)]
            specs: list[Spec] = [(max(c.level for c in g) + 1, i,
                      node_hash(self.config, level=max(c.level for c in g) + 1, inputs=[c.content_hash for c in g]),
                      tuple(c.text for c in g), g) for i, g in enumerate(groups) if len(g) > 1]
            made = iter(self._layer(specs, run))
            if not run.complete:
                run.layers.append(list(made))  # the merges the budget allowed, searchable although partial
                break
            # A node carried up alone is kept as it is: summarising one summary again adds nothing.
            layer = [next(made) if len(g) > 1 else g[0] for g in groups]
            run.layers.append(layer)
        return run

    def _layer(self, specs: list[Spec], run: TreeRun) -> list[Node]:
        """Nodes for the specs, in order: known ones re-used, the rest summarised in parallel within the budget."""
        nodes: list[Node | None] = []
        todo: list[int] = []
        for level, position, digest, _, children in specs:
            found = self.known(digest)
            if found is not None:
                found.level, found.position, found.children, found.reused = level, position, children, True
                self.progress(1)
            else:
                todo.append(len(nodes))
            nodes.append(found)
        allowed = self._within_budget([specs[i][3] for i in todo])
        if allowed < len(todo):
            run.complete = False
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as pool:
            chunk = todo[:allowed]
            for index, completion in zip(chunk, pool.map(lambda i: self._call(specs[i][3]), chunk), strict=True):
                level, position, digest, _, children = specs[index]
                node = Node(level=level, position=position, content_hash=digest,
                            text=clip(completion.text, self.config.summary_length), children=children,
                            prompt_tokens=completion.usage.prompt_tokens,
                            completion_tokens=completion.usage.completion_tokens, model=completion.usage.model)
                run.calls += 1
                self.budget.spend(node.prompt_tokens + node.completion_tokens)
                self.stored(node)
                self.progress(1)
                nodes[index] = node
        return [n for n in nodes if n is not None]

    def _within_budget(self, inputs: list[tuple[str, ...]]) -> int:
        """How many of the calls, in order, the budget allows on their estimates."""
        projected = TokenBudget(self.budget.limit, self.budget.used)
        for count, texts in enumerate(inputs):
            if not projected.fits(texts, self.config.summary_length):
                return count
            projected.spend((sum(len(t) for t in texts) + self.config.summary_length) // CHARS_PER_TOKEN)
        return len(inputs)

    def _call(self, texts: tuple[str, ...]) -> Completion:
        return self.summarise(texts, self.config.summary_length)
