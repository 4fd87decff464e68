"""What a chat bot remembers: events already taken in, thread → conversation, answer message → question, votes."""

from __future__ import annotations

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from backend.answering.feedback import feedback_set
from backend.answering.models import Binge, Question
from backend.integrations.models import ChatEvent, ChatMessage, Integration, Thread

EVENT_MEMORY = timedelta(days=2)  # Slack retries for about an hour; two days is ample and keeps the table small


def event_first_seen(*, integration: Integration, event_id: str) -> bool:
    """True once per event id: Slack's retries of an event we already took in are dropped."""
    if not event_id:
        return True
    ChatEvent.objects.filter(received_at__lt=timezone.now() - EVENT_MEMORY).delete()
    try:
        with transaction.atomic():
            ChatEvent.objects.create(integration=integration, event_id=event_id[:100])
    except IntegrityError:
        return False
    return True


def thread_session(*, integration: Integration, key: str) -> str | None:
    """The conversation a chat thread continues, if the bot answered in it before."""
    binge_id = Thread.objects.filter(integration=integration, external_thread_id=key).values_list("binge_id",
                                                                                                 flat=True).first()
    return str(binge_id) if binge_id else None


def thread_known(*, integration: Integration, key: str) -> bool:
    return Thread.objects.filter(integration=integration, external_thread_id=key).exists()


def thread_bind(*, integration: Integration, key: str, session_id: str, place: str) -> None:
    """Remember that this chat thread is that conversation; name where it happens for the Questions tab."""
    binge = Binge.objects.filter(pk=session_id, guru_id=integration.guru_id).first()
    if binge is None:
        return
    Thread.objects.get_or_create(integration=integration, external_thread_id=key, defaults={"binge": binge})
    if place and binge.place != place:
        Binge.objects.filter(pk=binge.pk).update(place=place[:200])


def answer_message_record(*, integration: Integration, channel_id: str, message_id: str, question_id: int) -> None:
    ChatMessage.objects.get_or_create(integration=integration, channel_id=channel_id, message_id=message_id,
                                      defaults={"question_id": question_id})


def answer_message_question(*, integration: Integration, channel_id: str, message_id: str) -> int | None:
    return ChatMessage.objects.filter(integration=integration, channel_id=channel_id,
                                      message_id=message_id).values_list("question_id", flat=True).first()


def chat_vote(*, integration: Integration, question_id: int, value: int | None) -> bool:
    """Record 👍/👎 on an answer this integration gave (never on another guru's or channel's question)."""
    question = Question.objects.filter(pk=question_id, guru_id=integration.guru_id,
                                       binge__threads__integration=integration).only("pk", "feedback").first()
    if question is None:
        return False
    feedback_set(question=question, value=value)
    return True


def chat_reaction(*, integration: Integration, channel_id: str, message_id: str, value: int | None,
                  removed_value: int | None = None) -> bool:
    """A 👍/👎 added to (value) or taken off (removed_value) one of the bot's answer messages; False if not one."""
    question_id = answer_message_question(integration=integration, channel_id=channel_id, message_id=message_id)
    if question_id is None:
        return False
    if value is not None:
        return chat_vote(integration=integration, question_id=question_id, value=value)
    current = Question.objects.filter(pk=question_id, guru_id=integration.guru_id).values_list(
        "feedback", flat=True).first()
    if current is not None and current == removed_value:  # taking the reaction back takes the vote back
        return chat_vote(integration=integration, question_id=question_id, value=None)
    return False
