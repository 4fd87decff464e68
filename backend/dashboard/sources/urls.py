"""Dashboard URLs: sources."""

from django.urls import path

from backend.dashboard.sources import views

PREFIX = "dashboard/g/<slug:slug>/sources/"

urlpatterns = [
    path(PREFIX, views.sources, name="sources"),
    path(f"{PREFIX}add/<str:kind>/", views.source_add, name="source-add"),
    path(f"{PREFIX}actions/", views.sources_action, name="sources-action"),
    path(f"{PREFIX}delete/", views.sources_delete_confirmed, name="sources-delete"),
    path(f"{PREFIX}progress.json", views.sources_progress_json, name="sources-progress"),
    path(f"{PREFIX}<int:source_id>/file/", views.source_file, name="source-file"),
    path(f"{PREFIX}<int:source_id>/", views.source_detail, name="source"),
    path(f"{PREFIX}<int:source_id>/rename/", views.source_rename_view, name="source-rename"),
]
