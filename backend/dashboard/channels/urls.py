"""Dashboard URLs: channels."""

from django.urls import path

from backend.dashboard.placeholder import coming_soon

urlpatterns = [
    path("dashboard/g/<slug:slug>/channels/", coming_soon, name="channels"),
    path("dashboard/g/<slug:slug>/integrations/", coming_soon, name="integrations"),
]
