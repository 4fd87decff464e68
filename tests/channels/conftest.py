"""The chat bots' fixtures, for every test of this package (each is named for its platform, so none shadows another)."""

from tests.channels.discord_support import discord, discord_guru, discord_integration, discord_model, listener
from tests.channels.slack_support import integration, slack, slack_guru, slack_model

__all__ = ["discord", "discord_guru", "discord_integration", "discord_model", "integration", "listener", "slack",
           "slack_guru", "slack_model"]
