"""Two ways to show an answer growing in a Slack thread: native streaming, or chat.update where it is refused."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backend.adapters.slack.web import SlackWeb
from backend.channels.chat.fences import open_at_end
from backend.channels.chat.slack_mrkdwn import slack_sections

STREAM_CAP = 10_000  # characters in one streamed message (Slack takes 12,000 per call); then a new message
SECTIONS_PER_MESSAGE = 12  # 12 × 3,000 characters stays under Slack's 40,000 per message
PREVIEW_CHARS = 2_900  # an in-progress chat.update shows the start; a section block holds 3,000
TASK_ID = "search"
_SPECIAL = re.compile(r"<([!@#])")  # <!channel>, <@U…>, <#C…>: Slack markup a source or model must not send


def defused(markdown: str) -> str:
    """Markdown streamed as is, except Slack's mention and broadcast markup (a zero-width space breaks it)."""
    return _SPECIAL.sub("<\u200b\\1", markdown)


@dataclass
class Target:
    """Where the answer goes: the thread, and who it answers (streaming needs the recipient)."""

    web: SlackWeb
    channel: str
    thread_ts: str
    team: str
    user: str


@dataclass
class Streamed:
    """chat.startStream / appendStream / stopStream: Slack renders the markdown as it arrives."""

    target: Target
    messages: list[str] = field(default_factory=list)
    _stream: Any = None
    _sent: str = ""
    _searching: str = ""

    def _open(self) -> None:
        t = self.target
        self._stream = t.web.stream(channel=t.channel, thread_ts=t.thread_ts, team_id=t.team, user_id=t.user)
        self._sent = ""

    _task: str = TASK_ID
    _steps: int = 0

    def status(self, title: str) -> None:
        if self._stream is None:
            self._open()
        if not self._searching:
            self._searching = title
            self._stream.task(task_id=TASK_ID, title=title, status="in_progress")

    def step(self, title: str) -> None:
        """One step of the agentic path's research, as the next task of Slack's task timeline."""
        if self._stream is None:
            self._open()
        self._done()
        self._steps += 1
        self._task, self._searching = f"step-{self._steps}", title
        self._stream.task(task_id=self._task, title=title, status="in_progress")

    def _done(self) -> None:
        if self._searching:
            self._stream.task(task_id=self._task, title=self._searching, status="complete")
            self._searching = ""

    def append(self, text: str) -> None:
        if self._stream is None:
            self._open()
        self._done()
        if len(self._sent) + len(text) > STREAM_CAP:
            self._roll_over()
        self._stream.append(defused(text))
        self._sent += text

    def _roll_over(self) -> None:
        """Finish this message and go on in a new one, closing and reopening a code block cut in two."""
        fence = open_at_end(self._sent)
        self._stream.stop(text="\n" + fence.closer if fence else None)
        self.messages.append(self._stream.ts)
        self._open()
        if fence:
            self._stream.append(fence.line + "\n")
            self._sent = fence.line + "\n"

    def finish(self, text: str, footer: list[dict[str, Any]]) -> list[str]:
        if self._stream is None:
            self._open()
        self._stream.stop(blocks=footer, text=None if self._sent else defused(text) or " ")
        self.messages.append(self._stream.ts)
        return self.messages

    @property
    def sent_text(self) -> bool:
        return bool(self._sent) or bool(self.messages)


def _preview(markdown: str) -> str:
    """The start of an answer still being written, cut where no link, entity or code block breaks."""
    return (slack_sections(markdown, PREVIEW_CHARS) or [""])[0] + " …"


@dataclass
class Updated:
    """Where streaming is unavailable: one message posted, then edited at a rate Slack allows."""

    target: Target
    interval: float
    clock: Callable[[], float] = time.monotonic
    ts: str = ""
    text: str = ""
    _last: float = 0.0

    def _post(self, text: str, blocks: list[dict[str, Any]] | None = None) -> str:
        t = self.target
        return t.web.post(channel=t.channel, thread_ts=t.thread_ts, text=text, blocks=blocks)

    def status(self, title: str) -> None:
        if not self.ts:
            self.ts, self._last = self._post(f"_{title}_"), self.clock()

    def step(self, title: str) -> None:
        """One step of the agentic path's research: the status message says it, at the rate edits are allowed."""
        if not self.ts:
            self.status(title)
        elif not self.text and self.clock() - self._last >= self.interval:
            self.target.web.update(channel=self.target.channel, ts=self.ts, text=f"_{title}_")
            self._last = self.clock()

    def append(self, text: str) -> None:
        self.text += text
        if not self.ts:
            self.ts, self._last = self._post(_preview(self.text)), self.clock()
        elif self.clock() - self._last >= self.interval:
            self.target.web.update(channel=self.target.channel, ts=self.ts,
                                   text=_preview(self.text))
            self._last = self.clock()

    def finish(self, text: str, footer: list[dict[str, Any]]) -> list[str]:
        """The converted answer in section blocks, split over messages if long; the footer under the last."""
        parts = slack_sections(text) or [" "]
        groups = [parts[i:i + SECTIONS_PER_MESSAGE] for i in range(0, len(parts), SECTIONS_PER_MESSAGE)]
        sent: list[str] = []
        for n, group in enumerate(groups):
            blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": part}} for part in group]
            if n == len(groups) - 1:
                blocks += footer
            summary = group[0][:300]
            if n == 0 and self.ts:
                self.target.web.update(channel=self.target.channel, ts=self.ts, text=summary, blocks=blocks)
                sent.append(self.ts)
            else:
                sent.append(self._post(summary, blocks))
        return sent
