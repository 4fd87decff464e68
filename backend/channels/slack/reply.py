"""Answering one Slack question in its thread, with the thread's conversation as memory; the not-allowed note."""

from __future__ import annotations

import logging

from django.conf import settings
from django.urls import reverse

from backend.adapters.slack.web import SlackError, SlackWeb
from backend.answering.events import EventKind
from backend.answering.links import answer_path
from backend.answering.models import Channel, Question
from backend.answering.services import AskRequest, answer_stream
from backend.channels.chat.footer import error_text, thinking_line
from backend.channels.chat.slack_mrkdwn import escape
from backend.channels.consumer import Answer, follow
from backend.channels.slack.blocks import footer_blocks
from backend.channels.slack.decide import Ask, NotAllowed
from backend.channels.slack.writers import Streamed, Target, Updated
from backend.integrations.conversations import answer_message_record, thread_bind, thread_session
from backend.integrations.models import Integration
from backend.integrations.services import health_error, slack_web

logger = logging.getLogger(__name__)
Writer = Streamed | Updated


def _absolute(integration: Integration, link: str) -> str:
    if link.startswith("/") and not link.startswith("//") and integration.site_url:
        return integration.site_url.rstrip("/") + link
    return link


def _place(integration: Integration, web: SlackWeb, ask: Ask) -> str:
    if ask.dm:
        return f"{integration.workspace_name} · direct message"
    try:
        name = web.channel_name(ask.channel)
    except SlackError:
        name = ""  # the Questions tab then shows the channel id
    return f"{integration.workspace_name} · #{name or ask.channel}"


class Reply:
    """One answer's trip from the events to the thread; falls back to chat.update if streaming is refused."""

    def __init__(self, integration: Integration, ask: Ask) -> None:
        self.integration, self.ask = integration, ask
        self.web = slack_web(integration.access_token)
        self.target = Target(self.web, ask.channel, ask.thread_ts, ask.team or integration.external_id, ask.user)
        self.writer: Writer = Streamed(self.target)
        self.answer = Answer()

    def _fallback(self, exc: SlackError) -> None:
        logger.info("Slack streaming refused (%s); answering with chat.update", exc.code)
        self.writer = Updated(self.target, settings.OPENGURU_SLACK_UPDATE_INTERVAL_S)
        if self.answer.text:
            self.writer.append(self.answer.text)

    def _show(self, kind: EventKind, text: str, *, step: bool = False) -> None:
        for _attempt in range(2):
            try:
                if kind is EventKind.STATUS:
                    (self.writer.step if step else self.writer.status)(text)
                else:
                    self.writer.append(text)
                return
            except SlackError as exc:
                if not isinstance(self.writer, Streamed) or self.writer.sent_text:
                    raise
                self._fallback(exc)

    def run(self) -> None:
        guru = self.integration.guru
        session = thread_session(integration=self.integration, key=self.ask.thread_key)
        request = AskRequest(guru=guru, question=self.ask.question, channel=Channel.SLACK, session_id=session)
        for event, self.answer in follow(answer_stream(request)):
            # A thread's place is named once, when its conversation starts (one conversations.info call).
            if event.kind is EventKind.QUESTION and self.answer.session_id and session is None:
                thread_bind(integration=self.integration, key=self.ask.thread_key,
                            session_id=str(self.answer.session_id), place=_place(self.integration, self.web, self.ask))
            elif event.kind is EventKind.STATUS and not self.answer.text and (line := thinking_line(event.data)):
                self._show(EventKind.STATUS, escape(line), step=True)
            elif event.kind is EventKind.STATUS and not self.answer.text:
                self._show(EventKind.STATUS, f"Searching {guru.name}'s sources…")
            elif event.kind is EventKind.DELTA:
                self._show(EventKind.DELTA, str(event.data["text"]))
        self._finish()

    def _finish(self) -> None:
        answer = self.answer
        if answer.error is not None:
            self._final(error_text(answer.error.msg, answer.error.error_id), [])
            return
        question = Question.objects.select_related("guru").filter(pk=answer.question_id).first()
        if question is None:
            self._final(answer.text, [])
            return
        footer = footer_blocks(question_id=question.pk, trust=answer.trust_score, refused=answer.out_of_context,
                               references=answer.references, guru_name=question.guru.name,
                               answer_url=_absolute(self.integration, answer_path(question)),
                               absolute=lambda link: _absolute(self.integration, link))
        for ts in self._final(answer.text, footer):
            answer_message_record(integration=self.integration, channel_id=self.ask.channel, message_id=ts,
                                  question_id=question.pk)

    def _final(self, text: str, footer: list[dict[str, object]]) -> list[str]:
        try:
            return [ts for ts in self.writer.finish(text, footer) if ts]
        except SlackError as exc:
            if not isinstance(self.writer, Streamed) or self.writer.sent_text:
                raise
            self._fallback(exc)
            return [ts for ts in self.writer.finish(text, footer) if ts]


def answer_in_thread(*, integration: Integration, ask: Ask) -> None:
    try:
        Reply(integration, ask).run()
    except SlackError as exc:
        health_error(integration=integration, message=f"Could not answer in Slack: {exc.code}")
        raise


def setup_url(integration: Integration) -> str:
    path = reverse("dashboard:integrations", args=[integration.guru.slug])
    return (integration.site_url.rstrip("/") + path) if integration.site_url else path


def say_not_allowed(*, integration: Integration, refused: NotAllowed) -> None:
    """Only the asker sees it (in a DM, the reply is the DM): where to allow the bot."""
    name, link = escape(integration.guru.name), setup_url(integration)
    web = slack_web(integration.access_token)
    if refused.dm:
        web.post(channel=refused.channel, thread_ts=None,
                 text=f"{name} does not answer direct messages. A maintainer can turn them on: <{link}|setup page>.")
        return
    web.ephemeral(channel=refused.channel, user=refused.user, thread_ts=refused.thread_ts,
                  text=f"I'm not set up to answer in this channel. A maintainer of {name} can allow it on the "
                       f"<{link}|Integrations page>.")
