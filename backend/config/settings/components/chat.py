"""Where the chat bots reach their platforms: Slack's Web API and OAuth pages (a local fake in tests)."""

from __future__ import annotations

from backend.config.env import env_str

# Overridable so tests (and a Slack-compatible relay, if one is used) point the real SDK elsewhere.
OPENGURU_SLACK_API_URL = env_str("OPENGURU_SLACK_API_URL", "https://slack.com/api/")
OPENGURU_SLACK_AUTHORIZE_URL = env_str("OPENGURU_SLACK_AUTHORIZE_URL", "https://slack.com/oauth/v2/authorize")
# The socket process looks for added, changed and removed Socket Mode integrations this often.
OPENGURU_SLACK_SOCKET_RESCAN_S = float(env_str("OPENGURU_SLACK_SOCKET_RESCAN_S", "5"))
# Slack allows about one chat.update per second per message; we stay under it when streaming is unavailable.
OPENGURU_SLACK_UPDATE_INTERVAL_S = float(env_str("OPENGURU_SLACK_UPDATE_INTERVAL_S", "1.2"))
