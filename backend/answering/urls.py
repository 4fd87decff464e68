"""URLs of the public guru pages."""

from django.urls import path

from backend.answering import summary_views, views

app_name = "answering"
urlpatterns = [
    path("g/<slug:slug>/", views.guru_page, name="guru-page"),
    path("g/<slug:slug>/ask/", views.guru_ask, name="guru-ask"),
    path("g/<slug:slug>/answers/<str:token>/", views.shared_answer, name="shared-answer"),
    path("g/<slug:slug>/feedback/", views.guru_feedback, name="guru-feedback"),
    path("g/<slug:slug>/summary/", summary_views.guru_summary_page, name="guru-summary"),
    path("sources/<int:source_id>/file", views.source_file, name="source-file"),
]
