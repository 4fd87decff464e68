"""Gurubase's widget votes (`record_vote`): an answer named by its slug and conversation, up or down."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import F

from backend.answering.feedback import feedback_set
from backend.answering.models import AnswerState, Channel, Question
from backend.channels.payloads import GURUBASE_VOTES
from backend.channels.request import MAX_SLUG_CHARS
from backend.core.errors import NotFound, RequestError
from backend.core.ratelimit import hit
from backend.gurus.models import Guru
from backend.widget.models import WidgetId

VOTE_TYPES = {name: value for value, name in GURUBASE_VOTES.items()}
MAX_COMMENT_CHARS = 1000  # the widget's form allows 200; a little slack, never unbounded


@dataclass(frozen=True)
class SlugVote:
    """`{content_slug, binge_id, vote_type, feedback}` as Gurubase's widget sends it, checked."""

    slug: str
    binge_id: uuid.UUID | None
    value: int


def binge_uuid(value: object) -> uuid.UUID | None:
    # The widget sends null (or "" / "initial") for an answer it got before it had a conversation id.
    if value in (None, "", "initial"):
        return None
    try:
        return uuid.UUID(value) if isinstance(value, str) and len(value) <= 64 else _bad_binge()
    except ValueError:
        return _bad_binge()


def _bad_binge() -> uuid.UUID:
    raise RequestError(400, "invalid_binge", "`binge_id` must be a conversation id (a UUID string) or null.")


def parse_slug_vote(data: dict[str, Any]) -> SlugVote:
    """The vote in a record_vote body, or a 400 naming the bad field. The downvote comment is checked but not
    kept: our answers store the vote only (see README, Gurubase compatibility)."""
    slug, vote_type, comment = data.get("content_slug"), data.get("vote_type"), data.get("feedback")
    if not isinstance(slug, str) or not slug.strip() or len(slug) > MAX_SLUG_CHARS:
        raise RequestError(400, "invalid_content_slug", "Send the answer's `content_slug`.")
    if vote_type not in VOTE_TYPES:
        raise RequestError(400, "invalid_vote_type", "`vote_type` must be \"upvote\" or \"downvote\".")
    if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS):
        raise RequestError(400, "invalid_feedback", f"`feedback` must be text of at most {MAX_COMMENT_CHARS} "
                                                    "characters, or null.")
    return SlugVote(slug.strip(), binge_uuid(data.get("binge_id")), VOTE_TYPES[str(vote_type)])


def _voted_question(guru: Guru, vote: SlugVote) -> Question | None:
    found = Question.objects.filter(guru=guru, channel=Channel.WIDGET, slug=vote.slug, state=AnswerState.COMPLETE)
    if vote.binge_id is not None:
        found = found.filter(binge_id=vote.binge_id)
    else:
        # Without a conversation id the widget can only be voting on the answer that opened a conversation.
        found = found.filter(binge__root_question=F("pk"))
    return found.order_by("-created_at").only("pk", "feedback").first()


def slug_vote_record(*, widget: WidgetId, vote: SlugVote, client: str) -> Question:
    """Record or change a vote on a widget answer of this widget's guru. A vote names the answer by slug, as
    Gurubase does, so the visitor's budget (shared with every other vote endpoint) is spent before the lookup:
    the endpoint cannot be used to probe which questions were asked."""
    decision = hit(f"feedback:{client}", limit=settings.OPENGURU_FEEDBACK_RATE_LIMIT)
    if not decision.allowed:
        raise RequestError(429, "rate_limited", "Too many votes; please wait a moment.",
                           {"Retry-After": str(decision.retry_after)})
    question = _voted_question(widget.guru, vote)
    if question is None:
        raise NotFound("No widget answer with this slug in this conversation.")
    return feedback_set(question=question, value=vote.value)
