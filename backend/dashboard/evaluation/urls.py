"""Dashboard URLs: evaluation sets and runs."""

from django.urls import path

from backend.dashboard.evaluation import item_views, run_views, views

PREFIX = "dashboard/g/<slug:slug>/evaluation/"
SET = f"{PREFIX}sets/<int:set_id>/"

urlpatterns = [
    path(PREFIX, views.evaluation, name="evaluation"),
    path(f"{PREFIX}sets/new/", views.set_create, name="evaluation-set-create"),
    path(f"{PREFIX}import/", views.import_view, name="evaluation-import"),
    path(f"{PREFIX}seed/", item_views.seed, name="evaluation-seed"),
    path(SET, views.set_detail, name="evaluation-set"),
    path(f"{SET}import/", views.set_import_view, name="evaluation-set-import"),
    path(f"{SET}export.jsonl", views.set_export_view, name="evaluation-set-export"),
    path(f"{SET}delete/", views.set_delete, name="evaluation-set-delete"),
    path(f"{SET}items/add/", item_views.item_add, name="evaluation-item-add"),
    path(f"{SET}items/<int:item_id>/", item_views.item_edit, name="evaluation-item"),
    path(f"{SET}items/<int:item_id>/delete/", item_views.item_delete, name="evaluation-item-delete"),
    path(f"{SET}run/", run_views.run_start_view, name="evaluation-run-start"),
    path(f"{PREFIX}runs/", run_views.runs, name="evaluation-runs"),
    path(f"{PREFIX}runs/progress.json", run_views.runs_progress_json, name="evaluation-progress"),
    path(f"{PREFIX}runs/<int:run_id>/", run_views.run_detail, name="evaluation-run"),
    path(f"{PREFIX}runs/<int:run_id>/apply/", run_views.threshold_apply_view, name="evaluation-threshold-apply"),
]
