"""Dashboard URLs: questions."""

from django.urls import path

from backend.dashboard.questions import views

urlpatterns = [
    path("dashboard/g/<slug:slug>/questions/", views.question_list_view, name="questions"),
    path("dashboard/g/<slug:slug>/questions/export.csv", views.question_export_view, name="questions-export"),
    path("dashboard/g/<slug:slug>/questions/<int:question_id>/", views.question_detail_view, name="question-detail"),
    path("dashboard/g/<slug:slug>/questions/<int:question_id>/correct/", views.question_correct_view,
         name="question-correct"),
    path("dashboard/g/<slug:slug>/unanswered/", views.unanswered_view, name="unanswered"),
]
