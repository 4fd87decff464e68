"""Read paths of the questions pages: the filtered list, one question with its session, display helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from backend.answering.citations import references_marked
from backend.answering.feedback import MAX_ID
from backend.answering.models import Memory, Question
from backend.dashboard.memory.selectors import memory_list_for_question
from backend.dashboard.places import question_channel
from backend.gurus.models import Guru

PAGE_SIZE = 50
MAX_SESSION_TURNS = 50
# The list reads only what its columns show: the answer text, references and telemetry stay in the database.
LIST_COLUMNS = ("id", "question", "user_question", "created_at", "channel", "trust_score", "latency_ms", "cost_usd",
                "feedback", "out_of_context", "parent_id", "intent", "binge__place")
FEEDBACK_FILTERS = {"up": Q(feedback=1), "down": Q(feedback=-1), "some": Q(feedback__isnull=False),
                    "none": Q(feedback__isnull=True)}
STAGE_ORDER = ("understand_ms", "retrieve_ms", "embed_ms", "search_ms", "rerank_ms", "grade_ms", "first_token_ms",
               "generate_ms", "total_ms")
SAFE_LINK_PREFIXES = ("https://", "http://", "/")


@dataclass(frozen=True)
class QuestionRow:
    """One line of the list: the question and how its trust score compares to the guru's threshold."""

    question: Question
    trust_level: str  # a dashboard.css badge class: ok, warn, error, or "" without a score
    channel: str = ""  # "Slack · Acme · #general" for a chat thread, else the channel's name


def trust_level(question: Question, threshold: float) -> str:
    if question.out_of_context:
        return "error"
    if question.trust_score is None:
        return ""
    return "ok" if question.trust_score >= threshold else "warn"


def question_list(*, guru: Guru, filters: dict[str, Any]) -> QuerySet[Question]:
    """The guru's questions matching the filters (see QuestionFilterForm), newest first."""
    questions = Question.objects.filter(guru=guru)
    if text := filters.get("q"):
        questions = questions.filter(Q(question__icontains=text) | Q(user_question__icontains=text))
    if channel := filters.get("channel"):
        questions = questions.filter(channel=channel)
    if status := filters.get("status"):
        questions = questions.filter(out_of_context=status == "refused")
    if feedback := filters.get("feedback"):
        questions = questions.filter(FEEDBACK_FILTERS[feedback])
    if (below := filters.get("trust_below")) is not None:
        questions = questions.filter(trust_score__lt=below / 100)
    # The session comes in the same query: a chat question's channel is named with its workspace and channel.
    return questions.select_related("binge").only(*LIST_COLUMNS).order_by("-created_at", "-id")


def question_page(*, guru: Guru, filters: dict[str, Any], page: str | None,
                  threshold: float) -> tuple[Page, list[QuestionRow]]:
    """One page of the list (a count and a page query) and its rows."""
    paged = Paginator(question_list(guru=guru, filters=filters), PAGE_SIZE).get_page(page)
    rows = [QuestionRow(q, trust_level(q, threshold), question_channel(q)) for q in paged.object_list]
    return paged, rows


def question_detail(*, guru: Guru, question_id: int) -> Question:
    """One question of the guru with everything but its cached vector, and `has_memories` (whether a note was
    written from it); another guru's question is a 404."""
    if not 0 < question_id <= MAX_ID:
        raise Http404("No such question.")
    # Asked in the same query, so that the page reads the notes only when there are some.
    questions = (Question.objects.select_related("binge").defer("embedding")
                 .annotate(has_memories=Exists(Memory.objects.filter(question=OuterRef("pk")))))
    return get_object_or_404(questions, guru=guru, pk=question_id)


def question_memories(question: Question) -> list[Memory]:
    """The notes written from the question; no query when question_detail found none."""
    return memory_list_for_question(question=question) if getattr(question, "has_memories", True) else []


def session_turns(question: Question) -> list[Question]:
    """The conversation the question belongs to, oldest first (empty for a single-turn session)."""
    if question.binge_id is None:
        return []
    # A conversation never spans gurus; filtering on the binge alone lets the database use its index
    # instead of scanning the guru's questions by date.
    turns = list(Question.objects.filter(binge_id=question.binge_id)
                 .only("id", "question", "created_at", "out_of_context", "trust_score", "feedback")
                 .order_by("created_at", "id")[:MAX_SESSION_TURNS])
    return turns if len(turns) > 1 else []


def safe_link(link: object) -> str:
    """A reference link fit for an href (web or site-relative), else "" so the title shows as text."""
    text = str(link or "").strip()
    return text if text.lower().startswith(SAFE_LINK_PREFIXES) and not text.startswith("//") else ""


def reference_rows(question: Question) -> list[dict[str, Any]]:
    """The references as stored, each marked cited or not, with links that are safe to put in an href and
    scores as percentages."""
    rows = []
    for ref in references_marked(question.content, question.references):
        score = ref.get("score")
        also = ref.get("also_in")
        also = also if isinstance(also, list) else []
        rows.append({"n": ref.get("n"), "title": str(ref.get("title") or ref.get("link") or "Untitled source"),
                     "link": safe_link(ref.get("link")), "kind": str(ref.get("kind") or ""),
                     "locator": str(ref.get("locator") or ""), "cited": bool(ref.get("cited")),
                     "also_in": [{"title": str(m.get("title") or m.get("link") or ""), "link": safe_link(m.get("link"))}
                                 for m in also if isinstance(m, dict)],
                     "score": round(score * 100) if isinstance(score, int | float) else None})
    return rows


def timing_rows(question: Question) -> list[tuple[str, int]]:
    """Milliseconds per stage in pipeline order (unknown stages after), labelled without the _ms suffix."""
    timings = question.timings if isinstance(question.timings, dict) else {}
    known = [k for k in STAGE_ORDER if k in timings]
    rest = sorted(k for k in timings if k not in STAGE_ORDER and k.endswith("_ms"))
    return [(k.removesuffix("_ms").replace("_", " "), timings[k]) for k in (*known, *rest)]


def usage_rows(question: Question) -> list[dict[str, Any]]:
    """Model and tokens per LLM flow (understand, grade, answer)."""
    usage = question.usage if isinstance(question.usage, dict) else {}
    return [{"flow": flow, **{k: data.get(k) for k in ("model", "prompt_tokens", "completion_tokens",
                                                         "cached_prompt_tokens")}}
            for flow, data in usage.items() if isinstance(data, dict)]
