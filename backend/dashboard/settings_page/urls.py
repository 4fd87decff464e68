"""Dashboard URLs: settings_page."""

from django.urls import path

from backend.dashboard.settings_page import views

urlpatterns = [
    path("dashboard/g/<slug:slug>/settings/", views.guru_settings, name="guru-settings"),
    path("dashboard/settings/", views.instance_settings, name="settings"),
    path("dashboard/settings/reindex/", views.reindex_all, name="settings-reindex"),
    path("dashboard/settings/llm/", views.llm_settings, name="settings-llm"),
    path("dashboard/settings/llm/test/", views.llm_test, name="settings-llm-test"),
]
