"""Dashboard URLs: settings_page."""

from django.urls import path

from backend.dashboard.placeholder import coming_soon, global_soon

urlpatterns = [
    path("dashboard/g/<slug:slug>/settings/", coming_soon, name="guru-settings"),
    path("dashboard/settings/", global_soon, name="settings"),
]
