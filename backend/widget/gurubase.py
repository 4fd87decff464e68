"""Gurubase's widget calls outside /widget/: suggested follow-ups and votes, at /<guru>/… and /api/<guru>/…."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import wraps
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from backend.channels.payloads import GURUBASE_VOTES
from backend.channels.request import json_object, optional_text
from backend.core.errors import NotFound
from backend.core.ratelimit import client_ip
from backend.pipeline.understanding import MAX_QUESTION_CHARS
from backend.widget.models import WidgetId
from backend.widget.suggestions import follow_up_suggestions
from backend.widget.views import View, widget_endpoint
from backend.widget.votes import binge_uuid, parse_slug_vote, slug_vote_record

GuruView = Callable[..., Coroutine[Any, Any, HttpResponseBase]]


def _guru_route(view: View) -> GuruView:
    """The widget view at a path naming the guru; the widget id decides the guru, the path must agree."""

    @csrf_exempt  # cross-site by design; authenticated by the widget id and Origin, never by cookies
    @wraps(view)
    async def routed(request: HttpRequest, guru: str) -> HttpResponseBase:
        return await view(request)

    return routed


def _same_guru(request: HttpRequest, widget: WidgetId) -> None:
    named = request.resolver_match.kwargs.get("guru") if request.resolver_match else None
    if named != widget.guru.slug:
        raise NotFound("This widget id belongs to another guru.")


@widget_endpoint("POST")
async def _follow_up_examples(request: HttpRequest, widget: WidgetId) -> JsonResponse:
    """POST {binge_id, question_slug, question_text} → up to 3 suggested questions (a JSON list of strings)."""
    _same_guru(request, widget)
    data = json_object(request)
    slug = optional_text(data, "question_slug")
    text = optional_text(data, "question_text", limit=MAX_QUESTION_CHARS)
    suggestions = await sync_to_async(follow_up_suggestions)(guru=widget.guru, binge_id=binge_uuid(data.get(
        "binge_id")), slug=slug, question_text=text)
    return JsonResponse(suggestions, safe=False)


@widget_endpoint("POST")
async def _record_vote(request: HttpRequest, widget: WidgetId) -> JsonResponse:
    """POST {content_slug, binge_id, vote_type: upvote | downvote, feedback} → the vote as stored."""
    _same_guru(request, widget)
    vote = parse_slug_vote(json_object(request))
    question = await sync_to_async(slug_vote_record)(widget=widget, vote=vote, client=client_ip(request))
    return JsonResponse({"msg": "Vote recorded.", "content_slug": vote.slug, "question_id": question.pk,
                         "vote_type": GURUBASE_VOTES.get(question.feedback or 0), "feedback": question.feedback})


follow_up_examples = _guru_route(_follow_up_examples)
record_vote = _guru_route(_record_vote)
