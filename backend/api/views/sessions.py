"""Conversations (sessions) and questions of a guru, including the ones its sources could not answer."""

from __future__ import annotations

from django.db.models import Count, QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.answering.models import Binge, Question
from backend.api.auth import guru_for
from backend.api.schema import errors
from backend.core.errors import NotFound

_FLAGS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


class QuestionOutput(serializers.ModelSerializer):
    session_id = serializers.UUIDField(source="binge_id", allow_null=True)

    class Meta:
        model = Question
        fields = ["id", "slug", "question", "user_question", "content", "references", "trust_score", "channel",
                  "out_of_context", "intent", "latency_ms", "session_id", "parent_id", "created_at", "timings",
                  "usage", "feedback", "state", "error_code", "error_id"]


class SessionOutput(serializers.ModelSerializer):
    questions = serializers.IntegerField(source="question_count")
    root_question = serializers.CharField(source="root_question.question", default="", allow_null=True)

    class Meta:
        model = Binge
        fields = ["id", "channel", "created_at", "last_used_at", "questions", "root_question"]


class SessionDetailOutput(serializers.Serializer):
    id = serializers.UUIDField()
    channel = serializers.CharField()
    questions = QuestionOutput(many=True)


class SessionListApi(generics.ListAPIView):
    """Conversations of a guru, most recently used first."""

    serializer_class = SessionOutput

    def get_queryset(self) -> QuerySet[Binge]:
        guru = guru_for(self.request, self.kwargs["slug"])
        return (Binge.objects.filter(guru=guru).select_related("root_question")
                .annotate(question_count=Count("questions")).order_by("-last_used_at", "-created_at"))

    @extend_schema(operation_id="sessions_list", tags=["sessions"],
                   responses={200: SessionOutput(many=True), **errors(401, 403, 404, 429)})
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)


class SessionDetailApi(APIView):
    """One conversation with its questions and answers, in order."""

    @extend_schema(operation_id="sessions_retrieve", responses={200: SessionDetailOutput, **errors(401, 403, 404, 429)},
                   tags=["sessions"])
    def get(self, request: Request, slug: str, session_id: str) -> Response:
        guru = guru_for(request, slug)
        binge = Binge.objects.filter(guru=guru, pk=session_id).first()
        if binge is None:
            raise NotFound("No such session for this guru.")
        questions = binge.questions.order_by("created_at")
        return Response({"id": str(binge.pk), "channel": binge.channel,
                         "questions": QuestionOutput(questions, many=True).data})


class QuestionListApi(generics.ListAPIView):
    """Questions asked to a guru, newest first; `?out_of_context=true` lists what the sources lack."""

    serializer_class = QuestionOutput

    def get_queryset(self) -> QuerySet[Question]:
        guru = guru_for(self.request, self.kwargs["slug"])
        questions = Question.objects.filter(guru=guru).order_by("-created_at")
        flag = self.request.query_params.get("out_of_context")
        if flag is not None:
            value = _FLAGS.get(flag.strip().lower())
            if value is None:
                # Anything else used to filter as false silently: say so instead.
                raise ValidationError({"out_of_context": ["Use true or false."]})
            questions = questions.filter(out_of_context=value)
        return questions

    @extend_schema(operation_id="questions_list", parameters=[OpenApiParameter("out_of_context", bool, required=False)],
                   responses={200: QuestionOutput(many=True), **errors(400, 401, 403, 404, 429)},
                   tags=["questions"])
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)
