"""Admin for API keys: adding one issues a random key, shows it once, stores its hash."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from backend.api.models import APIKey
from backend.api.services import api_key_create, api_key_revoke


class APIKeyAddForm(forms.ModelForm):
    class Meta:
        model = APIKey
        fields = ["user", "guru", "name", "rate_limit_per_minute"]


@admin.register(APIKey)
class APIKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "user", "guru", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_form(self, request: HttpRequest, obj: APIKey | None = None, change: bool = False,
                 **kwargs: Any) -> type[forms.ModelForm[Any]]:
        if obj is None:
            kwargs["form"] = APIKeyAddForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request: HttpRequest, obj: APIKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = api_key_create(
            user=obj.user, name=obj.name, guru=obj.guru, rate_limit_per_minute=obj.rate_limit_per_minute
        )
        obj.pk = issued.api_key.pk
        messages.warning(request, f"Copy this key now, it will not be shown again: {issued.raw}")

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[APIKey]) -> None:
        for api_key in queryset:
            api_key_revoke(api_key=api_key)
