"""One bot's gateway connection (discord.py), serving every guru whose integration uses that bot token."""

from __future__ import annotations

import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import discord
from discord import app_commands

from backend.channels.discord import handle
from backend.channels.discord.commands import add_ask
from backend.channels.discord.decide import Ask, Incoming, NotAllowed, Place, reaction_vote
from backend.channels.discord.reply import THINKING, Conversation, run_answer
from backend.channels.discord.sinks import (
    NO_PINGS,
    ORIGINAL,
    Bridge,
    ChannelSink,
    InteractionSink,
    VoteButton,
    place_name,
    thread_on,
)
from backend.integrations.models import Integration

logger = logging.getLogger(__name__)
ANSWERS_AT_ONCE = 4  # answers run in threads; more questions than this wait their turn


# The bot never joins voice: discord.py's warnings about missing voice libraries would only be noise.
discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False


def intents() -> discord.Intents:
    """Servers, messages (with their content: a privileged intent the maintainer turns on), DMs, reactions."""
    chosen = discord.Intents.none()
    chosen.guilds = chosen.guild_messages = chosen.dm_messages = chosen.message_content = True
    chosen.guild_reactions = chosen.dm_reactions = True
    return chosen


def incoming(message: discord.Message, bot_user_id: int) -> Incoming:
    """discord.py's message as the plain data the decision reads."""
    channel = message.channel
    parent_id = owner_id = ""
    if isinstance(channel, discord.DMChannel):
        place = Place.DM
    elif isinstance(channel, discord.Thread):
        place, parent_id, owner_id = Place.THREAD, str(channel.parent_id), str(channel.owner_id or "")
    elif isinstance(channel, discord.TextChannel):
        place = Place.CHANNEL
    else:
        place = Place.OTHER
    return Incoming(message_id=str(message.id), channel_id=str(channel.id), author_id=str(message.author.id),
                    author_is_bot=message.author.bot, content=message.content, place=place,
                    guild_id=str(message.guild.id) if message.guild else "",
                    mentions_bot=any(user.id == bot_user_id for user in message.mentions),
                    plain=message.type in (discord.MessageType.default, discord.MessageType.reply),
                    parent_id=parent_id, thread_owner_id=owner_id,
                    names={str(user.id): user.display_name for user in message.mentions})


class GuruBot(discord.Client):
    """Turns gateway events into decisions (in threads: the ORM is synchronous) and answers."""

    def __init__(self, integration_ids: list[int]) -> None:
        super().__init__(intents=intents(), allowed_mentions=NO_PINGS)
        self.integration_ids = list(integration_ids)
        self.tree = app_commands.CommandTree(self)
        self.answers = ThreadPoolExecutor(max_workers=ANSWERS_AT_ONCE, thread_name_prefix="discord-answer")
        self.setup_problem = ""

    async def setup_hook(self) -> None:
        """After login, before the gateway: the vote buttons, and `/ask` registered (so it works from the start)."""
        self.add_dynamic_items(VoteButton)
        add_ask(self)
        try:
            await self.tree.sync()
        except discord.HTTPException as exc:
            self.setup_problem = f"Discord refused the /ask command: {exc.text}"

    async def db(self, function: Any, /, *args: Any, **kwargs: Any) -> Any:
        return await handle.in_thread(function, *args, **kwargs)

    async def on_ready(self) -> None:
        assert self.user is not None
        application = str(self.application_id or "")
        guilds = [{"id": str(g.id), "name": g.name} for g in self.guilds]
        await self.db(handle.connected, self.integration_ids, bot_user_id=str(self.user.id),
                      bot_name=self.user.name, application_id=application, guilds=guilds)
        if self.setup_problem:
            await self.db(handle.failed, self.integration_ids, self.setup_problem)
        logger.info("Discord bot %s ready in %d server(s)", self.user.name, len(guilds))

    async def on_guild_join(self, guild: discord.Guild) -> None:
        await self.on_ready()

    async def on_guild_remove(self, guild: discord.Guild) -> None:
        await self.on_ready()

    async def on_message(self, message: discord.Message) -> None:
        if self.user is None or message.author.id == self.user.id:
            return
        routed = await self.db(handle.route_message, self.integration_ids, incoming(message, self.user.id))
        logger.debug("Discord message %s: %s", message.id, routed.decision)
        if routed.integration is None:
            return
        if isinstance(routed.decision, NotAllowed):
            text = await self.db(handle.not_allowed_text, routed.integration, dm=routed.decision.dm)
            await message.reply(text, mention_author=False, suppress_embeds=True)
        elif isinstance(routed.decision, Ask):
            await self.answer_message(message, routed.integration, routed.decision)

    async def answer_message(self, message: discord.Message, integration: Integration, ask: Ask) -> None:
        """Open a thread on the question (unless it is in one), say "thinking…", and answer into it."""
        channel: Any = message.channel
        try:
            if ask.opens_thread:
                channel = await thread_on(message, ask.question)
            first = await channel.send(THINKING, allowed_mentions=NO_PINGS)
        except discord.HTTPException as exc:
            await self.db(handle.failed, [integration.pk], f"Discord refused to open a thread or post in "
                                                           f"#{getattr(message.channel, 'name', '')}: {exc.text}")
            with contextlib.suppress(discord.HTTPException):  # without the right to post, not even this
                await message.reply(f"I could not answer here (Discord said: {exc.text}). A maintainer can check "
                                    "the bot's permissions in this channel.", mention_author=False)
            return
        await self.answer_into(Conversation(integration, str(channel.id), place_name(channel), str(channel.id)),
                               ask.question, ChannelSink(Bridge(self.loop), channel), str(first.id))

    async def answer_into(self, conversation: Conversation, question: str, sink: Any, first_id: str) -> None:
        # In a thread of its own: the answer's sink calls back onto this loop and waits (see sinks.Bridge).
        await self.loop.run_in_executor(self.answers, run_answer, conversation, question, sink, first_id)

    async def answer_ephemeral(self, interaction: discord.Interaction[Any], integration: Integration,
                               question: str) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        conversation = Conversation(integration, f"ephemeral:{interaction.id}", place_name(interaction.channel), "")
        await self.answer_into(conversation, question, InteractionSink(Bridge(self.loop), interaction), ORIGINAL)

    async def record_vote(self, *, question_id: int, value: int) -> bool:
        return bool(await self.db(handle.vote, self.integration_ids, question_id=question_id, value=value))

    async def _reacted(self, payload: discord.RawReactionActionEvent, removed: bool) -> None:
        value = reaction_vote(str(payload.emoji))
        if not value or (self.user is not None and payload.user_id == self.user.id):
            return
        await self.db(handle.reaction, self.integration_ids, channel_id=str(payload.channel_id),
                      message_id=str(payload.message_id), value=value, removed=removed)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        await self._reacted(payload, removed=False)

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        await self._reacted(payload, removed=True)

    async def close(self) -> None:
        await super().close()
        self.answers.shutdown(wait=False, cancel_futures=True)
