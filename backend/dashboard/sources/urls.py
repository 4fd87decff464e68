"""Dashboard URLs: sources."""

from django.urls import path

from backend.dashboard.placeholder import coming_soon

urlpatterns = [
    path("dashboard/g/<slug:slug>/sources/", coming_soon, name="sources"),
]
