"""Pieces shared by the API views: the X-API-KEY security scheme, the error body, pagination, a safe JSON parser."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import parsers, serializers
from rest_framework.exceptions import ParseError
from rest_framework.pagination import PageNumberPagination

from backend.api.auth import HEADER
from backend.channels.errors import STABLE_CODES

_ERROR_TEXT = {
    400: "Invalid input.",
    401: "Missing, unknown or revoked API key.",
    403: "The key or user may not use this guru or operation.",
    404: "No such guru or object.",
    409: "It already exists.",
    413: "The upload or request body is too large.",
    429: "Too many requests for this key; see the Retry-After header.",
    503: "A dependency is unavailable.",
}


class APIKeyScheme(OpenApiAuthenticationExtension):
    """Documents APIKeyAuthentication as the `ApiKeyAuth` apiKey scheme in the X-API-KEY header."""

    target_class = "backend.api.auth.APIKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": HEADER}


class ErrorSerializer(serializers.Serializer):
    """The one error body of every channel (API, guru page, widget): a stable code, a message for people
    and, where useful, structured details."""

    code = serializers.CharField(help_text="Stable machine-readable code: " + ", ".join(f"`{c}`" for c in STABLE_CODES))
    msg = serializers.CharField(help_text="Human-readable message (Gurubase's clients read `msg` too).")
    detail = serializers.JSONField(required=False, help_text="Structured details, e.g. the errors per field.")
    error_id = serializers.CharField(required=False, help_text=(
        "For failures with an internal cause: the id it was logged under (quote it to the maintainer)."))

    class Meta:
        ref_name = "Error"


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses for `extend_schema(responses=…)`; 401 and 429 apply to every authenticated call."""
    return {code: OpenApiResponse(ErrorSerializer, description=_ERROR_TEXT[code]) for code in statuses}


class StrictInputSerializer(serializers.Serializer):
    """JSON input whose strings are strings and whose booleans are booleans.

    DRF would read 0 as "0" for a text field and 0 or "yes" as a boolean; an API client that sends the wrong
    type gets a 400 naming the field instead of a guess.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            wrong: dict[str, list[str]] = {}
            for name, field in self.fields.items():
                value = data.get(name)
                if field.read_only or value is None:
                    continue
                if isinstance(field, serializers.BooleanField) and not isinstance(value, bool):
                    wrong[name] = ["Must be true or false."]
                elif isinstance(field, serializers.CharField) and not isinstance(value, str):
                    wrong[name] = ["Must be a string."]
            if wrong:
                raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


class Pagination(PageNumberPagination):
    """`?page=` and `?page_size=` (at most 100), answered as `{count, next, previous, results}`."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 100


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, but a body nested deeper than Python's recursion limit is a 400, not a 500."""

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - the document is nested too deeply.") from exc


def document_unsupported_media(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular hook: every operation that takes a body may answer 415 for a body it cannot parse."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {}) if isinstance(operation, dict) else {}
            if "requestBody" in operation and "400" in responses:
                responses.setdefault("415", {"description": "The request body's media type is not accepted or "
                                                            "the body cannot be parsed as it.",
                                             "content": responses["400"].get("content", {})})
    return result
