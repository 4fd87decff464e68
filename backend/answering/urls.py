"""URLs of the public guru pages."""

from django.urls import path

from backend.answering import views

app_name = "answering"
urlpatterns = [
    path("g/<slug:slug>/", views.guru_page, name="guru-page"),
    path("g/<slug:slug>/ask/", views.guru_ask, name="guru-ask"),
    path("g/<slug:slug>/answers/<str:token>/", views.shared_answer, name="shared-answer"),
    path("g/<slug:slug>/feedback/", views.guru_feedback, name="guru-feedback"),
    path("sources/<int:source_id>/file", views.source_file, name="source-file"),
]
