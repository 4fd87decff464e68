"""The `/ask` slash command: answered only to the asker, or in a public thread that continues as a conversation."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import discord
from discord import app_commands

from backend.channels.discord import handle
from backend.channels.discord.decide import MAX_QUESTION, question_text
from backend.channels.discord.reply import THINKING, Conversation
from backend.channels.discord.sinks import NO_PINGS, Bridge, ChannelSink, place_name, thread_on
from backend.integrations.models import Integration


class GuruBot(Protocol):
    """What `/ask` needs of the bot (client.GuruBot), named here so the two modules do not import each other."""

    integration_ids: list[int]
    loop: asyncio.AbstractEventLoop
    tree: app_commands.CommandTree[Any]

    @property
    def user(self) -> discord.ClientUser | None: ...

    async def db(self, function: Any, /, *args: Any, **kwargs: Any) -> Any: ...

    async def answer_into(self, conversation: Conversation, question: str, sink: Any, first_id: str) -> None: ...

    async def answer_ephemeral(self, interaction: discord.Interaction[Any], integration: Integration,
                               question: str) -> None: ...


async def _public(bot: GuruBot, interaction: discord.Interaction[Any], integration: Integration,
                  question: str) -> None:
    """Echo the question, open a thread on it (or use the thread it was asked in) and answer there."""
    channel: Any = interaction.channel
    asked = f"**{interaction.user.display_name}** asked: {question}"
    await interaction.response.send_message(asked[:2000], allowed_mentions=NO_PINGS)
    if not isinstance(channel, discord.Thread):
        echoed = await interaction.original_response()
        channel = await thread_on(echoed, question)
    first = await channel.send(THINKING, allowed_mentions=NO_PINGS)
    conversation = Conversation(integration, str(channel.id), place_name(channel), str(channel.id))
    await bot.answer_into(conversation, question, ChannelSink(Bridge(bot.loop), channel), str(first.id))


def add_ask(bot: GuruBot) -> None:
    """Register `/ask question [guru] [private]` on the bot's command tree."""

    async def gurus(interaction: discord.Interaction[Any], current: str) -> list[app_commands.Choice[str]]:
        found = await bot.db(handle.gurus_of, bot.integration_ids)
        return [app_commands.Choice(name=name[:100], value=slug) for slug, name in found
                if current.lower() in name.lower() or current.lower() in slug][:25]

    @bot.tree.command(name="ask", description="Ask a question; the answer comes from the guru's sources.")
    @app_commands.describe(question="What you want to know", guru="Which guru answers (when several are here)",
                           private="Only you see the answer (otherwise it opens a public thread)")
    @app_commands.autocomplete(guru=gurus)
    async def ask(interaction: discord.Interaction[Any], question: app_commands.Range[str, 1, MAX_QUESTION],
                  guru: str = "", private: bool = False) -> None:
        channel = interaction.channel
        parent = str(channel.parent_id) if isinstance(channel, discord.Thread) else ""
        integration, why_not = await bot.db(handle.route_command, bot.integration_ids,
                                            channel_id=str(interaction.channel_id or ""), parent_id=parent,
                                            guru_slug=guru, dm=interaction.guild_id is None)
        text = question_text(question, str(bot.user.id if bot.user else ""), {})
        if integration is None or not text:
            await interaction.response.send_message(why_not or "Ask a question.", ephemeral=True,
                                                    suppress_embeds=True)
        elif private or interaction.guild_id is None:
            await bot.answer_ephemeral(interaction, integration, text)
        else:
            await _public(bot, interaction, integration, text)
