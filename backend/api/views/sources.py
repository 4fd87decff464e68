"""Data sources of a guru, compatible with Gurubase's /api/v1/<guru>/data-sources/ endpoints."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.api.auth import guru_for
from backend.api.schema import ErrorSerializer, JSONParser, Pagination, errors
from backend.api.views.source_payloads import URL_LISTS, multipart_payload, safe_name
from backend.core.errors import AppError
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind
from backend.sources.selectors import source_get, source_list, source_pick
from backend.sources.services import WEBSITE_MODES, source_create, source_delete, source_schedule_index
from backend.sources.validation import AlreadyASource, overlap_warning

MAX_ITEMS = 100
MAX_URL_LENGTH = 2000
MAX_IDS = 1000


class TooLarge(AppError):
    code = "too_large"
    status = 413


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="progress_done")
    total = serializers.IntegerField(source="progress_total", help_text="0 while the total is not known yet.")

    class Meta:
        ref_name = "DataSourceProgress"


class SourceOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.ChoiceField(source="kind", choices=SourceKind.choices)
    url = serializers.CharField(help_text="Empty for uploaded files.")
    title = serializers.CharField()
    status = serializers.CharField()
    progress = ProgressSerializer(source="*")
    error_message = serializers.CharField()
    chunk_count = serializers.IntegerField()
    private = serializers.BooleanField()
    last_indexed_at = serializers.DateTimeField(allow_null=True)
    reindex_count = serializers.IntegerField()
    date_created = serializers.DateTimeField(source="created_at")

    class Meta:
        ref_name = "DataSource"


class GithubRepoSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=MAX_URL_LENGTH)
    branch = serializers.CharField(required=False, allow_blank=True, max_length=255)
    include = serializers.ListField(child=serializers.CharField(max_length=500), required=False, max_length=100)
    exclude = serializers.ListField(child=serializers.CharField(max_length=500), required=False, max_length=100)
    glob_pattern = serializers.CharField(required=False, allow_blank=True, max_length=500)
    include_glob = serializers.BooleanField(required=False)


_GLOBS = {"type": "array", "items": {"type": "string", "maxLength": 500}, "maxItems": 100}
_REPO_OBJECT = {
    "type": "object", "required": ["url"],
    "properties": {
        "url": {"type": "string", "maxLength": MAX_URL_LENGTH, "minLength": 1},
        "branch": {"type": "string", "maxLength": 255},
        "include": {**_GLOBS, "description": "Globs of files to index (default: all text files)."},
        "exclude": _GLOBS,
        "glob_pattern": {"type": "string", "maxLength": 500, "description": "Gurubase's single glob."},
        "include_glob": {"type": "boolean", "description": "glob_pattern includes (true) or excludes (false)."},
    },
}


@extend_schema_field({"oneOf": [{"type": "string", "maxLength": MAX_URL_LENGTH, "minLength": 1}, _REPO_OBJECT]})
class GithubRepoField(serializers.Field):
    """A repository as its clone URL, or as {url, branch, include, exclude} (or Gurubase's glob_pattern)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, str):
            data = {"url": data}
        if not isinstance(data, dict):
            raise ValidationError("Give a repository URL or an object with a url.")
        repo = GithubRepoSerializer(data=data)
        repo.is_valid(raise_exception=True)
        return dict(repo.validated_data)

    def to_representation(self, value: Any) -> Any:
        return value


class SourcesCreateSerializer(serializers.Serializer):
    youtube_urls = serializers.ListField(child=serializers.CharField(max_length=MAX_URL_LENGTH), required=False,
                                         max_length=MAX_ITEMS)
    website_urls = serializers.ListField(child=serializers.CharField(max_length=MAX_URL_LENGTH), required=False,
                                         max_length=MAX_ITEMS)
    github_repos = serializers.ListField(child=GithubRepoField(), required=False, max_length=MAX_ITEMS)
    website_mode = serializers.ChoiceField(choices=WEBSITE_MODES, default="page",
                                           help_text="page: only the URL; sitemap: the URL is a sitemap; "
                                                     "crawl: follow links on the same site.")

    class Meta:
        ref_name = "DataSourcesCreate"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        count = sum(len(attrs.get(name, [])) for name in (*URL_LISTS, "pdf_files"))
        if count == 0:
            raise ValidationError("Give at least one of youtube_urls, website_urls, github_repos or pdf_files.")
        if count > MAX_ITEMS:
            raise ValidationError(f"At most {MAX_ITEMS} data sources per request.")
        return attrs


class SourcesUploadSerializer(SourcesCreateSerializer):
    pdf_files = serializers.ListField(child=serializers.FileField(max_length=200), required=False,
                                      max_length=MAX_ITEMS)
    pdf_privacies = serializers.ListField(
        child=serializers.BooleanField(), required=False, max_length=MAX_ITEMS,
        help_text="One flag per PDF (same order; a JSON list string is accepted too). "
                  "Private sources are not linked in answers. `pdf_privacy` is accepted as an alias.")

    class Meta:
        ref_name = "DataSourcesUpload"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        privacies, files = attrs.get("pdf_privacies"), attrs.get("pdf_files", [])
        if privacies is not None and len(privacies) != len(files):
            raise ValidationError({"pdf_privacies": ["Give one flag per PDF file."]})
        return super().validate(attrs)


class IdsSerializer(serializers.Serializer):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1), allow_empty=False, max_length=MAX_IDS)

    class Meta:
        ref_name = "DataSourceIds"


class ResultSerializer(serializers.Serializer):
    msg = serializers.CharField()
    ids = serializers.ListField(child=serializers.IntegerField(), help_text="Sources acted on.")
    not_found = serializers.ListField(child=serializers.IntegerField(),
                                      help_text="Ids that are not sources of this guru; nothing was done to them.")

    class Meta:
        ref_name = "DataSourcesResult"


def _create_one(guru: Guru, kind: str, item: Any, mode: str, private: bool) -> DataSource:
    if kind == SourceKind.PDF:
        return source_create(guru=guru, kind=kind, upload=safe_name(item), private=private)
    if kind == SourceKind.GITHUB_REPO:
        options = {k: item[k] for k in ("branch", "include", "exclude") if item.get(k)}
        if item.get("glob_pattern"):
            options["include" if item.get("include_glob") else "exclude"] = [item["glob_pattern"]]
        return source_create(guru=guru, kind=kind, url=item["url"], options=options)
    options = {"mode": mode} if kind == SourceKind.WEBSITE else {}
    return source_create(guru=guru, kind=kind, url=item, options=options)


def _items(data: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    privacies = data.get("pdf_privacies") or [False] * len(data.get("pdf_files", []))
    return [
        *((SourceKind.YOUTUBE, url, False) for url in data.get("youtube_urls", [])),
        *((SourceKind.WEBSITE, url, False) for url in data.get("website_urls", [])),
        *((SourceKind.GITHUB_REPO, repo, False) for repo in data.get("github_repos", [])),
        *((SourceKind.PDF, f, p) for f, p in zip(data.get("pdf_files", []), privacies, strict=True)),
    ]


def _label(kind: str, item: Any) -> str:
    if kind == SourceKind.PDF:
        return item.name or ""
    return item["url"] if isinstance(item, dict) else item


def _create_all(guru: Guru, data: dict[str, Any]) -> tuple[list[DataSource], list[dict[str, Any]]]:
    """Each item on its own: one bad or duplicate URL is reported and does not drop the others."""
    created, failed = [], []
    for kind, item, private in _items(data):
        try:
            created.append(_create_one(guru, kind, item, data["website_mode"], private))
        except AppError as exc:
            failed.append({"input": _label(kind, item), "code": exc.code, "msg": exc.detail, "status": exc.status,
                           "source_id": exc.source.pk if isinstance(exc, AlreadyASource) else None})
    return created, failed


def _check_sizes(files: list[UploadedFile]) -> None:
    limit = settings.OPENGURU_MAX_PDF_BYTES
    for upload in files:
        if upload.size is None or upload.size > limit:
            raise TooLarge(f"{upload.name} is larger than the {limit} byte limit for PDFs.")


class ItemErrorSerializer(serializers.Serializer):
    input = serializers.CharField(help_text="The URL or file name as given.")
    code = serializers.CharField()
    msg = serializers.CharField()
    source_id = serializers.IntegerField(allow_null=True, required=False,
                                         help_text="For `conflict`: the guru's source that already has this URL.")


    class Meta:
        ref_name = "DataSourceItemError"


class WarningSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The source that was added.")
    msg = serializers.CharField()

    class Meta:
        ref_name = "DataSourceWarning"


class CreatedSerializer(serializers.Serializer):
    msg = serializers.CharField()
    created = SourceOutputSerializer(many=True)
    errors = ItemErrorSerializer(  # type: ignore[assignment]  # a field, not Serializer.errors: see ErrorSerializer
        many=True, help_text="Items that were not added, each with its reason.")
    warnings = WarningSerializer(many=True, help_text="Added, but worth knowing: a page a sitemap or crawl of "
                                                      "the guru already indexes.")

    class Meta:
        ref_name = "DataSourcesCreated"


def _created_response(guru: Guru, created: list[DataSource], failed: list[dict[str, Any]]) -> Response:
    items = ItemErrorSerializer(failed, many=True).data
    if created:
        warnings = [{"id": s.pk, "msg": w} for s in created if (w := overlap_warning(guru=guru, source=s))]
        body = {"msg": f"{len(created)} data source(s) added.", "created": created, "errors": items,
                "warnings": warnings}
        return Response(CreatedSerializer(body).data, status=201)
    statuses = {item["status"] for item in failed}
    status = statuses.pop() if len(statuses) == 1 else 400
    code = failed[0]["code"] if status != 400 or len({i["code"] for i in failed}) == 1 else "invalid_source"
    body = {"code": code, "msg": failed[0]["msg"] if len(failed) == 1 else "No data source was added.",
            "errors": items}
    return Response(ErrorSerializer(body).data, status=status)


_IDS_QUERY = OpenApiParameter("ids", {"type": "array", "items": {"type": "integer", "minimum": 1},
                                      "maxItems": MAX_IDS}, explode=True, required=False,
                              description="Sources to delete: ?ids=1&ids=2. "
                                          "A JSON body {\"ids\": [...]} (Gurubase) works too.")


class DataSourcesApi(APIView):
    """List, add (URLs as JSON, PDFs as multipart) and delete a guru's data sources."""

    parser_classes = [JSONParser, MultiPartParser]
    pagination_class = Pagination

    @extend_schema(operation_id="data_sources_list", summary="List data sources", tags=["data sources"],
                   responses={200: SourceOutputSerializer(many=True), **errors(401, 403, 404, 429)})
    def get(self, request: Request, slug: str) -> Response:
        sources = source_list(guru=guru_for(request, slug))
        paginator = Pagination()
        page = paginator.paginate_queryset(sources, request, view=self)
        return paginator.get_paginated_response(SourceOutputSerializer(page, many=True).data)

    @extend_schema(
        operation_id="data_sources_create", summary="Add data sources", tags=["data sources"],
        description="Each item is added on its own; items that fail are listed in `errors`. When none is "
                    f"added the answer is an error. At most {MAX_ITEMS} items, URLs up to {MAX_URL_LENGTH} "
                    "characters, PDFs up to OPENGURU_MAX_PDF_BYTES (413 `too_large`). Indexing runs in the "
                    "background: poll the source's status.",
        request={"application/json": SourcesCreateSerializer, "multipart/form-data": SourcesUploadSerializer},
        responses={201: CreatedSerializer, **errors(400, 401, 403, 404, 409, 413, 429)},
    )
    def post(self, request: Request, slug: str) -> Response:
        guru = guru_for(request, slug)
        if isinstance(request.data, QueryDict):
            serializer: serializers.Serializer = SourcesUploadSerializer(
                data=multipart_payload(request.data, files=request.FILES))
        elif isinstance(request.data, dict):
            serializer = SourcesCreateSerializer(data=request.data)
        else:
            raise ValidationError("Send a JSON object or a multipart form.")
        serializer.is_valid(raise_exception=True)
        _check_sizes(serializer.validated_data.get("pdf_files", []))
        created, failed = _create_all(guru, serializer.validated_data)
        return _created_response(guru, created, failed)

    @extend_schema(operation_id="data_sources_delete", summary="Delete data sources", tags=["data sources"],
                   parameters=[_IDS_QUERY],
                   responses={200: ResultSerializer, **errors(400, 401, 403, 404, 429)})
    def delete(self, request: Request, slug: str) -> Response:
        guru = guru_for(request, slug)
        given = request.data if isinstance(request.data, dict) and request.data else {
            "ids": request.query_params.getlist("ids")}
        serializer = IdsSerializer(data=given)
        serializer.is_valid(raise_exception=True)
        pick = source_pick(guru=guru, ids=serializer.validated_data["ids"])
        deleted = [source.pk for source in pick.found]  # read before delete() clears the pks
        for source in pick.found:
            source_delete(source=source)
        body = {"msg": f"{len(deleted)} data source(s) deleted.", "ids": deleted, "not_found": pick.missing}
        return Response(ResultSerializer(body).data)


class DataSourcesReindexApi(APIView):
    """Index some (or all) of a guru's sources again, in the background."""

    parser_classes = [JSONParser]

    class InputSerializer(serializers.Serializer):
        ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False,
                                    allow_empty=False, max_length=MAX_IDS)
        all = serializers.BooleanField(required=False, default=False, help_text="Re-index every source.")

        class Meta:
            ref_name = "DataSourcesReindex"

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if bool(attrs.get("ids")) == bool(attrs.get("all")):
                raise ValidationError('Give either "ids" or "all": true.')
            return attrs

    @extend_schema(operation_id="data_sources_reindex", summary="Re-index data sources", tags=["data sources"],
                   request=InputSerializer,
                   responses={200: ResultSerializer, **errors(400, 401, 403, 404, 429)})
    def post(self, request: Request, slug: str) -> Response:
        guru = guru_for(request, slug)
        serializer = self.InputSerializer(data=request.data if isinstance(request.data, dict) else None)
        serializer.is_valid(raise_exception=True)
        if serializer.validated_data["all"]:
            pick = source_pick(guru=guru, ids=source_list(guru=guru).values_list("id", flat=True))
        else:
            pick = source_pick(guru=guru, ids=serializer.validated_data["ids"])
        for source in pick.found:
            source_schedule_index(source=source)
        body = {"msg": f"{len(pick.found)} data source(s) scheduled for re-indexing.",
                "ids": [s.pk for s in pick.found], "not_found": pick.missing}
        return Response(ResultSerializer(body).data)


class DataSourceDetailApi(APIView):
    """One data source: its indexing status, progress and error; DELETE removes it and its vectors."""

    @extend_schema(operation_id="data_sources_retrieve", summary="Get a data source", tags=["data sources"],
                   responses={200: SourceOutputSerializer, **errors(401, 403, 404, 429)})
    def get(self, request: Request, slug: str, source_id: int) -> Response:
        source = source_get(guru=guru_for(request, slug), source_id=source_id)
        return Response(SourceOutputSerializer(source).data)

    @extend_schema(operation_id="data_sources_destroy", summary="Delete a data source", tags=["data sources"],
                   responses={204: None, **errors(401, 403, 404, 429)})
    def delete(self, request: Request, slug: str, source_id: int) -> Response:
        source_delete(source=source_get(guru=guru_for(request, slug), source_id=source_id))
        return Response(status=204)
