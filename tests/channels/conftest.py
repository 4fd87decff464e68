"""The Slack bot's fixtures, for every test of this package (each is named for Slack, so none shadows another)."""

from tests.channels.slack_support import integration, slack, slack_guru, slack_model

__all__ = ["integration", "slack", "slack_guru", "slack_model"]
