"""REST API v1 routes (Gurubase-compatible paths first) and the OpenAPI schema with Swagger UI."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from backend.api.views import answers, feedback, gurus, health, sessions, sources, summaries

app_name = "api"
urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("api/v1/health/", health.HealthApi.as_view(), name="health"),
    path("api/v1/gurus/", gurus.GuruListCreateApi.as_view(), name="gurus"),
    path("api/v1/gurus/<slug:slug>/", gurus.GuruDetailApi.as_view(), name="guru"),
    path("api/v1/<slug:slug>/answer/", answers.AnswerApi.as_view(), name="answer"),
    path("api/v1/<slug:slug>/data-sources/", sources.DataSourcesApi.as_view(), name="data-sources"),
    path("api/v1/<slug:slug>/data-sources/reindex/", sources.DataSourcesReindexApi.as_view(), name="reindex"),
    path("api/v1/<slug:slug>/data-sources/<int:source_id>/", sources.DataSourceDetailApi.as_view(),
         name="data-source"),
    path("api/v1/<slug:slug>/data-sources/<int:source_id>/summary/", summaries.SourceSummaryApi.as_view(),
         name="data-source-summary"),
    path("api/v1/<slug:slug>/summary/", summaries.GuruSummaryApi.as_view(), name="guru-summary"),
    path("api/v1/<slug:slug>/sessions/", sessions.SessionListApi.as_view(), name="sessions"),
    path("api/v1/<slug:slug>/sessions/<uuid:session_id>/", sessions.SessionDetailApi.as_view(), name="session"),
    path("api/v1/<slug:slug>/questions/", sessions.QuestionListApi.as_view(), name="questions"),
    path("api/v1/<slug:slug>/questions/<int:question_id>/feedback/", feedback.QuestionFeedbackApi.as_view(),
         name="question-feedback"),
]
