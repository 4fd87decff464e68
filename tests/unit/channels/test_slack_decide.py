"""Which Slack events the bot answers: mentions, auto channels, DMs, threads, bots, edits, reactions."""

from __future__ import annotations

from typing import Any

import pytest

from backend.channels.slack.decide import Ask, Ignore, NotAllowed, React, Rules, decide, plain_text

BOT = "UBOT"
RULES = Rules(BOT, {"CMENTION": "mention", "CAUTO": "auto"}, allow_dm=False)


def _event(**fields: Any) -> dict[str, Any]:
    return {"type": "message", "user": "UASKER", "text": "how do I retry?", "ts": "100.1", "channel": "CAUTO",
            "channel_type": "channel", **fields}


def _decide(event: dict[str, Any], rules: Rules = RULES, known: frozenset[str] = frozenset()) -> object:
    return decide(event, rules, team="T1", known_thread=lambda key: key in known)


def test_a_mention_in_an_allowed_channel_is_answered_in_a_thread_from_that_message() -> None:
    decision = _decide(_event(type="app_mention", channel="CMENTION", text=f"<@{BOT}> how do I retry?"))
    assert decision == Ask("CMENTION", "UASKER", "T1", "how do I retry?", "100.1", dm=False)
    assert isinstance(decision, Ask) and decision.thread_key == "CMENTION:100.1"


def test_a_mention_inside_a_thread_continues_that_thread() -> None:
    decision = _decide(_event(type="app_mention", channel="CMENTION", text=f"<@{BOT}> and then?", thread_ts="90.0"))
    assert isinstance(decision, Ask) and decision.thread_ts == "90.0"


def test_a_mention_where_the_bot_may_not_answer_is_refused_to_the_asker_only() -> None:
    decision = _decide(_event(type="app_mention", channel="COTHER", text=f"<@{BOT}> hi"))
    assert decision == NotAllowed("COTHER", "UASKER", "100.1", dm=False)


def test_every_top_level_message_of_an_auto_channel_is_answered_but_not_of_a_mention_channel() -> None:
    assert isinstance(_decide(_event()), Ask)
    assert isinstance(_decide(_event(channel="CMENTION")), Ignore)
    assert isinstance(_decide(_event(channel="COTHER")), Ignore)  # never a note on every message elsewhere


def test_the_message_twin_of_a_mention_is_left_to_the_app_mention_event() -> None:
    assert isinstance(_decide(_event(text=f"<@{BOT}> how?")), Ignore)


def test_thread_replies_in_an_auto_channel_are_answered_only_in_threads_the_bot_is_in() -> None:
    reply = _event(ts="101.0", thread_ts="100.1")
    assert isinstance(_decide(reply), Ignore)
    assert isinstance(_decide(reply, known=frozenset({"CAUTO:100.1"})), Ask)


@pytest.mark.parametrize("fields", [
    {"user": BOT}, {"bot_id": "B1"}, {"subtype": "bot_message"}, {"subtype": "message_changed"},
    {"subtype": "message_deleted"}, {"subtype": "channel_join"}, {"edited": {"user": "UASKER"}}, {"user": ""},
])
def test_the_bot_itself_other_bots_edits_and_other_subtypes_are_ignored(fields: dict[str, Any]) -> None:
    assert isinstance(_decide(_event(**fields)), Ignore)
    assert isinstance(_decide(_event(type="app_mention", channel="CMENTION", **fields)), Ignore)


def test_a_file_shared_with_a_question_is_still_a_question() -> None:
    assert isinstance(_decide(_event(subtype="file_share")), Ask)


def test_direct_messages_only_when_enabled() -> None:
    dm = _event(channel="D1", channel_type="im")
    assert _decide(dm) == NotAllowed("D1", "UASKER", "100.1", dm=True)
    allowed = _decide(dm, Rules(BOT, {}, allow_dm=True))
    assert isinstance(allowed, Ask) and allowed.dm


def test_thumbs_reactions_are_feedback_and_other_reactions_are_not() -> None:
    added = {"type": "reaction_added", "user": "UASKER", "reaction": "+1::skin-tone-3",
             "item": {"type": "message", "channel": "CAUTO", "ts": "100.2"}}
    assert _decide(added) == React("CAUTO", "100.2", 1)
    assert _decide({**added, "reaction": "thumbsdown"}) == React("CAUTO", "100.2", -1)
    assert _decide({**added, "type": "reaction_removed"}) == React("CAUTO", "100.2", None, removed_value=1)
    assert isinstance(_decide({**added, "reaction": "tada"}), Ignore)
    assert isinstance(_decide({**added, "user": BOT}), Ignore)


def test_slack_markup_in_a_question_reads_as_a_person_wrote_it() -> None:
    text = f"<@{BOT}> ask <@U9|ann> in <#C1|ops> about <https://x.io/a|the doc> &amp; <https://x.io/b> &lt;3"
    assert plain_text(text, BOT) == "ask @ann in #ops about the doc (https://x.io/a) & https://x.io/b <3"


def test_an_empty_mention_asks_nothing() -> None:
    assert isinstance(_decide(_event(type="app_mention", channel="CMENTION", text=f"<@{BOT}>  ")), Ignore)
