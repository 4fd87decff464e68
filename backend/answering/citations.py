"""Which sources an answer cites, kept as rows (answering.Citation) next to the answer's references JSON."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from backend.answering.models import Citation, Question


def citations_from(question: Question, references: Iterable[Any]) -> list[Citation]:
    """One unsaved Citation per distinct source id in `references` (entries without an id are skipped)."""
    seen: dict[int, Citation] = {}
    for reference in references if isinstance(references, list) else []:
        source_id = reference.get("source_id") if isinstance(reference, dict) else None
        if isinstance(source_id, int) and not isinstance(source_id, bool) and source_id > 0 and source_id not in seen:
            seen[source_id] = Citation(question_id=question.pk, guru_id=question.guru_id, source_id=source_id,
                                       title=str(reference.get("title") or "")[:500], created_at=question.created_at)
    return list(seen.values())


def citations_record(question: Question, references: Iterable[Any]) -> None:
    """Replace the question's citations with those of `references`."""
    Citation.objects.filter(question_id=question.pk).delete()
    Citation.objects.bulk_create(citations_from(question, references))
