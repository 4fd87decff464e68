"""Admin for Slack/Discord integrations and their threads; secrets are never displayed."""

from django.contrib import admin

from backend.integrations.models import ChatEvent, ChatMessage, Integration, OAuthState, Thread


@admin.register(Integration)
class IntegrationAdmin(admin.ModelAdmin):
    list_display = ["__str__", "kind", "guru", "allow_dm", "created_at"]
    list_filter = ["kind"]
    exclude = ["access_token", "refresh_token", "signing_secret", "app_token", "client_secret"]


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ["external_thread_id", "integration", "binge", "created_at"]


@admin.register(ChatEvent)
class ChatEventAdmin(admin.ModelAdmin):
    list_display = ["event_id", "integration", "received_at"]


@admin.register(ChatMessage)
class ChatMessageAdmin(admin.ModelAdmin):
    list_display = ["message_id", "channel_id", "integration", "question"]
    raw_id_fields = ["question"]


@admin.register(OAuthState)
class OAuthStateAdmin(admin.ModelAdmin):
    list_display = ["guru", "created_at", "used_at"]
    exclude = ["nonce"]
