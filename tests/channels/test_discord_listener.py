"""The real Discord listener (discord.py) against a local fake Discord gateway + REST server: a mention opens a
thread and is answered by editing, follow-ups continue the conversation, refusals, feedback, /ask, reconnects."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.answering.models import Binge, Channel, Question
from backend.channels.chat.fences import open_at_end
from backend.gurus.models import Guru
from backend.integrations.models import ChatMessage, Integration, Thread
from tests.channels.discord_support import (
    APP_ID,
    AUTO,
    BOT_ID,
    BOT_TOKEN,
    ELSEWHERE,
    FORUM,
    GUILD,
    HUMAN,
    SUPPORT,
    ListenerThread,
    bot_messages,
    connect_discord,
)
from tests.channels.parity_support import ANSWER, UNCOVERED, ChannelScript
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import QUESTION, make_indexed_guru

pytestmark = [pytest.mark.django_db(transaction=True)]
THINKING = "💭 Thinking…"


def _mention(discord: FakeDiscord, text: str = QUESTION, channel: str = SUPPORT) -> dict[str, Any]:
    return discord.user_message(channel_id=channel, author_id=HUMAN, content=f"<@{BOT_ID}> {text}",
                                mentions=[BOT_ID], guild_id=GUILD)


def _answered(discord: FakeDiscord, channel: str, count: int = 1) -> list[dict[str, Any]]:
    """The bot's messages in `channel` once `count` answers there carry their 👍/👎 buttons (they are final)."""
    def done() -> list[dict[str, Any]] | None:
        found = bot_messages(discord, channel)
        final = [m["id"] for m in found if m.get("components")]
        # The answer's messages are recorded (for reactions) right after the last edit: wait for that too.
        recorded = len(final) >= count and ChatMessage.objects.filter(message_id=final[-1]).exists()
        return found if recorded else None
    return discord.wait_for(done, timeout=60)


def _thread_of(discord: FakeDiscord, message: dict[str, Any]) -> dict[str, Any]:
    return discord.wait_for(lambda: next((t for t in discord.threads()
                                          if t.get("starter_message_id") == message["id"]), None), timeout=30)


def test_a_mention_opens_a_thread_named_after_it_and_the_answer_streams_in_by_edits(
        discord: FakeDiscord, listener: ListenerThread, discord_integration: Integration) -> None:
    asked = _mention(discord)
    thread = _thread_of(discord, asked)
    assert thread["name"] == QUESTION and thread["parent_id"] == SUPPORT and thread["owner_id"] == BOT_ID
    replies = _answered(discord, thread["id"])
    assert len(replies) == 1
    reply = replies[0]
    assert reply["_edits"][0] != THINKING and len(reply["_edits"]) >= 3, reply["_edits"]  # streamed, then final
    assert reply["content"].startswith(ANSWER)
    assert "**Sources**" in reply["content"] and "Trust" in reply["content"]
    assert "<http://openguru.test/g/docs/answers/" in reply["content"]  # the link is wrapped: no embed
    custom_ids = [c["custom_id"] for row in reply["components"] for c in row["components"]]
    question = Question.objects.get()
    assert custom_ids == [f"openguru:vote:1:{question.pk}", f"openguru:vote:-1:{question.pk}"]
    assert question.channel == Channel.DISCORD and question.binge.place == "Acme · #support"
    assert Thread.objects.get().external_thread_id == thread["id"]
    assert ChatMessage.objects.get().message_id == reply["id"]


def test_a_follow_up_in_the_thread_continues_the_conversation_without_a_mention(
        discord: FakeDiscord, listener: ListenerThread, discord_model: OpenAIFakeServer) -> None:
    thread = _thread_of(discord, _mention(discord))
    _answered(discord, thread["id"])
    discord.user_message(channel_id=thread["id"], author_id=HUMAN, content="And how long does it wait?",
                         guild_id=GUILD)
    _answered(discord, thread["id"], count=2)
    first, second = Question.objects.order_by("pk")
    assert first.binge_id == second.binge_id and Binge.objects.count() == 1
    prompts = [" ".join(text for _, text in r.messages) for r in discord_model.script.requests if r.stream]
    assert QUESTION in prompts[-1]  # the follow-up was answered with the conversation before it
    assert len(discord.threads()) == 1


def test_where_the_bot_may_not_answer_it_says_so_and_bots_own_messages_are_ignored(
        discord: FakeDiscord, listener: ListenerThread) -> None:
    asked = _mention(discord, channel=ELSEWHERE)
    refusal = discord.wait_for(lambda: bot_messages(discord, ELSEWHERE), timeout=30)[0]
    assert "not set up to answer in this channel" in refusal["content"]
    assert "http://openguru.test/dashboard/" in refusal["content"]
    assert refusal["message_reference"]["message_id"] == asked["id"]
    discord.user_message(channel_id=SUPPORT, author_id=HUMAN, content="just chatting", guild_id=GUILD)
    thread = _thread_of(discord, _mention(discord))
    _answered(discord, thread["id"])
    # The bot saw its own thinking/answer messages over the gateway and answered none of them.
    assert Question.objects.count() == 1 and len(discord.threads()) == 1


def test_every_message_channels_and_forum_posts_are_answered_without_a_mention(
        discord: FakeDiscord, listener: ListenerThread) -> None:
    asked = discord.user_message(channel_id=AUTO, author_id=HUMAN, content=QUESTION, guild_id=GUILD)
    _answered(discord, _thread_of(discord, asked)["id"])
    post = discord.user_forum_post(forum_id=FORUM, author_id=HUMAN, title="Retries", content=QUESTION)
    _answered(discord, post["id"])
    assert Question.objects.count() == 2


def test_feedback_by_button_and_by_reaction_lands_on_the_question(
        discord: FakeDiscord, listener: ListenerThread) -> None:
    thread = _thread_of(discord, _mention(discord))
    reply = _answered(discord, thread["id"])[-1]
    question = Question.objects.get()
    clicked = discord.button_click(BOT_TOKEN, channel_id=thread["id"], message_id=reply["id"], user_id=HUMAN,
                                   custom_id=f"openguru:vote:-1:{question.pk}")
    discord.wait_for(lambda: discord.interaction_responses(clicked), timeout=30)
    question.refresh_from_db()
    assert question.feedback == -1
    assert discord.interaction_responses(clicked)[0]["flags"] & 64  # the thanks is only for the voter
    discord.user_reaction(channel_id=thread["id"], message_id=reply["id"], user_id=HUMAN, emoji="👍")
    discord.wait_for(lambda: Question.objects.get().feedback == 1, timeout=30)
    discord.user_reaction(channel_id=thread["id"], message_id=reply["id"], user_id=HUMAN, emoji="👍", removed=True)
    discord.wait_for(lambda: Question.objects.get().feedback is None, timeout=30)


def test_a_long_answer_is_split_into_messages_under_2000_characters_without_breaking_its_code(
        discord: FakeDiscord, listener: ListenerThread, discord_model: OpenAIFakeServer) -> None:
    code = "\n".join(f"    step_{i} = run(task, attempt={i})  # retry" for i in range(90))
    long_answer = f"Here is the loop [1]:\n\n```python\n{code}\n```\n\nThat is all."
    discord_model.script = ChannelScript(long_answer, chunks=12)
    thread = _thread_of(discord, _mention(discord))
    parts = _answered(discord, thread["id"])
    assert len(parts) >= 3
    for part in parts:
        assert 0 < len(part["content"]) <= 2000 and open_at_end(part["content"]) is None, part["content"][-200:]
    assert all(f"step_{i} = run" in "".join(p["content"] for p in parts) for i in range(90))
    assert parts[-1]["components"] and not any(p["components"] for p in parts[:-1])
    assert ChatMessage.objects.count() == len(parts)


def test_ask_answers_privately_or_in_a_thread_that_remembers(discord: FakeDiscord, listener: ListenerThread) -> None:
    [command] = [c for c in discord.commands(APP_ID) if c["name"] == "ask"]
    assert {o["name"] for o in command["options"]} == {"question", "guru", "private"}
    private = discord.slash_command(BOT_TOKEN, guild_id=GUILD, channel_id=SUPPORT, user_id=HUMAN,
                                    options={"question": QUESTION, "private": True})
    def finished(interaction: str) -> list[dict[str, Any]] | None:
        responses = discord.interaction_responses(interaction)
        return responses if any("openguru:vote" in str(r["components"]) for r in responses) else None
    responses = discord.wait_for(lambda: finished(private), timeout=60)
    assert responses[0]["type"] == 5 and responses[0]["flags"] & 64  # deferred, ephemeral
    assert any(str(r["content"] or "").startswith(ANSWER) for r in responses)
    public = discord.slash_command(BOT_TOKEN, guild_id=GUILD, channel_id=SUPPORT, user_id=HUMAN,
                                   options={"question": QUESTION})
    discord.wait_for(lambda: discord.interaction_responses(public), timeout=30)
    thread = discord.wait_for(lambda: discord.threads(), timeout=30)[0]
    _answered(discord, thread["id"])
    discord.user_message(channel_id=thread["id"], author_id=HUMAN, content="And how long?", guild_id=GUILD)
    _answered(discord, thread["id"], count=2)
    assert Question.objects.count() == 3
    assert Question.objects.order_by("pk")[1].binge_id == Question.objects.order_by("pk")[2].binge_id
    refused = discord.slash_command(BOT_TOKEN, guild_id=GUILD, channel_id=ELSEWHERE, user_id=HUMAN,
                                    options={"question": QUESTION})
    said = discord.wait_for(lambda: discord.interaction_responses(refused), timeout=30)[0]
    assert said["flags"] & 64 and "not set up to answer" in said["content"]


def test_after_the_gateway_drops_the_connection_the_bot_resumes_and_answers(
        discord: FakeDiscord, listener: ListenerThread) -> None:
    discord.drop_connections(BOT_TOKEN)
    discord.wait_for(lambda: discord.resumes(BOT_TOKEN) >= 1 and discord.connected(BOT_TOKEN), timeout=60)
    thread = _thread_of(discord, _mention(discord))
    _answered(discord, thread["id"])
    assert discord.identifies(BOT_TOKEN) == 1  # resumed, not a new session


def test_a_refused_token_and_a_missing_intent_are_shown_on_the_integration(
        discord: FakeDiscord, discord_integration: Integration) -> None:
    discord.add_bot("OTAx.no-intent.token", user_id="1100000000000000901", name="NoIntent",
                    application_id="1100000000000000801",
                    message_content=False)
    Integration.objects.filter(pk=discord_integration.pk).update(access_token="OTAx.no-intent.token")
    running = ListenerThread().start()
    try:
        discord.wait_for(lambda: "Message Content intent" in Integration.objects.get().last_error, timeout=30)
        Integration.objects.filter(pk=discord_integration.pk).update(access_token="not-a-token")
        discord.wait_for(lambda: "refused the bot token" in Integration.objects.get().last_error, timeout=30)
    finally:
        running.stop()


def test_direct_messages_are_refused_until_a_maintainer_allows_them(
        discord: FakeDiscord, listener: ListenerThread, discord_integration: Integration) -> None:
    asked = discord.user_dm(BOT_TOKEN, author_id=HUMAN, content=QUESTION)
    refusal = discord.wait_for(lambda: bot_messages(discord, asked["channel_id"]), timeout=30)[0]
    assert "does not answer direct messages" in refusal["content"] and not Question.objects.exists()
    Integration.objects.filter(pk=discord_integration.pk).update(allow_dm=True)
    discord.user_dm(BOT_TOKEN, author_id=HUMAN, content=QUESTION)
    reply = _answered(discord, asked["channel_id"])[-1]
    assert reply["content"].startswith(ANSWER) and Question.objects.get().binge.place == "Discord · direct message"


def test_where_two_gurus_share_the_bot_ask_names_the_guru(
        discord: FakeDiscord, listener: ListenerThread, discord_integration: Integration,
        django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> None:
    ops = make_indexed_guru(django_capture_on_commit_callbacks, slug="ops")
    Guru.objects.filter(pk=ops.pk).update(name="Ops Guru")
    connect_discord(ops, channels=[{"id": SUPPORT, "mode": "mention"}])
    assert listener.supervisor is not None
    discord.wait_for(lambda: len(listener.supervisor.running[BOT_TOKEN].bot.integration_ids) == 2, timeout=30)
    unnamed = discord.slash_command(BOT_TOKEN, guild_id=GUILD, channel_id=SUPPORT, user_id=HUMAN,
                                    options={"question": QUESTION})
    said = discord.wait_for(lambda: discord.interaction_responses(unnamed), timeout=30)[0]
    assert said["flags"] & 64 and "Several gurus answer here (Docs Guru, Ops Guru)" in said["content"]
    named = discord.slash_command(BOT_TOKEN, guild_id=GUILD, channel_id=SUPPORT, user_id=HUMAN,
                                  options={"question": QUESTION, "guru": "ops", "private": True})
    discord.wait_for(lambda: any("openguru:vote" in str(r["components"])
                                 for r in discord.interaction_responses(named)), timeout=60)
    assert Question.objects.get().guru_id == ops.pk
    # A mention in the shared channel goes to the guru connected first; its thread stays that guru's.
    thread = _thread_of(discord, _mention(discord))
    _answered(discord, thread["id"])
    assert Question.objects.order_by("pk").last().guru_id == discord_integration.guru_id


def test_a_question_the_sources_do_not_cover_is_refused_as_a_refusal(
        discord: FakeDiscord, listener: ListenerThread) -> None:
    thread = _thread_of(discord, _mention(discord, text=f"How long do I proof {UNCOVERED} dough?"))
    reply = _answered(discord, thread["id"])[-1]
    assert "Not answered: Docs Guru's sources do not cover this question" in reply["content"]
    assert "**Sources**" not in reply["content"] and "Trust" not in reply["content"]
    assert Question.objects.get().out_of_context


def test_the_operators_discord_bot_token_serves_the_guru_set_up_to_use_it(
        settings: SettingsWrapper, discord: FakeDiscord, discord_integration: Integration) -> None:
    settings.DISCORD_BOT_TOKEN = BOT_TOKEN
    Integration.objects.filter(pk=discord_integration.pk).update(access_token="", token_from_env=True)
    running = ListenerThread().start()
    try:
        discord.wait_for(lambda: discord.connected(BOT_TOKEN), timeout=30)
        thread = _thread_of(discord, _mention(discord))
        assert _answered(discord, thread["id"])[-1]["content"].startswith(ANSWER)
    finally:
        running.stop()


def test_where_discord_refuses_a_thread_the_asker_and_the_tab_are_told(
        discord: FakeDiscord, listener: ListenerThread, discord_integration: Integration) -> None:
    discord.deny_threads(SUPPORT)
    assert listener.supervisor is not None
    # READY clears the tab's last error (the connection works): wait for it, so it cannot clear this one.
    discord.wait_for(lambda: listener.supervisor.running[BOT_TOKEN].bot.is_ready(), timeout=30)
    asked = _mention(discord)
    said = discord.wait_for(lambda: bot_messages(discord, SUPPORT), timeout=30)[0]
    assert "I could not answer here (Discord said: Missing Permissions)" in said["content"]
    assert said["message_reference"]["message_id"] == asked["id"]
    error = Integration.objects.get().last_error
    assert "refused to open a thread or post in #support: Missing Permissions" in error
    assert not Question.objects.exists() and not discord.threads()
