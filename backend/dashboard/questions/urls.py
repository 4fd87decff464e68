"""Dashboard URLs: questions."""

from django.urls import path

from backend.dashboard.placeholder import coming_soon

urlpatterns = [
    path("dashboard/g/<slug:slug>/questions/", coming_soon, name="questions"),
    path("dashboard/g/<slug:slug>/questions/<int:question_id>/", coming_soon, name="question-detail"),
    path("dashboard/g/<slug:slug>/unanswered/", coming_soon, name="unanswered"),
]
