"""Overview tab writes about the guru's summary: its token budget, and approving a drafted suggestion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from backend.core.errors import AppError
from backend.gurus.examples import InvalidExample, example_text_clean, guru_example_add
from backend.gurus.models import MAX_EXAMPLES, ExampleQuestion, Guru
from backend.gurus.services import guru_update

# The column is a PositiveIntegerField: 32-bit on every database Django supports.
MAX_SUMMARY_BUDGET = 2_147_483_647
MAX_DOMAIN_KNOWLEDGE = Guru._meta.get_field("domain_knowledge").max_length or 500


class InvalidBudget(AppError):
    code = "invalid_budget"


class InvalidSuggestion(AppError):
    code = "invalid_suggestion"


def guru_summary_budget_set(*, guru: Guru, budget: int | None) -> Guru:
    """Set the guru's own summary token budget; None goes back to the instance default. Raises InvalidBudget."""
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise InvalidBudget("The token budget must be a whole number.")
    if budget is not None and not 0 <= budget <= MAX_SUMMARY_BUDGET:
        raise InvalidBudget(f"The token budget must be between 0 and {MAX_SUMMARY_BUDGET:,} tokens.")
    guru.summary_token_budget = budget
    # Only this column: the worker updates the spend and the note of the same row meanwhile.
    guru.save(update_fields=["summary_token_budget", "updated_at"])
    return guru


@dataclass(frozen=True)
class ApprovalReport:
    """What approving a suggestion changed."""

    domain_knowledge_saved: bool
    added: tuple[str, ...]
    already_there: tuple[str, ...]
    """Ticked questions the guru already had as examples: kept once, where they were (and approved)."""


def example_slots(*, guru: Guru) -> int:
    """How many example questions can still be added (hidden, unapproved rows count too, as when adding one)."""
    return max(MAX_EXAMPLES - ExampleQuestion.objects.filter(guru=guru).count(), 0)


def _domain_knowledge_clean(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidSuggestion("Write the domain knowledge first, or untick “Save the domain knowledge”.")
    cleaned = text.strip()
    if len(cleaned) > MAX_DOMAIN_KNOWLEDGE:
        raise InvalidSuggestion(f"The domain knowledge is limited to {MAX_DOMAIN_KNOWLEDGE} characters; "
                                f"this has {len(cleaned)}. Shorten it.")
    return cleaned


def _unique(texts: Sequence[object]) -> list[str]:
    cleaned: list[str] = []
    for text in texts:
        one = example_text_clean(text)  # raises InvalidExample
        if one not in cleaned:
            cleaned.append(one)
    return cleaned


def guru_suggestion_approve(*, guru: Guru, domain_knowledge: str | None, questions: Sequence[object]) -> ApprovalReport:
    """Save the approved domain knowledge (None keeps the current text) and append the approved questions
    after the existing examples, as approved examples visitors are shown.

    All or nothing: raises InvalidSuggestion or InvalidExample (a question too long, or more than the free
    slots of MAX_EXAMPLES) and then changes nothing.
    """
    knowledge = _domain_knowledge_clean(domain_knowledge) if domain_knowledge is not None else None
    wanted = _unique(questions)
    with transaction.atomic():
        # Locked like guru_example_add does, so the free slots counted here are still free when adding.
        Guru.objects.select_for_update().filter(pk=guru.pk).first()
        existing = set(ExampleQuestion.objects.filter(guru=guru).values_list("text", flat=True))
        new = [text for text in wanted if text not in existing]
        free = max(MAX_EXAMPLES - len(existing), 0)
        if len(new) > free:
            raise InvalidExample(f"A guru has at most {MAX_EXAMPLES} example questions and {guru.name} has "
                                 f"{len(existing)}: tick at most {free}, or remove examples first.")
        for text in new:
            guru_example_add(guru=guru, text=text)
        # A ticked question that waited unapproved is approved now: the maintainer just approved that text.
        ExampleQuestion.objects.filter(guru=guru, text__in=wanted, approved=False).update(approved=True)
        if knowledge is not None and knowledge != guru.domain_knowledge:
            guru_update(guru=guru, domain_knowledge=knowledge)
    return ApprovalReport(domain_knowledge_saved=knowledge is not None, added=tuple(new),
                          already_there=tuple(text for text in wanted if text in existing))
