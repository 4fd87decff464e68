"""Gurus: list the ones the caller may use, create one, read one with its collection's state, edit one."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.api.auth import guru_for, signed_in_user
from backend.api.models import APIKey
from backend.api.schema import JSONParser, Pagination, StrictInputSerializer, errors
from backend.gurus.icons import guru_icon_src
from backend.gurus.models import SLUG_PATTERN, Guru
from backend.gurus.selectors import guru_collection_report, guru_list_for_user
from backend.gurus.services import guru_create, guru_update
from backend.sources.selectors import source_status_counts

COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"


class GuruOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    domain_knowledge = serializers.CharField()
    intro_text = serializers.CharField()
    base_color = serializers.CharField()
    icon_url = serializers.SerializerMethodField()
    language = serializers.CharField()
    private = serializers.BooleanField()
    active = serializers.BooleanField()
    date_created = serializers.DateTimeField(source="created_at")
    date_updated = serializers.DateTimeField(source="updated_at")

    class Meta:
        ref_name = "Guru"

    def get_icon_url(self, guru: Guru) -> str:
        """The uploaded icon as an absolute URL (clients live elsewhere), else the icon URL given."""
        src = guru_icon_src(guru)
        request = self.context.get("request")
        return request.build_absolute_uri(src) if src.startswith("/") and request is not None else src


class GuruInputSerializer(StrictInputSerializer):
    slug = serializers.RegexField(SLUG_PATTERN, max_length=50,
                                  error_messages={"invalid": "Use 1–50 lowercase letters, digits or hyphens."})
    name = serializers.CharField(max_length=100)
    domain_knowledge = serializers.CharField(max_length=500, help_text="What the guru knows about.")
    intro_text = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    base_color = serializers.RegexField(COLOR_PATTERN, required=False,
                                        error_messages={"invalid": "Use a #rrggbb colour."})
    language = serializers.CharField(required=False, max_length=10)
    private = serializers.BooleanField(required=False)

    class Meta:
        ref_name = "GuruCreate"


class GuruUpdateSerializer(GuruInputSerializer):
    active = serializers.BooleanField(required=False)

    class Meta:
        ref_name = "GuruUpdate"


class CollectionSerializer(serializers.Serializer):
    name = serializers.CharField()
    ready = serializers.BooleanField(help_text="The collection exists and matches the slug and the embedder.")
    problem = serializers.CharField(help_text="Why it is not ready; empty when ready.")
    dimension = serializers.IntegerField(allow_null=True)
    chunk_count = serializers.IntegerField(allow_null=True)
    embedder = serializers.CharField()

    class Meta:
        ref_name = "GuruCollection"


class GuruDetailSerializer(GuruOutputSerializer):
    sources = serializers.DictField(child=serializers.IntegerField(), help_text="Source count per status.")
    collection = CollectionSerializer()

    class Meta:
        ref_name = "GuruDetail"


def _api_key(request: Request) -> APIKey | None:
    return request.auth if isinstance(request.auth, APIKey) else None


class GuruListCreateApi(APIView):
    """Gurus the caller maintains (only the key's guru for a guru-scoped key), and creating a guru."""

    parser_classes = [JSONParser]
    pagination_class = Pagination

    @extend_schema(operation_id="gurus_list", summary="List gurus", tags=["gurus"],
                   responses={200: GuruOutputSerializer(many=True), **errors(401, 404, 429)})
    def get(self, request: Request) -> Response:
        gurus = guru_list_for_user(user=request.user).order_by("name", "id")
        key = _api_key(request)
        if key is not None and key.guru_id is not None:
            gurus = gurus.filter(pk=key.guru_id)  # a guru-scoped key sees only its guru
        paginator = Pagination()
        page = paginator.paginate_queryset(gurus, request, view=self)
        rows = GuruOutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(rows)

    @extend_schema(operation_id="gurus_create", summary="Create a guru", tags=["gurus"],
                   request=GuruInputSerializer,
                   responses={201: GuruOutputSerializer, **errors(400, 401, 403, 409, 429)})
    def post(self, request: Request) -> Response:
        key = _api_key(request)
        if key is not None and key.guru_id is not None:
            raise PermissionDenied("This API key is scoped to one guru and cannot create gurus.")
        serializer = GuruInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        guru = guru_create(user=signed_in_user(request), **serializer.validated_data)
        return Response(GuruOutputSerializer(guru, context={"request": request}).data, status=201)


class GuruDetailApi(APIView):
    """One guru with its source counts and vector collection state; PATCH edits it (a slug rename too)."""

    parser_classes = [JSONParser]

    @staticmethod
    def _detail(guru: Guru, request: Request) -> dict[str, Any]:
        report = guru_collection_report(guru=guru)
        collection = {
            "name": report.record.name if report.record else report.expected_name,
            "ready": not report.problem,
            "problem": report.problem,
            "dimension": report.info.dimension if report.info else None,
            "chunk_count": report.info.row_count if report.info else None,
            "embedder": report.embedder_id,
        }
        return {**GuruOutputSerializer(guru, context={"request": request}).data,
                "sources": source_status_counts(guru=guru), "collection": CollectionSerializer(collection).data}

    @extend_schema(operation_id="gurus_retrieve", summary="Get a guru", tags=["gurus"],
                   responses={200: GuruDetailSerializer, **errors(401, 403, 404, 429)})
    def get(self, request: Request, slug: str) -> Response:
        return Response(self._detail(guru_for(request, slug), request))

    @extend_schema(operation_id="gurus_update", summary="Edit a guru", tags=["gurus"],
                   request=GuruUpdateSerializer,
                   responses={200: GuruDetailSerializer, **errors(400, 401, 403, 404, 409, 429)})
    def patch(self, request: Request, slug: str) -> Response:
        guru = guru_for(request, slug)
        serializer = GuruUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        guru = guru_update(guru=guru, **serializer.validated_data)
        return Response(self._detail(guru, request))
