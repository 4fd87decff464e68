"""App configuration for the channel layer (no models; it holds channel commands such as `mcp`)."""

from django.apps import AppConfig


class ChannelsConfig(AppConfig):
    name = "backend.channels"
    label = "channels"
    verbose_name = "Channels"
