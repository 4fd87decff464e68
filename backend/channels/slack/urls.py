"""Slack's endpoints, as the generated app manifest names them."""

from django.urls import path

from backend.channels.slack import views

app_name = "slack"
urlpatterns = [
    path("integrations/slack/events/", views.events, name="events"),
    path("integrations/slack/interactivity/", views.interactivity, name="interactivity"),
]
