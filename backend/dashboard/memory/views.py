"""The Memory tab: the guru's notes by status, a maintainer's new note, and approving, rejecting, editing or deleting
one."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from backend.answering.memory import (
    MAX_MEMORIES,
    MAX_MEMORY_CHARS,
    memory_add,
    memory_approve,
    memory_delete,
    memory_edit,
    memory_reject,
)
from backend.answering.models import Memory, MemoryOrigin, MemoryStatus
from backend.core.errors import AppError
from backend.dashboard.access import AuthenticatedHttpRequest, guru_view
from backend.dashboard.memory.forms import NoteForm, add_form
from backend.dashboard.memory.selectors import memory_get, memory_groups
from backend.gurus.models import Guru


def _back(guru: Guru, anchor: str = "") -> HttpResponse:
    response = redirect("dashboard:memory", slug=guru.slug)
    response["Location"] += anchor
    return response


def _memory_page(request: HttpRequest, guru: Guru, form: NoteForm, *, status: int = 200) -> HttpResponse:
    groups = memory_groups(guru=guru, pages=request.GET)
    return render(request, "dashboard/memory/index.html", {
        "guru": guru, "form": form, "groups": groups, "max_memories": MAX_MEMORIES,
        "max_chars": MAX_MEMORY_CHARS}, status=status)


@guru_view
@require_GET
def memory_view(request: HttpRequest, guru: Guru) -> HttpResponse:
    return _memory_page(request, guru, add_form())


@guru_view
@require_POST
def memory_add_view(request: AuthenticatedHttpRequest, guru: Guru) -> HttpResponse:
    """A maintainer's note is approved at once: they are the ones who approve notes."""
    form = add_form(request.POST)
    if form.is_valid():
        try:
            memory = memory_add(guru=guru, text=form.cleaned_data["text"], origin=MemoryOrigin.MAINTAINER,
                                status=MemoryStatus.APPROVED, author=request.user)
        except ValueError as exc:
            form.add_error("text", str(exc))
        except AppError as exc:
            form.add_error(None, exc.detail)
        else:
            messages.success(request, "Added the note: answers quote it when a question is about it.")
            return _back(guru, f"#memory-{memory.pk}")
    return _memory_page(request, guru, form, status=400)


@guru_view
@require_POST
def memory_approve_view(request: HttpRequest, guru: Guru, memory_id: int) -> HttpResponse:
    memory = memory_get(guru=guru, memory_id=memory_id)
    revised = bool(memory.proposed_text)
    memory_approve(memory=memory)
    messages.success(request, "Applied the proposed revision: answers quote the new text." if revised
                     else "Approved the note: answers quote it when a question is about it.")
    return _back(guru, f"#memory-{memory.pk}")


def _reject_message(memory: Memory) -> str:
    """What a rejection does to this note (read before it happens)."""
    if memory.proposed_text and memory.status == MemoryStatus.APPROVED:
        return "Dropped the proposed revision: the note keeps its text."
    return "Rejected the note: answers never quote it."


@guru_view
@require_POST
def memory_reject_view(request: HttpRequest, guru: Guru, memory_id: int) -> HttpResponse:
    memory = memory_get(guru=guru, memory_id=memory_id)
    message = _reject_message(memory)
    memory_reject(memory=memory)
    messages.success(request, message)
    return _back(guru, f"#memory-{memory.pk}")


@guru_view
@require_http_methods(["GET", "POST"])
def memory_edit_view(request: HttpRequest, guru: Guru, memory_id: int) -> HttpResponse:
    """GET: the note's text in a form of its own (the list edits in place; this page shows the errors)."""
    memory = memory_get(guru=guru, memory_id=memory_id)
    if request.method == "POST":
        form = NoteForm(request.POST, label="Text")
        if form.is_valid():
            try:
                memory_edit(memory=memory, text=form.cleaned_data["text"])
            except ValueError as exc:
                form.add_error("text", str(exc))
            else:
                messages.success(request, "Saved the note.")
                return _back(guru, f"#memory-{memory.pk}")
    else:
        form = NoteForm(initial={"text": memory.text}, label="Text")
    status = 400 if form.is_bound else 200
    return render(request, "dashboard/memory/edit.html", {"guru": guru, "memory": memory, "form": form},
                  status=status)


@guru_view
@require_POST
def memory_delete_view(request: HttpRequest, guru: Guru, memory_id: int) -> HttpResponse:
    memory = memory_get(guru=guru, memory_id=memory_id)
    memory_delete(memory=memory)
    messages.success(request, f"Deleted the note “{memory.text[:80]}”.")
    return _back(guru)
