"""Scoring one evaluation question: source matching, ranks, expected facts and citation validity."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from backend.pipeline.citing import citations
from backend.pipeline.rerank_local import content_tokens, tokenize

CLAIM_SUPPORT = 0.5
"""Share of a claim's key terms its cited reference must hold for the citation to count as valid."""
_MARKER = re.compile(r"\[\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*\]")
MAX_MARKER_NUMBER = 999  # a marker holds at most three digits
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n")
_MARKUP = re.compile(r"[*_`>#]+")


@dataclass(frozen=True)
class EvalCase:
    """One question of a set, with what a right answer rests on."""

    question: str
    expected_sources: tuple[str, ...] = ()
    expected_facts: tuple[str, ...] = ()
    refusal_kind: str = ""
    category: str = ""
    history: tuple[str, ...] = ()

    @property
    def should_refuse(self) -> bool:
        return bool(self.refusal_kind)


@dataclass(frozen=True)
class Seen:
    """A context or reference as an evaluation sees it: where it is from and (for citations) its text."""

    title: str
    link: str
    text: str = ""
    note: bool = False
    """A maintainer note of the guru's memory, not a page: cited like one, but not counted among the pages."""


@dataclass(frozen=True)
class Observation:
    """What the pipeline did with one question."""

    retrieved: tuple[Seen, ...]
    """The contexts before the trust step, best first."""
    references: tuple[Seen, ...]
    """The answer's references (none when it was refused), numbered from 1."""
    refused: bool
    trust: float
    """The trust score, computed whether or not it passed the threshold (the threshold explorer replays it)."""
    answer: str = ""
    timings: Mapping[str, int] = field(default_factory=dict)
    tokens: int = 0
    cost_usd: float = 0.0
    judge: float | None = None
    """The LLM judge's groundedness in [0, 1], when one was asked."""
    error: str = ""
    """Why the pipeline failed on this question (it then counts as refused)."""
    signals: Mapping[str, float] = field(default_factory=dict)
    """What the trust score was computed from (see pipeline.support)."""


def _normal(value: str) -> str:
    cut = re.split(r"[?#]", value.strip().casefold(), maxsplit=1)[0]
    return cut.rstrip("/")


def source_matches(expected: str, seen: Seen) -> bool:
    """Whether a reference is the expected page or file: its title (with or without the " — page 3" a PDF's
    pages add), its link, or a path the link or title ends with."""
    wanted = _normal(expected)
    if not wanted:
        return False
    for candidate in (_normal(seen.link), _normal(seen.title), _normal(seen.title.split(" — ", 1)[0])):
        if candidate == wanted or candidate.endswith("/" + wanted.lstrip("/")):
            return True
    return False


def _pages(seen: Sequence[Seen]) -> list[Seen]:
    """The pages among what was seen: maintainer notes answer beside them but are no page a set can expect."""
    return [item for item in seen if not item.note]


def first_rank(expected: Sequence[str], seen: Sequence[Seen], k: int) -> int | None:
    """1-based rank of the first of the top k pages that is an expected source, or None."""
    for rank, item in enumerate(_pages(seen)[:k], start=1):
        if any(source_matches(e, item) for e in expected):
            return rank
    return None


def recall_at(expected: Sequence[str], seen: Sequence[Seen], k: int) -> float:
    """Share of the expected sources found among the top k pages."""
    if not expected:
        return 0.0
    top = _pages(seen)[:k]
    return sum(any(source_matches(e, item) for item in top) for e in expected) / len(expected)


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).casefold().split())


def facts_found(facts: Sequence[str], answer: str) -> int:
    """How many expected facts the answer states (case, whitespace and markdown emphasis ignored)."""
    plain = _plain(answer)
    return sum(1 for fact in facts if _plain(fact) and _plain(fact) in plain)


def key_terms(text: str) -> set[str]:
    return {t for t in content_tokens(tokenize(text)) if len(t) > 2 and not t.isdigit()}


def claims(answer: str) -> list[tuple[int, str]]:
    """(reference number, claim text) for every number a marker cites, where the renderers find markers (never
    in code: `args[1]` cites nothing): the sentence the marker ends, or, when that is only a label (a title
    line before an extract), the text after it up to the next marker. Any number counts, so a citation of a
    source the answer does not have is found (and invalid)."""
    found: list[tuple[int, str]] = []
    markers = citations(answer, MAX_MARKER_NUMBER)
    for i, (start, end, numbers) in enumerate(markers):
        before = _MARKER.sub(" ", _SENTENCE_BREAK.split(answer[:start])[-1])
        claim = before
        if len(key_terms(before)) < 3:
            stop = markers[i + 1][0] if i + 1 < len(markers) else len(answer)
            claim = f"{before} {answer[end:stop]}"
        found += [(number, claim) for number in numbers]
    return found


def citation_check(answer: str, references: Sequence[Seen]) -> tuple[int, int]:
    """(valid, total) citations: a valid [n] names a reference whose text holds the claim's key terms."""
    valid = total = 0
    for number, claim in claims(answer):
        total += 1
        if not 1 <= number <= len(references):
            continue
        wanted = key_terms(claim)
        held = key_terms(f"{references[number - 1].title}\n{references[number - 1].text}")
        if wanted and len(wanted & held) / len(wanted) >= CLAIM_SUPPORT:
            valid += 1
    return valid, total


@dataclass(frozen=True)
class CaseScore:
    """One question's figures; stored per run (as a dict) so later runs and the explorer can compare."""

    question: str
    category: str
    refusal_kind: str
    refused: bool
    trust: float
    hit_before: bool | None
    """An expected source among the top k before the trust step (None for questions that should be refused)."""
    rank: int | None
    recall: float | None
    facts: int
    facts_total: int
    citations_valid: int
    citations_total: int
    grounded: bool
    """Whether answering would rest on the right evidence: in scope and an expected source in hand."""
    timings: dict[str, int]
    tokens: int
    cost_usd: float
    judge: float | None
    references: list[str]
    answer: str
    error: str = ""
    signals: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_case(case: EvalCase, seen: Observation, *, k: int) -> CaseScore:
    """Score what the pipeline did with one case against what the case expects."""
    in_scope = not case.should_refuse
    hit_before = first_rank(case.expected_sources, seen.retrieved, k) is not None if in_scope else None
    rank = first_rank(case.expected_sources, seen.references, k) if in_scope and not seen.refused else None
    recall = (recall_at(case.expected_sources, seen.references, k) if not seen.refused else 0.0) if in_scope else None
    facts = facts_found(case.expected_facts, seen.answer) if in_scope and not seen.refused else 0
    valid, total = citation_check(seen.answer, seen.references) if not seen.refused else (0, 0)
    grounded = in_scope and (rank is not None if not seen.refused else bool(hit_before))
    return CaseScore(
        question=case.question, category=case.category, refusal_kind=case.refusal_kind, refused=seen.refused,
        trust=round(seen.trust, 4), hit_before=hit_before, rank=rank, recall=recall, facts=facts,
        facts_total=len(case.expected_facts) if in_scope else 0, citations_valid=valid, citations_total=total,
        grounded=grounded, timings=dict(seen.timings), tokens=seen.tokens, cost_usd=round(seen.cost_usd, 6),
        judge=seen.judge, references=[r.title or r.link for r in seen.references], answer=seen.answer[:4000],
        error=seen.error[:500], signals=dict(seen.signals))
