"""Dashboard URLs: channels (API keys, widget ids) and integrations (the Slack and Discord cards)."""

from django.urls import path

from backend.dashboard.channels import discord_views, slack_views, views

_G = "dashboard/g/<slug:slug>"
urlpatterns = [
    path(f"{_G}/channels/", views.channels, name="channels"),
    path(f"{_G}/channels/keys/new/", views.apikey_create, name="apikey-create"),
    path(f"{_G}/channels/keys/<int:pk>/revoke/", views.apikey_revoke, name="apikey-revoke"),
    path(f"{_G}/channels/widgets/new/", views.widget_create, name="widget-create"),
    path(f"{_G}/channels/widgets/<int:pk>/", views.widget_edit, name="widget-edit"),
    path(f"{_G}/channels/widgets/<int:pk>/delete/", views.widget_delete, name="widget-delete"),
    path(f"{_G}/integrations/", slack_views.integrations, name="integrations"),
    path(f"{_G}/integrations/slack/connect/", slack_views.slack_connect_view, name="slack-connect"),
    path(f"{_G}/integrations/slack/oauth/", slack_views.slack_oauth_start, name="slack-oauth-start"),
    path(f"{_G}/integrations/slack/channels/", slack_views.slack_channels_view, name="slack-channels"),
    path(f"{_G}/integrations/slack/disconnect/", slack_views.slack_disconnect_view, name="slack-disconnect"),
    path(f"{_G}/integrations/discord/connect/", discord_views.discord_connect_view, name="discord-connect"),
    path(f"{_G}/integrations/discord/refresh/", discord_views.discord_refresh_view, name="discord-refresh"),
    path(f"{_G}/integrations/discord/channels/", discord_views.discord_channels_view, name="discord-channels"),
    path(f"{_G}/integrations/discord/disconnect/", discord_views.discord_disconnect_view, name="discord-disconnect"),
    # Fixed, so that one redirect URL in the app's manifest serves every guru: the guru comes from the state.
    path("dashboard/integrations/slack/oauth/callback/", slack_views.slack_oauth_callback,
         name="slack-oauth-callback"),
]
