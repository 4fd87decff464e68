"""Which sources an answer cites: markers renumbered as the text streams, references split into cited and
also retrieved, and the cited sources kept as rows (answering.Citation) next to the references JSON."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from backend.answering import events
from backend.answering.citation_pages import reference_pages
from backend.answering.events import AnswerEvent, EventKind
from backend.answering.models import Citation, Question
from backend.pipeline.citing import CitationRenumberer, arranged, renumber
from backend.pipeline.contexts import Context


def references_arranged(references: list[dict[str, Any]], order: list[int]) -> list[dict[str, Any]]:
    """`references` (numbered 1..m as the answerer saw them) renumbered: those the text cites first, as
    [1]..[k] in order of first citation and marked cited, then the others in retrieval order."""
    by_number = {r.get("n"): r for r in references}
    numbers = arranged(order, len(references))
    return [{**by_number[old], "n": new, "cited": old in order} for new, old in enumerate(numbers, start=1)]


def references_marked(content: str, references: Any) -> list[dict[str, Any]]:
    """Stored references, each with its `cited` flag; answers stored before the flag existed get it from
    their text (their markers were never renumbered, so each [n] names reference n)."""
    refs = [r for r in references if isinstance(r, dict)] if isinstance(references, list) else []
    if all("cited" in r for r in refs):
        return refs
    _, order = renumber(content, len(refs))
    return [{**r, "cited": r.get("n") in order} for r in refs]


class CitedText:
    """The answer's text as it streams, its markers renumbered, and its references as the text cites them.

    Each time the text cites a source for the first time, a `references` event with the new split goes out
    before the delta that holds the marker, so a client never shows a number its list does not explain.
    """

    def __init__(self, references: list[dict[str, Any]], trust: float | None) -> None:
        self.retrieved = references
        self.trust = trust
        self._renumberer = CitationRenumberer(len(references))
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def references(self) -> list[dict[str, Any]]:
        return references_arranged(self.retrieved, self._renumberer.order)

    def feed(self, text: str, *, final: bool = False) -> Iterator[AnswerEvent]:
        cited = len(self._renumberer.order)
        out = self._renumberer.feed(text) + (self._renumberer.finish() if final else "")
        if len(self._renumberer.order) > cited:
            yield AnswerEvent(EventKind.REFERENCES, {"references": self.references, "trust_score": self.trust})
        if out:
            self._parts.append(out)
            yield events.delta(out)


def citations_from(question: Question, references: Iterable[Any]) -> list[Citation]:
    """One unsaved Citation per distinct cited source id (and page, for websites) in `references` (entries
    without an id, and references retrieved but not cited, are skipped)."""
    seen: dict[tuple[int, str], Citation] = {}
    cited = [r for r in (references if isinstance(references, list) else [])
             if isinstance(r, dict) and r.get("cited", True)]
    for reference, (page_url, page_title) in zip(cited, reference_pages(cited), strict=True):
        source_id = reference.get("source_id")
        # A website reference also names its page: a sitemap's pages are counted one by one.
        if isinstance(source_id, int) and not isinstance(source_id, bool) and source_id > 0 \
                and (source_id, page_url) not in seen:
            seen[(source_id, page_url)] = Citation(
                question_id=question.pk, guru_id=question.guru_id, source_id=source_id,
                title=str(reference.get("title") or "")[:500], page_url=page_url, page_title=page_title,
                created_at=question.created_at)
    return list(seen.values())


def citations_record(question: Question, references: Iterable[Any]) -> None:
    """Replace the question's citations with those of `references`."""
    Citation.objects.filter(question_id=question.pk).delete()
    Citation.objects.bulk_create(citations_from(question, references))


def reference_list(contexts: list[Context], private: frozenset[int]) -> list[dict[str, Any]]:
    """Numbered references, none cited yet; links of private sources are withheld."""
    return [
        {"n": n, "source_id": c.source_id, "title": c.title or c.link,
         "link": "" if c.source_id in private else c.link, "kind": c.kind.value, "score": round(c.score, 3),
         "locator": c.locator, "cited": False,
         "also_in": [{"source_id": m.source_id, "title": m.title or m.link,
                      "link": "" if m.source_id in private else m.link} for m in c.also_in],
         **({"summary": True} if c.summary else {}), **({"linked_from": c.linked_from} if c.linked_from else {})}
        for n, c in enumerate(contexts, start=1)
    ]
