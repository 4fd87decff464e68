"""Example questions: the suggestions visitors see, written or published by a guru's maintainers only."""

from __future__ import annotations

import unicodedata

from django.db import IntegrityError, transaction

from backend.core.errors import AppError, NotFound
from backend.gurus.models import MAX_EXAMPLE_CHARS, MAX_EXAMPLES, ExampleQuestion, Guru
from backend.pipeline.sanitize import neutralise_line


class InvalidExample(AppError):
    code = "invalid_example"


def _printable(char: str) -> str:
    """Controls (tabs, line breaks, NUL) become blanks; format, private-use and unassigned characters (bidi
    overrides, zero-width tricks) go: they could make a suggestion read differently from what it asks."""
    category = unicodedata.category(char)
    if category == "Cc":
        return " "
    return "" if category.startswith("C") else char


def example_text_clean(value: object) -> str:
    """One line of plain text: control and format characters dropped, blanks collapsed, markup made inert.

    Raises InvalidExample when nothing is left or it is too long.
    """
    if not isinstance(value, str):
        raise InvalidExample("Write the example question as text.")
    text = neutralise_line(" ".join("".join(map(_printable, value)).split()))
    if not text:
        raise InvalidExample("Write the example question first.")
    if len(text) > MAX_EXAMPLE_CHARS:
        raise InvalidExample(f"Example questions are limited to {MAX_EXAMPLE_CHARS} characters; "
                             f"this one has {len(text)}. Shorten it.")
    return text


def guru_examples(*, guru: Guru) -> list[ExampleQuestion]:
    """The approved example questions, in the maintainer's order (at most MAX_EXAMPLES)."""
    return list(ExampleQuestion.objects.filter(guru=guru, approved=True).order_by("position", "id")[:MAX_EXAMPLES])


def guru_example_texts(*, guru: Guru) -> list[str]:
    """What visitors are shown as suggestions: only the approved examples' texts."""
    return [example.text for example in guru_examples(guru=guru)]


def _locked_examples(guru: Guru) -> list[ExampleQuestion]:
    # Locking the guru row serialises concurrent edits, so the count limit and the positions hold.
    Guru.objects.select_for_update().filter(pk=guru.pk).first()
    return list(ExampleQuestion.objects.filter(guru=guru).order_by("position", "id"))


def _renumber(rows: list[ExampleQuestion]) -> None:
    for position, row in enumerate(rows):
        row.position = position
    ExampleQuestion.objects.bulk_update(rows, ["position"])


def _duplicate(guru: Guru, text: str) -> InvalidExample:
    return InvalidExample(f"{guru.name} already has the example “{text}”.")


def guru_example_add(*, guru: Guru, text: object) -> ExampleQuestion:
    """Publish an example question (written, or picked from asked questions) at the end of the list."""
    cleaned = example_text_clean(text)
    with transaction.atomic():
        rows = _locked_examples(guru)
        if any(row.text == cleaned for row in rows):
            raise _duplicate(guru, cleaned)
        if len(rows) >= MAX_EXAMPLES:
            raise InvalidExample(f"A guru has at most {MAX_EXAMPLES} example questions; remove one first.")
        position = max((row.position for row in rows), default=-1) + 1
        return ExampleQuestion.objects.create(guru=guru, text=cleaned, position=position, approved=True)


def guru_example_edit(*, guru: Guru, example_id: int, text: object) -> ExampleQuestion:
    """Change an example's wording. Raises NotFound or InvalidExample."""
    cleaned = example_text_clean(text)
    example = _example(guru, example_id)
    example.text = cleaned
    try:
        with transaction.atomic():
            example.save(update_fields=["text", "updated_at"])
    except IntegrityError as exc:
        raise _duplicate(guru, cleaned) from exc
    return example


def guru_example_move(*, guru: Guru, example_id: int, offset: int) -> None:
    """Move an example up (offset -1) or down (+1) in the list; at either end it stays where it is."""
    with transaction.atomic():
        rows = _locked_examples(guru)
        index = next((i for i, row in enumerate(rows) if row.pk == example_id), None)
        if index is None:
            raise NotFound("That example question does not exist.")
        target = min(max(index + offset, 0), len(rows) - 1)
        rows.insert(target, rows.pop(index))
        _renumber(rows)


def guru_example_remove(*, guru: Guru, example_id: int) -> None:
    """Delete an example; visitors stop seeing it on the next page load."""
    with transaction.atomic():
        rows = _locked_examples(guru)
        _example(guru, example_id).delete()
        _renumber([row for row in rows if row.pk != example_id])


def _example(guru: Guru, example_id: int) -> ExampleQuestion:
    example = ExampleQuestion.objects.filter(guru=guru, pk=example_id).first()
    if example is None:
        raise NotFound("That example question does not exist.")
    return example
