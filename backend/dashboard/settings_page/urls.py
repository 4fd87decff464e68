"""Dashboard URLs: settings_page."""

from django.urls import path

from backend.dashboard.settings_page import views

urlpatterns = [
    path("dashboard/g/<slug:slug>/settings/", views.guru_settings, name="guru-settings"),
    path("dashboard/settings/", views.instance_settings, name="settings"),
    path("dashboard/settings/reindex/", views.reindex_all, name="settings-reindex"),
]
