"""Where a Discord reply writes, called from the answer's worker thread onto the client's event loop."""

from __future__ import annotations

import asyncio
import re
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

import discord

from backend.channels.chat.discord_text import thread_name
from backend.channels.discord.decide import FEEDBACK_PREFIX, feedback_custom_id

T = TypeVar("T")
CALL_TIMEOUT_S = 60.0  # discord.py waits out rate limits itself; a call that takes longer than this is lost
NO_PINGS = discord.AllowedMentions.none()  # an answer never pings anyone, whatever its text says
ARCHIVE_MINUTES: Literal[1440] = 1440  # a thread quiet for a day is archived (a new message reopens it)


class VoteButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                 template=FEEDBACK_PREFIX + r"(?P<value>-?1):(?P<qid>\d{1,18})"):
    """👍/👎 under an answer; the custom id names the question, so a click after a restart still counts."""

    def __init__(self, question_id: int, value: int) -> None:
        super().__init__(discord.ui.Button(style=discord.ButtonStyle.secondary, emoji="👍" if value > 0 else "👎",
                                           custom_id=feedback_custom_id(question_id, value)))
        self.question_id, self.value = question_id, value

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any],
                             match: re.Match[str]) -> VoteButton:
        return cls(int(match["qid"]), int(match["value"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        voter = getattr(interaction.client, "record_vote", None)
        counted = bool(voter and await voter(question_id=self.question_id, value=self.value))
        text = "Thanks for the feedback." if counted else "This answer can no longer be rated."
        await interaction.response.send_message(text, ephemeral=True)


def feedback_view(question_id: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(VoteButton(question_id, 1))
    view.add_item(VoteButton(question_id, -1))
    return view


def _options(content: str, question_id: int | None) -> dict[str, Any]:
    options: dict[str, Any] = {"content": content, "allowed_mentions": NO_PINGS}
    if question_id is not None:
        options["view"] = feedback_view(question_id)
    return options


def _forget(options: dict[str, Any]) -> None:
    # Clicks are taken by the VoteButton template (registered on the client), not by this one view object,
    # so it is not kept in discord.py's view store (which would grow by one view per answer).
    view = options.get("view")
    if isinstance(view, discord.ui.View):
        view.stop()


def place_name(channel: Any) -> str:
    """"Server · #channel" (a thread is named by its channel), or "direct message"; for the Questions tab."""
    if isinstance(channel, discord.DMChannel):
        return "Discord · direct message"
    parent = getattr(channel, "parent", None) or channel
    guild = getattr(channel, "guild", None)
    return f"{guild.name if guild else 'Discord'} · #{getattr(parent, 'name', '') or channel.id}"


async def thread_on(message: discord.Message | discord.InteractionMessage, question: str) -> discord.Thread:
    """A public thread on the question's message, named after the question."""
    return await message.create_thread(name=thread_name(question), auto_archive_duration=ARCHIVE_MINUTES)


class Bridge:
    """Runs a coroutine on the client's loop from a worker thread and waits for its result."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=CALL_TIMEOUT_S)


class _Sink(ABC):
    """Calls from the answer's thread, each run on the client's loop; subclasses say where messages go."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    @abstractmethod
    async def _send(self, content: str, question_id: int | None) -> str: ...

    @abstractmethod
    async def _edit(self, message_id: str, content: str, question_id: int | None) -> None: ...

    @abstractmethod
    async def _delete(self, message_id: str) -> None: ...

    def send(self, content: str, *, question_id: int | None) -> str:
        return self.bridge.call(self._send(content, question_id))

    def edit(self, message_id: str, content: str, *, question_id: int | None) -> None:
        self.bridge.call(self._edit(message_id, content, question_id))

    def delete(self, message_id: str) -> None:
        self.bridge.call(self._delete(message_id))


class ChannelSink(_Sink):
    """Messages in a thread or a DM channel."""

    def __init__(self, bridge: Bridge, channel: discord.Thread | discord.DMChannel | discord.TextChannel) -> None:
        super().__init__(bridge)
        self.channel = channel

    async def _send(self, content: str, question_id: int | None) -> str:
        options = _options(content, question_id)
        message = await self.channel.send(suppress_embeds=True, **options)
        _forget(options)
        return str(message.id)

    async def _edit(self, message_id: str, content: str, question_id: int | None) -> None:
        options = _options(content, question_id)
        await self.channel.get_partial_message(int(message_id)).edit(**options)  # flags (no embeds) are kept
        _forget(options)

    async def _delete(self, message_id: str) -> None:
        await self.channel.get_partial_message(int(message_id)).delete()


ORIGINAL = "@original"


class InteractionSink(_Sink):
    """An `/ask` answered only to the asker: the deferred response, then follow-up messages."""

    def __init__(self, bridge: Bridge, interaction: discord.Interaction[Any]) -> None:
        super().__init__(bridge)
        self.interaction = interaction

    async def _send(self, content: str, question_id: int | None) -> str:
        options = _options(content, question_id)
        message = await self.interaction.followup.send(ephemeral=True, wait=True, suppress_embeds=True, **options)
        _forget(options)
        return str(message.id)

    async def _edit(self, message_id: str, content: str, question_id: int | None) -> None:
        options = _options(content, question_id)
        if message_id == ORIGINAL:
            await self.interaction.edit_original_response(**options)
        else:
            await self.interaction.followup.edit_message(int(message_id), **options)
        _forget(options)

    async def _delete(self, message_id: str) -> None:
        if message_id != ORIGINAL:  # the deferred response stays: it is the first part
            await self.interaction.followup.delete_message(int(message_id))
