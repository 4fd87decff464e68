"""Dashboard URLs: analytics."""

from django.urls import path

from backend.dashboard.placeholder import coming_soon

urlpatterns = [
    path("dashboard/g/<slug:slug>/analytics/", coming_soon, name="analytics"),
]
