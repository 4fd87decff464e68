"""POST /api/v1/<guru>/questions/<id>/feedback/: record, change or clear a user's vote on an answer."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.answering.feedback import DOWN, UP, feedback_set, guru_question
from backend.api.auth import guru_for
from backend.api.schema import JSONParser, errors


class FeedbackInput(serializers.Serializer):
    feedback = serializers.ChoiceField(
        choices=[(UP, "Helpful"), (DOWN, "Not helpful")], allow_null=True,
        help_text="1 for thumbs up, -1 for thumbs down, null to clear the vote.")

    def validate_feedback(self, value: int | None) -> int | None:
        # ChoiceField matches by str(): accept only real JSON numbers, never "1" or true.
        raw = self.initial_data.get("feedback") if isinstance(self.initial_data, dict) else None
        if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int)):
            raise serializers.ValidationError("Must be 1, -1 or null.")
        return value  # ChoiceField has already mapped the input to a choice: UP, DOWN or None


class FeedbackOutput(serializers.Serializer):
    question_id = serializers.IntegerField()
    feedback = serializers.IntegerField(allow_null=True)


class QuestionFeedbackApi(APIView):
    """A user's thumbs up or down on one answer of the guru, e.g. forwarded by a bot or an integration."""

    parser_classes = [JSONParser]  # a JSON number or null: form fields would carry only strings

    @extend_schema(operation_id="questions_feedback", request=FeedbackInput,
                   responses={200: FeedbackOutput, **errors(400, 401, 403, 404, 429)}, tags=["questions"])
    def post(self, request: Request, slug: str, question_id: int) -> Response:
        guru = guru_for(request, slug)
        data = FeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        question = guru_question(guru=guru, question_id=question_id)
        feedback_set(question=question, value=data.validated_data["feedback"])
        return Response({"question_id": question.pk, "feedback": question.feedback})
