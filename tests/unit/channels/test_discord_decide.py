"""Which Discord messages the bot answers, refuses or leaves, and where: the plain decision, no discord.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backend.channels.discord.decide import (
    Ask,
    Ignore,
    Incoming,
    NotAllowed,
    Place,
    Rules,
    decide,
    feedback_custom_id,
    pick,
    question_text,
    reaction_vote,
)
from backend.channels.discord.sinks import VoteButton

BOT = "900"
RULES = Rules(BOT, {"10": "mention", "20": "auto", "30": "auto"}, allow_dm=False)


def message(**fields: object) -> Incoming:
    base = Incoming(message_id="5001", channel_id="10", author_id="77", author_is_bot=False,
                    content=f"<@{BOT}> how do I run it?", place=Place.CHANNEL, guild_id="1", mentions_bot=True)
    return replace(base, **fields)  # type: ignore[arg-type]


def never_known(key: str) -> bool:
    return False


def always_known(key: str) -> bool:
    return True


def test_a_mention_in_an_allowed_channel_opens_a_thread_on_the_question() -> None:
    decision = decide(message(), RULES, known_thread=never_known)
    assert decision == Ask("10", "5001", "77", "how do I run it?", thread_id="", guild_id="1")
    assert isinstance(decision, Ask) and decision.opens_thread


def test_without_a_mention_a_mention_mode_channel_is_left_alone() -> None:
    decision = decide(message(content="how do I run it?", mentions_bot=False), RULES, known_thread=never_known)
    assert isinstance(decision, Ignore)


def test_every_message_mode_answers_without_a_mention() -> None:
    decision = decide(message(channel_id="20", content="how do I run it?", mentions_bot=False), RULES,
                      known_thread=never_known)
    assert isinstance(decision, Ask) and decision.question == "how do I run it?" and decision.opens_thread


def test_a_mention_where_the_bot_may_not_answer_gets_a_clear_refusal_and_silence_otherwise() -> None:
    assert decide(message(channel_id="99"), RULES, known_thread=never_known) == NotAllowed("99", "5001", dm=False)
    assert isinstance(decide(message(channel_id="99", mentions_bot=False, content="hi"), RULES,
                             known_thread=never_known), Ignore)


@pytest.mark.parametrize("fields", [{"author_is_bot": True}, {"author_id": BOT}, {"plain": False},
                                    {"place": Place.OTHER}])
def test_bots_the_bot_itself_system_messages_and_other_places_are_ignored(fields: dict[str, object]) -> None:
    assert isinstance(decide(message(**fields), RULES, known_thread=always_known), Ignore)


def test_a_thread_is_checked_by_its_parent_channel() -> None:
    in_thread = message(channel_id="7000", place=Place.THREAD, parent_id="10", thread_owner_id="77")
    decision = decide(in_thread, RULES, known_thread=never_known)
    assert isinstance(decision, Ask) and decision.thread_id == "7000" and not decision.opens_thread
    outside = replace(in_thread, parent_id="99")
    assert decide(outside, RULES, known_thread=never_known) == NotAllowed("7000", "5001", dm=False)


def test_follow_ups_in_the_bots_own_thread_need_no_mention() -> None:
    follow_up = message(channel_id="7000", place=Place.THREAD, parent_id="10", thread_owner_id=BOT,
                        content="and on Windows?", mentions_bot=False)
    decision = decide(follow_up, RULES, known_thread=always_known)
    assert isinstance(decision, Ask) and decision.thread_id == "7000" and decision.conversation_key == "7000"
    # The same words in a people's thread of a mention-mode channel are theirs.
    assert isinstance(decide(replace(follow_up, thread_owner_id="77"), RULES, known_thread=never_known), Ignore)


def test_a_forum_post_in_an_every_message_forum_is_answered_in_its_own_thread() -> None:
    post = message(message_id="8000", channel_id="8000", place=Place.THREAD, parent_id="30", thread_owner_id="77",
                   content="Crash on start", mentions_bot=False)
    decision = decide(post, RULES, known_thread=never_known)
    assert isinstance(decision, Ask) and decision.thread_id == "8000"
    reply = replace(post, message_id="8001")
    assert isinstance(decide(reply, RULES, known_thread=never_known), Ignore)
    assert isinstance(decide(reply, RULES, known_thread=always_known), Ask)


def test_a_thread_whose_channel_left_the_allow_list_still_answers_mentions() -> None:
    own = message(channel_id="7000", place=Place.THREAD, parent_id="99", thread_owner_id=BOT)
    assert isinstance(decide(own, RULES, known_thread=always_known), Ask)
    assert isinstance(decide(replace(own, mentions_bot=False), RULES, known_thread=always_known), Ignore)


def test_direct_messages_are_off_by_default_and_answered_when_allowed() -> None:
    dm = message(channel_id="600", place=Place.DM, guild_id="", content="what is it?", mentions_bot=False)
    assert decide(dm, RULES, known_thread=never_known) == NotAllowed("600", "5001", dm=True)
    decision = decide(dm, replace(RULES, allow_dm=True), known_thread=never_known)
    assert isinstance(decision, Ask) and decision.dm and decision.conversation_key == "600"


def test_a_bare_mention_asks_nothing() -> None:
    assert decide(message(content=f"<@{BOT}>  "), RULES, known_thread=never_known) == Ignore("nothing asked")


def test_question_text_drops_the_bots_mention_and_names_other_people() -> None:
    text = question_text(f"<@!{BOT}> can <@42> and <@43>   reset it?", BOT, {"42": "Ada"})
    assert text == "can @Ada and @someone reset it?"


@given(st.text(max_size=6000))
def test_question_text_is_bounded_and_never_holds_the_bots_mention(content: str) -> None:
    text = question_text(content, BOT, {})
    assert len(text) <= 4000 and f"<@{BOT}>" not in text and f"<@!{BOT}>" not in text


def test_reactions_and_buttons_vote() -> None:
    assert reaction_vote("👍") == 1 and reaction_vote("👍🏽") == 1 and reaction_vote("👎") == -1
    assert reaction_vote("🎉") == 0
    template = VoteButton.__discord_ui_compiled_template__  # how discord.py matches a click to the button
    found = template.fullmatch(feedback_custom_id(12, -1))
    assert found is not None and (found["value"], found["qid"]) == ("-1", "12")
    assert template.fullmatch("openguru:vote:2:12") is None and template.fullmatch("other:1:12") is None


def test_a_bot_shared_by_gurus_gives_each_message_to_the_guru_allowing_its_channel() -> None:
    rules = {1: Rules(BOT, {"10": "mention"}, False), 2: Rules(BOT, {"20": "auto"}, True)}
    assert pick(rules, message(channel_id="20")) == 2
    assert pick(rules, message(channel_id="7000", place=Place.THREAD, parent_id="10")) == 1
    assert pick(rules, message(channel_id="600", place=Place.DM)) == 2
    assert pick(rules, message(channel_id="99")) == 1
    assert pick({}, message()) is None
