"""Where the chat bots reach their platforms: Slack's Web API and OAuth pages, Discord's REST API and gateway."""

from __future__ import annotations

from backend.config.env import env_str

# Overridable so tests (and a Slack-compatible relay, if one is used) point the real SDK elsewhere.
OPENGURU_SLACK_API_URL = env_str("OPENGURU_SLACK_API_URL", "https://slack.com/api/")
OPENGURU_SLACK_AUTHORIZE_URL = env_str("OPENGURU_SLACK_AUTHORIZE_URL", "https://slack.com/oauth/v2/authorize")
# The socket process looks for added, changed and removed Socket Mode integrations this often.
OPENGURU_SLACK_SOCKET_RESCAN_S = float(env_str("OPENGURU_SLACK_SOCKET_RESCAN_S", "5"))
# Slack allows about one chat.update per second per message; we stay under it when streaming is unavailable.
OPENGURU_SLACK_UPDATE_INTERVAL_S = float(env_str("OPENGURU_SLACK_UPDATE_INTERVAL_S", "1.2"))

# Discord: discord.py's REST base and gateway address (a local fake in tests; a Discord-compatible proxy if used).
OPENGURU_DISCORD_API_URL = env_str("OPENGURU_DISCORD_API_URL", "https://discord.com/api/v10")
OPENGURU_DISCORD_GATEWAY_URL = env_str("OPENGURU_DISCORD_GATEWAY_URL", "wss://gateway.discord.gg/")
# One guru's bot token given by the operator instead of pasted on the dashboard (never stored in the database).
DISCORD_BOT_TOKEN = env_str("DISCORD_BOT_TOKEN", "")
# The listener looks for added, changed and removed Discord integrations this often.
OPENGURU_DISCORD_RESCAN_S = float(env_str("OPENGURU_DISCORD_RESCAN_S", "5"))
# Discord allows 5 edits of a channel's messages per 5 s; one edit per interval streams under that.
OPENGURU_DISCORD_EDIT_INTERVAL_S = float(env_str("OPENGURU_DISCORD_EDIT_INTERVAL_S", "1.2"))
