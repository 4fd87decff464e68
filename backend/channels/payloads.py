"""A stored answer as JSON: Gurubase's field names (what its API clients and widget read) plus ours, additively."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from backend.answering.citations import references_marked
from backend.answering.links import absolute_link, answer_path
from backend.answering.models import Question
from backend.channels.icons import source_icon_url

GURUBASE_VOTES = {1: "upvote", -1: "downvote"}  # Gurubase's `vote_type` / `user_vote` for our stored vote
_KINDS = {"YOUTUBE": "youtube", "PDF": "pdf", "GITHUB_REPO": "github", "WEBSITE": "website"}


def display_date(question: Question) -> str:
    """Gurubase's `date_updated`: a date for people ("13 May 2025"); `updated_at` is the ISO timestamp."""
    when = question.updated_at
    return f"{when.day} {when:%B %Y}"


def answer_json(question: Question, request: HttpRequest) -> dict[str, Any]:
    """The API's answer: every link absolute, since API clients show them outside our site."""
    return {
        "question_id": question.pk, "slug": question.slug, "content": question.content,
        "question": question.question, "date_updated": display_date(question),
        "updated_at": question.updated_at.isoformat(),
        "trust_score": round((question.trust_score or 0) * 100),
        **_references(question, request),
        "session_id": str(question.binge_id) if question.binge_id else None,
        "question_url": request.build_absolute_uri(answer_path(question)), "out_of_context": question.out_of_context,
    }


def _references(question: Question, request: HttpRequest) -> dict[str, list[dict[str, Any]]]:
    """Gurubase's `references` holds only what the text cites; what was retrieved besides is apart.
    `icon` is an image URL (Gurubase's widget shows it); `kind` names the source type for our clients."""
    refs = []
    for ref in references_marked(question.content, question.references):
        kind = str(ref.get("kind", ""))
        refs.append({"title": ref.get("title", ""), "link": absolute_link(request, str(ref.get("link", ""))),
                     "icon": source_icon_url(request, kind), "kind": _KINDS.get(kind, ""),
                     "n": ref.get("n") if isinstance(ref.get("n"), int) else 0, "cited": bool(ref.get("cited"))})
    return {"references": [r for r in refs if r["cited"]], "also_retrieved": [r for r in refs if not r["cited"]]}


def widget_answer_json(question: Question, request: HttpRequest) -> dict[str, Any]:
    """The widget's `fetch_existing` answer: Gurubase's widget reads a reference's title from `question`
    and the conversation from `binge_id`; `title` and `session_id` stay for our clients."""
    data = answer_json(question, request)
    for name in ("references", "also_retrieved"):
        data[name] = [{"question": r["title"], **r} for r in data[name]]
    data["binge_id"] = data["session_id"]
    # Gurubase's newer widget shows its vote buttons only when told so, pre-selecting the visitor's vote.
    data["can_receive_feedback"] = True
    data["user_vote"] = GURUBASE_VOTES.get(question.feedback or 0)
    return data
