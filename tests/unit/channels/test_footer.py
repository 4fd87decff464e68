"""What a bot shows while the agentic path researches: one bounded line per step, nothing for the other stages."""

from __future__ import annotations

from backend.channels.chat.discord_text import escape_title
from backend.channels.chat.footer import thinking_line


def test_a_thinking_step_is_one_bounded_line_and_other_stages_are_not_shown() -> None:
    assert thinking_line({"stage": "thinking", "text": "Searching for “retries”", "done": False}) \
        == "💭 Searching for “retries”…"
    assert thinking_line({"stage": "thinking", "text": "Searching for “retries”: done", "done": True}) \
        == "💭 Searching for “retries”: done"
    assert thinking_line({"stage": "retrieving"}) is None and thinking_line({"stage": "thinking"}) is None
    long = thinking_line({"stage": "thinking", "text": "x " * 500, "done": True})
    assert long is not None and len(long) <= 203


def test_a_step_naming_a_mention_cannot_ping_on_discord() -> None:
    line = thinking_line({"stage": "thinking", "text": "Searching for “@everyone <@123>”", "done": False})
    assert line is not None
    shown = escape_title(line)  # what the Discord bot edits its "thinking…" message to
    assert "@everyone" not in shown and "<@123>" not in shown
