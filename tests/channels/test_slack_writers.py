"""Long answers in Slack: a streamed answer past one message's size goes on in the next with its code block
closed and reopened, and the chat.update fallback splits the formatted answer over messages the same way."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from backend.adapters.slack.web import SlackWeb
from backend.channels.slack.writers import STREAM_CAP, Streamed, Target, Updated, defused
from tests.fakes.slack_server import FakeSlack

CHANNEL, THREAD = "C0LONG", "1700000000.000100"
FENCE = "```python"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_channel(CHANNEL, "long")
        yield fake


def _target(slack: FakeSlack) -> Target:
    return Target(SlackWeb(slack.bot_token, base_url=slack.api_url), CHANNEL, THREAD, slack.team_id, "U0HUMAN")


def _balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.strip().startswith("```")) % 2 == 0


def _long_answer() -> list[str]:
    """Deltas of an answer whose code block straddles the first message's end."""
    prose = ["Some words about the setting. " * 10 + "\n\n" for _ in range(int(STREAM_CAP * 0.9) // 300)]
    code = [f"{FENCE}\n"] + [f"value_{n} = compute({n})  # step {n}\n" for n in range(120)] + ["```\n", "Done [1]."]
    return prose + code


def test_a_streamed_answer_past_one_message_continues_in_the_next_with_its_code_block_reopened(
        slack: FakeSlack) -> None:
    writer = Streamed(_target(slack))
    writer.status("Searching the sources…")
    deltas = _long_answer()
    for delta in deltas:
        writer.append(delta)
    sent = writer.finish("".join(deltas), [{"type": "context", "elements": [{"type": "mrkdwn", "text": "end"}]}])
    streams = slack.streams()
    assert len(sent) == len(streams) == 2 and all(s.state == "completed" and s.thread_ts == THREAD for s in streams)
    first, second = streams[0].text, streams[1].text
    assert len(first) <= STREAM_CAP + 10 and first.rstrip().endswith("```") and _balanced(first)
    assert second.startswith(FENCE + "\n") and _balanced(second)
    assert streams[1].blocks and not streams[0].blocks  # the footer goes under the last message only
    restored = first.rstrip().removesuffix("```").rstrip("\n") + "\n" + second.removeprefix(FENCE + "\n")
    assert restored.replace("\n", "") == "".join(deltas).replace("\n", "")


def test_the_fallback_splits_a_long_answer_into_section_blocks_over_messages_without_breaking_code(
        slack: FakeSlack) -> None:
    text = "".join(_long_answer()) * 5  # ~50,000 characters: more than one message of 12 sections
    writer = Updated(_target(slack), interval=0.0)
    writer.status("Searching the sources…")
    writer.append(text)
    sent = writer.finish(text, [{"type": "context", "elements": [{"type": "mrkdwn", "text": "end"}]}])
    assert len(sent) >= 2
    messages = [m for m in slack.thread(CHANNEL, THREAD) if m.get("ts") in sent]
    sections = [b["text"]["text"] for m in messages for b in m["blocks"] if b["type"] == "section"]
    assert all(len(s) <= 3000 and _balanced(s) for s in sections)
    assert all(len(json.dumps(m["blocks"])) < 50_000 and len(m["blocks"]) <= 50 for m in messages)
    assert messages[-1]["blocks"][-1]["type"] == "context"


def test_slack_markup_from_a_source_or_the_model_is_not_streamed_as_markup() -> None:
    assert defused("ping <!channel> and <@U123> in <#C1>") == "ping <\u200b!channel> and <\u200b@U123> in <\u200b#C1>"


def test_each_research_step_is_a_task_of_the_stream_and_an_edit_of_the_fallbacks_status(slack: FakeSlack) -> None:
    streamed = Streamed(_target(slack))
    streamed.status("Searching the sources…")
    streamed.step("💭 Searching for “retries”…")
    streamed.step("💭 Searching for “retries”: done")
    streamed.append("Retries wait [1].")
    streamed.finish("Retries wait [1].", [])
    tasks = [(c["id"], c["status"]) for c in slack.streams()[0].chunks if c.get("type") == "task_update"]
    assert tasks == [("search", "in_progress"), ("search", "complete"), ("step-1", "in_progress"),
                     ("step-1", "complete"), ("step-2", "in_progress"), ("step-2", "complete")]
    updated = Updated(_target(slack), interval=0.0)
    updated.status("Searching the sources…")
    updated.step("💭 Searching for “acks”…")
    [message] = [m for m in slack.thread(CHANNEL, THREAD) if m.get("ts") == updated.ts]
    assert message["text"] == "_💭 Searching for “acks”…_"
