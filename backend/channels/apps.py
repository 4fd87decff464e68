"""App configuration for the channel layer (no models; it holds channel commands such as `mcp`)."""

from django.apps import AppConfig


class ChannelsConfig(AppConfig):
    name = "backend.channels"
    label = "channels"
    verbose_name = "Channels"

    def ready(self) -> None:
        # The Slack event task is queued by name (core.tasks.enqueue_on_commit): every process must know it.
        from backend.channels.slack import tasks  # noqa: F401
