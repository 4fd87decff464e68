"""Writes of the Evaluation tab the evaluation app has no service for: create or delete a set, save one item.

Import, export, seeding, runs and thresholds are the evaluation app's own services (`sets`, `runner`,
`services`); these are the form-shaped edits only the dashboard makes.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from backend.core.errors import Conflict, RequestError
from backend.evaluation.models import MAX_ITEMS, EvalItem, EvalSet
from backend.evaluation.sets import case_json
from backend.gurus.models import Guru
from backend.pipeline.evaluation import EvalCase


def eval_set_create(*, guru: Guru, name: str) -> EvalSet:
    """A new empty set; Conflict when the guru already has one of that name."""
    name = name.strip()
    try:
        with transaction.atomic():
            return EvalSet.objects.create(guru=guru, name=name)
    except IntegrityError as exc:  # the unique (guru, name) constraint, also under a concurrent create
        raise Conflict(f"There is already a set named “{name}”.") from exc


def eval_set_get_or_create(*, guru: Guru, name: str) -> EvalSet:
    eval_set, _ = EvalSet.objects.get_or_create(guru=guru, name=name.strip())
    return eval_set


def eval_set_delete(*, eval_set: EvalSet) -> None:
    """Delete the set and its items; its runs stay, under the set's name (EvalRun.set_name)."""
    eval_set.delete()


def eval_item_add(*, eval_set: EvalSet, case: EvalCase) -> EvalItem:
    """Append a question to the set (after its last one), within the set's size limit."""
    with transaction.atomic():
        locked = EvalSet.objects.select_for_update().get(pk=eval_set.pk)
        if locked.items.count() >= MAX_ITEMS:
            raise RequestError(400, "eval_set_full", f"A set holds at most {MAX_ITEMS} questions.")
        last = locked.items.aggregate(last=Max("position"))["last"]
        position = 0 if last is None else last + 1
        item = EvalItem.objects.create(eval_set=locked, position=position, **case_json(case))
        locked.save(update_fields=["updated_at"])
    return item


def eval_item_update(*, item: EvalItem, case: EvalCase) -> EvalItem:
    for name, value in case_json(case).items():
        setattr(item, name, value)
    item.save(update_fields=[*case_json(case)])
    EvalSet.objects.filter(pk=item.eval_set_id).update(updated_at=timezone.now())
    return item


def eval_item_delete(*, item: EvalItem) -> None:
    item.delete()
    EvalSet.objects.filter(pk=item.eval_set_id).update(updated_at=timezone.now())
