"""Read paths of the Memory tab: the guru's notes in three groups, one note, the notes of one question."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from backend.answering.feedback import MAX_ID
from backend.answering.models import Memory, MemoryStatus, Question
from backend.gurus.models import Guru

PAGE_SIZE = 50
# The list never reads a note's vector: it is bytes the page has no use for.
COLUMNS = ("id", "text", "status", "origin", "proposed_text", "created_at", "updated_at", "question",
           "question__question", "author", "author__username")
# A note with a pending revision waits for a maintainer whatever its status, so it is listed there only.
WAITING = Q(status=MemoryStatus.PROPOSED) | ~Q(proposed_text="")
GROUPS = (
    ("waiting", "Waiting for approval", WAITING),
    ("approved", "Approved", Q(status=MemoryStatus.APPROVED, proposed_text="")),
    ("rejected", "Rejected", Q(status=MemoryStatus.REJECTED, proposed_text="")),
)


@dataclass(frozen=True)
class MemoryGroup:
    key: str  # the group's anchor on the page, and its page parameter's prefix ("<key>_page")
    title: str
    page: Page


def memory_list(*, guru: Guru, where: Q) -> QuerySet[Memory]:
    """The guru's notes matching `where`, last changed first, with their author and question in the same query."""
    return (Memory.objects.filter(where, guru=guru).select_related("author", "question").only(*COLUMNS)
            .order_by("-updated_at", "-id"))


def memory_groups(*, guru: Guru, pages: Mapping[str, str]) -> list[MemoryGroup]:
    """Waiting, approved and rejected notes, PAGE_SIZE a page each; `pages` holds the request's page numbers."""
    return [MemoryGroup(key, title, Paginator(memory_list(guru=guru, where=where), PAGE_SIZE)
                        .get_page(pages.get(f"{key}_page")))
            for key, title, where in GROUPS]


def memory_get(*, guru: Guru, memory_id: int) -> Memory:
    """One note of the guru; another guru's note (or none) is a 404."""
    if not 0 < memory_id <= MAX_ID:
        raise Http404("No such note.")
    return get_object_or_404(Memory.objects.defer("embedding"), guru=guru, pk=memory_id)


def memory_list_for_question(*, question: Question) -> list[Memory]:
    """The notes written from this question, any status, last changed first."""
    return list(Memory.objects.filter(question=question).select_related("author")
                .only("id", "text", "status", "origin", "proposed_text", "updated_at", "author", "author__username")
                .order_by("-updated_at", "-id"))
