"""Dashboard URLs: the guru's memory."""

from django.urls import path

from backend.dashboard.memory import views

PREFIX = "dashboard/g/<slug:slug>/memory/"
NOTE = f"{PREFIX}<int:memory_id>/"

urlpatterns = [
    path(PREFIX, views.memory_view, name="memory"),
    path(f"{PREFIX}add/", views.memory_add_view, name="memory-add"),
    path(f"{NOTE}approve/", views.memory_approve_view, name="memory-approve"),
    path(f"{NOTE}reject/", views.memory_reject_view, name="memory-reject"),
    path(f"{NOTE}edit/", views.memory_edit_view, name="memory-edit"),
    path(f"{NOTE}delete/", views.memory_delete_view, name="memory-delete"),
]
