"""Dashboard URLs: analytics."""

from django.urls import path

from backend.dashboard.analytics import views

urlpatterns = [
    path("dashboard/g/<slug:slug>/analytics/", views.analytics, name="analytics"),
]
