"""One Discord answer, run in a worker thread: the conversation's memory, edits while streaming, the final parts."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.db import close_old_connections

from backend.answering.events import EventKind
from backend.answering.links import answer_path
from backend.answering.models import Channel, Question
from backend.answering.services import AskRequest, answer_stream
from backend.channels.chat.discord_text import answer_parts, escape_title, footer_text, preview
from backend.channels.chat.footer import error_text, thinking_line
from backend.channels.consumer import Answer, follow
from backend.integrations.conversations import answer_message_record, thread_bind, thread_session
from backend.integrations.models import Integration
from backend.integrations.services import health_error

logger = logging.getLogger(__name__)
THINKING = "💭 Thinking…"


class Sink(Protocol):
    """Where a reply's messages live: a thread or DM channel, or an interaction's (ephemeral) responses."""

    def send(self, content: str, *, question_id: int | None) -> str: ...

    def edit(self, message_id: str, content: str, *, question_id: int | None) -> None: ...

    def delete(self, message_id: str) -> None: ...


class Messages:
    """The reply's messages kept equal to the parts it should show: edit what changed, send what is new."""

    def __init__(self, sink: Sink, first_id: str, first_text: str = THINKING) -> None:
        self.sink, self.ids, self.texts = sink, [first_id], [first_text]

    def show(self, parts: list[str], *, question_id: int | None = None) -> list[str]:
        """Show `parts`; the last one carries the 👍/👎 buttons of `question_id` when it is given (the end)."""
        for i, part in enumerate(parts):
            buttons = question_id if i == len(parts) - 1 else None
            if i < len(self.ids):
                if self.texts[i] != part or buttons is not None:
                    self.sink.edit(self.ids[i], part, question_id=buttons)
                    self.texts[i] = part
            else:
                self.ids.append(self.sink.send(part, question_id=buttons))
                self.texts.append(part)
        while len(self.ids) > max(len(parts), 1):
            self.sink.delete(self.ids.pop())
            self.texts.pop()
        return list(self.ids)


@dataclass(frozen=True)
class Conversation:
    """Which integration answers, and the thread (or DM, or one ephemeral exchange) that is its session."""

    integration: Integration
    key: str
    place: str
    channel_id: str  # where the answer's messages are, for reactions on them ("" for ephemeral ones: none)


def absolute(integration: Integration, link: str) -> str:
    if link.startswith("/") and not link.startswith("//") and integration.site_url:
        return integration.site_url.rstrip("/") + link
    return link


def _final_parts(conversation: Conversation, answer: Answer) -> tuple[list[str], int | None]:
    if answer.error is not None:
        return [error_text(answer.error.msg, answer.error.error_id)], None
    question = Question.objects.select_related("guru").filter(pk=answer.question_id).first()
    if question is None:
        return answer_parts(answer.text, ""), None
    integration = conversation.integration
    footer = footer_text(trust=answer.trust_score, refused=answer.out_of_context, references=answer.references,
                         answer_url=absolute(integration, answer_path(question)), guru_name=question.guru.name,
                         absolute=lambda link: absolute(integration, link))
    return answer_parts(answer.text, footer), question.pk


def _stream(conversation: Conversation, question: str, messages: Messages) -> Answer:
    integration = conversation.integration
    session = thread_session(integration=integration, key=conversation.key)
    request = AskRequest(guru=integration.guru, question=question, channel=Channel.DISCORD, session_id=session)
    interval, last_edit = settings.OPENGURU_DISCORD_EDIT_INTERVAL_S, time.monotonic()
    answer = Answer()
    for event, answer in follow(answer_stream(request)):
        if event.kind is EventKind.QUESTION and answer.session_id and session is None:
            thread_bind(integration=integration, key=conversation.key, session_id=str(answer.session_id),
                        place=conversation.place)
        elif event.kind is EventKind.DELTA and time.monotonic() - last_edit >= interval:
            messages.show(preview(answer.text))
            last_edit = time.monotonic()
        elif event.kind is EventKind.STATUS and not answer.text and (line := thinking_line(event.data)) \
                and time.monotonic() - last_edit >= interval:
            messages.show([escape_title(line)])  # the "thinking…" message says what the agentic path is doing
            last_edit = time.monotonic()
    return answer


def _answer(conversation: Conversation, question: str, messages: Messages) -> Answer:
    answer = _stream(conversation, question, messages)
    parts, question_id = _final_parts(conversation, answer)
    for message_id in messages.show(parts, question_id=question_id):
        if question_id is not None and conversation.channel_id:
            answer_message_record(integration=conversation.integration, channel_id=conversation.channel_id,
                                  message_id=message_id, question_id=question_id)
    return answer


def run_answer(conversation: Conversation, question: str, sink: Sink, first_id: str) -> Answer | None:
    """Answer `question` into the messages that start at `first_id` (the "thinking…" one); None if it failed."""
    close_old_connections()
    messages = Messages(sink, first_id)
    try:
        return _answer(conversation, question, messages)
    except Exception as exc:  # noqa: BLE001 - whatever broke, the asker is told instead of left with "thinking…"
        logger.exception("Discord answer failed")
        detail = getattr(exc, "text", "") or type(exc).__name__
        health_error(integration=conversation.integration, message=f"Could not answer in Discord: {detail}")
        with contextlib.suppress(Exception):  # Discord itself may be what failed
            messages.show([error_text("the answer could not be posted.", "")])
        return None
    finally:
        close_old_connections()
