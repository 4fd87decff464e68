"""Evaluation sets: JSONL import and export, items seeded from real questions, and the cases a run asks."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from backend.answering.models import AnswerState, Question
from backend.core.errors import RequestError
from backend.evaluation.models import MAX_ITEMS, MAX_QUESTION_CHARS, EvalItem, EvalSet, RefusalKind
from backend.gurus.models import Guru
from backend.pipeline.evaluation import EvalCase

MAX_LIST = 20
MAX_ENTRY_CHARS = 300
MAX_FILE_BYTES = 2_000_000
KNOWN_KEYS = frozenset({"question", "expected_sources", "expected_facts", "refusal_kind", "category", "history"})
"""Other keys (notes, a benchmark's own labels) are ignored, so one file can carry more than the product reads."""


class SetFileError(RequestError):
    """A JSONL evaluation set that cannot be read; the message names the line."""

    def __init__(self, msg: str) -> None:
        super().__init__(400, "invalid_eval_set", msg)


def _strings(value: Any, field: str, line: int) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SetFileError(f"Line {line}: '{field}' must be a list of strings.")
    cleaned = [v.strip() for v in value if v.strip()]
    if len(cleaned) > MAX_LIST or any(len(v) > MAX_ENTRY_CHARS for v in cleaned):
        raise SetFileError(f"Line {line}: '{field}' takes at most {MAX_LIST} entries of {MAX_ENTRY_CHARS} characters.")
    return cleaned


def _refusal(value: Any, line: int) -> str:
    kind = "" if value in (None, False) else ("unrelated" if value is True else str(value).replace("-", "_"))
    if kind not in RefusalKind.values:
        allowed = ", ".join(repr(v) for v in RefusalKind.values)
        raise SetFileError(f"Line {line}: 'refusal_kind' must be one of {allowed}.")
    return kind


def case_from_json(data: Any, line: int) -> EvalCase:
    """One JSONL object as a case; `should_refuse: true` is accepted for `refusal_kind: "unrelated"`."""
    if not isinstance(data, dict):
        raise SetFileError(f"Line {line}: expected a JSON object.")
    question = data.get("question")
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION_CHARS:
        raise SetFileError(f"Line {line}: 'question' must be text of 1 to {MAX_QUESTION_CHARS} characters.")
    refusal = _refusal(data.get("refusal_kind", data.get("should_refuse")), line)
    category = data.get("category", "")
    if not isinstance(category, str) or len(category) > 40:
        raise SetFileError(f"Line {line}: 'category' must be text of at most 40 characters.")
    case = EvalCase(question=question.strip(), expected_sources=tuple(_strings(data.get("expected_sources"),
                                                                             "expected_sources", line)),
                    expected_facts=tuple(_strings(data.get("expected_facts"), "expected_facts", line)),
                    refusal_kind=refusal, category=category.strip(),
                    history=tuple(_strings(data.get("history"), "history", line)))
    if refusal and (case.expected_sources or case.expected_facts):
        raise SetFileError(f"Line {line}: a question that should be refused has no expected sources or facts.")
    return case


def parse_jsonl(text: str) -> list[EvalCase]:
    """Cases of a JSONL file (blank lines and lines starting with // skipped), bounded in size and count."""
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise SetFileError(f"The file is larger than {MAX_FILE_BYTES // 1_000_000} MB.")
    cases: list[EvalCase] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SetFileError(f"Line {number}: not valid JSON ({exc.msg}).") from exc
        cases.append(case_from_json(data, number))
        if len(cases) > MAX_ITEMS:
            raise SetFileError(f"A set holds at most {MAX_ITEMS} questions.")
    if not cases:
        raise SetFileError("The file holds no questions.")
    return cases


def case_of(item: EvalItem) -> EvalCase:
    return EvalCase(question=item.question, expected_sources=tuple(item.expected_sources),
                    expected_facts=tuple(item.expected_facts), refusal_kind=item.refusal_kind,
                    category=item.category, history=tuple(item.history))


def set_cases(eval_set: EvalSet) -> list[EvalCase]:
    return [case_of(item) for item in eval_set.items.all()]


def case_json(case: EvalCase) -> dict[str, Any]:
    return {"question": case.question, "expected_sources": list(case.expected_sources),
            "expected_facts": list(case.expected_facts), "refusal_kind": case.refusal_kind,
            "category": case.category, "history": list(case.history)}


def set_export(eval_set: EvalSet) -> str:
    """The set as JSONL, one question per line, in the set's order; `set_import` reads it back unchanged."""
    return "".join(json.dumps(case_json(case), ensure_ascii=False) + "\n" for case in set_cases(eval_set))


def _item(eval_set: EvalSet, position: int, case: EvalCase, question: Question | None = None) -> EvalItem:
    return EvalItem(eval_set=eval_set, position=position, question=case.question,
                    expected_sources=list(case.expected_sources), expected_facts=list(case.expected_facts),
                    refusal_kind=case.refusal_kind, category=case.category, history=list(case.history),
                    from_question=question)


@dataclass(frozen=True)
class Imported:
    """What an import did to its set."""

    eval_set: EvalSet
    added: int
    skipped: int
    """Questions left out because the set (or the file, earlier) already asks them with the same history."""


def _key(question: str, history: Sequence[str]) -> tuple[str, ...]:
    """What makes two items the same question: its words, whatever the case or spacing, after the same history."""
    return tuple(" ".join(text.casefold().split()) for text in (question, *history))


def _new(eval_set: EvalSet, items: Iterable[tuple[EvalCase, Question | None]]) -> list[EvalItem]:
    """Items for the cases the set does not ask yet, numbered after its last one."""
    existing = list(eval_set.items.values_list("question", "history"))
    seen, start, fresh = {_key(q, h) for q, h in existing}, len(existing), list[EvalItem]()
    for case, question in items:
        key = _key(case.question, case.history)
        if key not in seen:
            seen.add(key)
            fresh.append(_item(eval_set, start + len(fresh), case, question))
    if start + len(fresh) > MAX_ITEMS:
        raise SetFileError(f"A set holds at most {MAX_ITEMS} questions; this one has {start}.")
    return fresh


def set_import(guru: Guru, name: str, cases: Sequence[EvalCase], *, replace: bool = False) -> Imported:
    """Create the set `name` from cases, or add to it the ones it does not ask yet (replace=True empties it
    first)."""
    name = name.strip()[:100] or "default"
    with transaction.atomic():
        eval_set, _ = EvalSet.objects.select_for_update().get_or_create(guru=guru, name=name)
        if replace:
            eval_set.items.all().delete()
        fresh = _new(eval_set, ((case, None) for case in cases))
        EvalItem.objects.bulk_create(fresh)
        eval_set.save(update_fields=["updated_at"])
    return Imported(eval_set, len(fresh), len(cases) - len(fresh))


def _reference_key(reference: dict[str, Any]) -> str:
    """What identifies a cited page for matching later: its link, else its title."""
    return str(reference.get("link") or reference.get("title") or "")[:MAX_ENTRY_CHARS]


def seed_case(question: Question) -> EvalCase:
    """A draft case from a real question: the sources its answer cited are the expected ones (to be checked)."""
    references: Iterable[dict[str, Any]] = question.references or []
    cited = [r for r in references if r.get("cited")] or list(question.references or [])
    keys = list(dict.fromkeys(k for k in (_reference_key(r) for r in cited if not r.get("summary")) if k))
    return EvalCase(question=question.user_question.strip()[:MAX_QUESTION_CHARS] or question.question,
                    expected_sources=tuple(keys[:MAX_LIST]))


def set_add_questions(eval_set: EvalSet, question_ids: Sequence[int]) -> tuple[int, int]:
    """Add the guru's answered questions the set does not ask yet as draft items: how many were added, and how
    many it asks already."""
    questions = list(Question.objects.filter(guru_id=eval_set.guru_id, pk__in=list(question_ids),
                                             state=AnswerState.COMPLETE).order_by("created_at"))
    with transaction.atomic():
        EvalSet.objects.select_for_update().filter(pk=eval_set.pk).first()  # two maintainers ticking at once
        fresh = _new(eval_set, ((seed_case(q), q) for q in questions))
        EvalItem.objects.bulk_create(fresh)
        eval_set.save(update_fields=["updated_at"])
    return len(fresh), len(questions) - len(fresh)
