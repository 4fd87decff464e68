"""Share links to one stored answer: signed, so answers cannot be listed by counting ids."""

from __future__ import annotations

from typing import Any

from django.core import signing
from django.http import HttpRequest

from backend.answering.models import AnswerState, Question
from backend.gurus.models import Guru

_SALT = "openguru.answer-link"


def answer_path(question: Question) -> str:
    """The path of the page that shows this answer; only someone given the link can open it."""
    token = signing.Signer(salt=_SALT).sign(str(question.pk))
    return f"/g/{question.guru.slug}/answers/{token}/"


def absolute_link(request: HttpRequest, link: str) -> str:
    """A link to one of our own pages or files made absolute, for clients that are not on our site."""
    return request.build_absolute_uri(link) if link.startswith("/") and not link.startswith("//") else link


def shared_question(guru: Guru, token: str) -> Question | None:
    """The complete answer of `guru` a share token names; None for a forged, foreign or unfinished one."""
    try:
        question_id = int(signing.Signer(salt=_SALT).unsign(token))
    except (signing.BadSignature, ValueError):
        return None
    return Question.objects.filter(pk=question_id, guru=guru, state=AnswerState.COMPLETE).first()


def replay_events(question: Question) -> list[tuple[str, dict[str, Any]]]:
    """The stored answer as the events the page renders live (question, references, text, done)."""
    done = {"question_id": question.pk, "trust_score": question.trust_score, "references": question.references,
            "out_of_context": question.out_of_context}
    return [
        ("question", {"question_id": question.pk, "slug": question.slug, "session_id": None,
                      "question": question.question}),
        ("references", {"references": question.references, "trust_score": question.trust_score}),
        ("delta", {"text": question.content}),
        ("done", done),
    ]
