"""How the dashboard names a question's channel: "Slack · Acme · #general" for a chat thread, else the channel."""

from __future__ import annotations

from backend.answering.models import Channel, Question

_LABELS = dict(Channel.choices)


def channel_label(channel: str, place: str | None = "") -> str:
    """The channel's name, followed by the workspace and channel of a chat conversation when it has one."""
    label = _LABELS.get(channel, channel)
    return f"{label} · {place}" if place else label


def question_place(question: Question) -> str:
    """Where a chat question was asked ("Acme · #general"); "" elsewhere. Select `binge` with the question."""
    return question.binge.place if question.binge_id is not None and question.binge is not None else ""


def question_channel(question: Question) -> str:
    return channel_label(question.channel, question_place(question))
