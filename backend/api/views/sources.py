"""Data sources of a guru, compatible with Gurubase's /api/v1/<guru>/data-sources/ endpoints."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.api.auth import guru_for
from backend.api.schema import JSONParser, Pagination, errors
from backend.api.views.source_payloads import (
    EXCEL,
    LIST_FIELDS,
    UNSUPPORTED_URL_LISTS,
    CreatedSerializer,
    SourceOutputSerializer,
    UnsupportedSource,
    item_result,
    request_payload,
    safe_name,
)
from backend.core.errors import AppError
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind
from backend.sources.selectors import source_get, source_list, source_pick
from backend.sources.services import WEBSITE_MODES, source_create, source_delete, source_schedule_index
from backend.sources.validation import overlap_warning

MAX_ITEMS = 100
MAX_URL_LENGTH = 2000
MAX_IDS = 1000
MAX_PAGE = 1000  # Gurubase's page size for this list, default and maximum


class TooLarge(AppError):
    code = "too_large"
    status = 413


class SourcePagination(Pagination):
    """Gurubase's data-source pages: 1000 by default and at most, so its clients that read one page get all."""

    page_size = MAX_PAGE
    max_page_size = MAX_PAGE
    page_size_query_description = f"Sources per page: at most {MAX_PAGE}, which is also the default."


class GithubRepoSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=MAX_URL_LENGTH)
    branch = serializers.CharField(required=False, allow_blank=True, max_length=255)
    include = serializers.ListField(child=serializers.CharField(max_length=500), required=False, max_length=100)
    exclude = serializers.ListField(child=serializers.CharField(max_length=500), required=False, max_length=100)
    glob_pattern = serializers.CharField(required=False, allow_blank=True, max_length=500)
    include_glob = serializers.BooleanField(required=False)


_GLOBS = {"type": "array", "items": {"type": "string", "maxLength": 500}, "maxItems": 100}
_URL = {"type": "string", "maxLength": MAX_URL_LENGTH, "minLength": 1}
_REPO_OBJECT = {
    "type": "object", "required": ["url"],
    "properties": {
        "url": _URL, "branch": {"type": "string", "maxLength": 255},
        "include": {**_GLOBS, "description": "Globs of files to index (default: all text files)."},
        "exclude": _GLOBS,
        "glob_pattern": {"type": "string", "maxLength": 500, "description": "Gurubase's single glob."},
        "include_glob": {"type": "boolean", "description": "glob_pattern includes (true) or excludes (false)."},
    },
}
_AS_JSON = {"type": "string", "description": "The same list JSON-encoded, e.g. '[\"https://…\"]' (Gurubase)."}


@extend_schema_field({"oneOf": [_URL, _REPO_OBJECT]})
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


@extend_schema_field({"oneOf": [{"type": "array", "items": _URL, "maxItems": MAX_ITEMS}, _AS_JSON]})
class UrlListField(serializers.ListField):
    """A list of URLs (request_payload has already decoded a JSON-encoded one)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.CharField(max_length=MAX_URL_LENGTH), required=False,
                         max_length=MAX_ITEMS, **kwargs)


@extend_schema_field({"oneOf": [{"type": "array", "items": {"oneOf": [_URL, _REPO_OBJECT]}, "maxItems": MAX_ITEMS},
                                _AS_JSON]})
class RepoListField(serializers.ListField):
    """A list of repositories, each a URL or an object (request_payload has already decoded a JSON string)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=GithubRepoField(), required=False, max_length=MAX_ITEMS, **kwargs)


_UNSUPPORTED = "Gurubase's field; OpenGuru does not index this kind, so each item gets an `error` result."


class SourcesCreateSerializer(serializers.Serializer):
    youtube_urls = UrlListField()
    website_urls = UrlListField()
    github_repos = RepoListField()
    website_mode = serializers.ChoiceField(choices=WEBSITE_MODES, default="page",
                                           help_text="page: only the URL; sitemap: the URL is a sitemap; "
                                                     "crawl: follow links on the same site.")
    jira_urls = UrlListField(help_text=_UNSUPPORTED)
    zendesk_urls = UrlListField(help_text=_UNSUPPORTED)
    confluence_urls = UrlListField(help_text=_UNSUPPORTED)

    class Meta:
        ref_name = "DataSourcesCreate"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        count = sum(len(attrs.get(name, [])) for name in (*LIST_FIELDS, "pdf_files", "excel_files"))
        if count == 0:
            raise ValidationError("No data sources provided: give at least one of youtube_urls, website_urls, "
                                  "github_repos or pdf_files.")
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
    excel_files = serializers.ListField(child=serializers.FileField(max_length=200), required=False,
                                        max_length=MAX_ITEMS, help_text=_UNSUPPORTED)

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
    if kind not in SourceKind.values:
        raise UnsupportedSource(f"OpenGuru does not index {kind.title()} sources; this item was not added. "
                                "Supported: YouTube, websites, Git repositories and PDFs.")
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
    """Every item with its kind and privacy, in Gurubase's order of results."""
    privacies = data.get("pdf_privacies") or [False] * len(data.get("pdf_files", []))
    return [
        *((SourceKind.PDF, f, p) for f, p in zip(data.get("pdf_files", []), privacies, strict=True)),
        *((SourceKind.YOUTUBE, url, False) for url in data.get("youtube_urls", [])),
        *((SourceKind.WEBSITE, url, False) for url in data.get("website_urls", [])),
        *((kind, url, False) for name, kind in UNSUPPORTED_URL_LISTS.items() for url in data.get(name, [])),
        *((EXCEL, f, False) for f in data.get("excel_files", [])),
        *((SourceKind.GITHUB_REPO, repo, False) for repo in data.get("github_repos", [])),
    ]


def _create_all(guru: Guru, data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[DataSource]]:
    """Each item on its own: one bad or duplicate URL is reported in its result and does not drop the others."""
    results, created = [], []
    for kind, item, private in _items(data):
        try:
            source = _create_one(guru, kind, item, data["website_mode"], private)
        except AppError as exc:
            results.append(item_result(guru, kind, item, exc=exc))
        else:
            created.append(source)
            results.append(item_result(guru, kind, item, source=source))
    return results, created


def _check_sizes(files: list[UploadedFile]) -> None:
    limit = settings.OPENGURU_MAX_PDF_BYTES
    for upload in files:
        if upload.size is None or upload.size > limit:
            raise TooLarge(f"{upload.name} is larger than the {limit} byte limit for PDFs.")


def _created_response(guru: Guru, results: list[dict[str, Any]], created: list[DataSource]) -> Response:
    failed = [{"input": r.get("url", r.get("file", "")), "code": r["code"], "msg": r["message"],
               "source_id": r.get("id")} for r in results if r["status"] != "success"]
    warnings = [{"id": s.pk, "msg": w} for s in created if (w := overlap_warning(guru=guru, source=s))]
    body = {"msg": "Data sources processing completed", "results": results, "created": created,
            "errors": failed, "warnings": warnings}
    return Response(CreatedSerializer(body).data)


_IDS_QUERY = OpenApiParameter("ids", {"type": "array", "items": {"type": "integer", "minimum": 1},
                                      "maxItems": MAX_IDS}, explode=True, required=False,
                              description="Sources to delete: ?ids=1&ids=2. "
                                          "A JSON body {\"ids\": [...]} (Gurubase) works too.")
_FORMS = {"application/json": SourcesCreateSerializer, "multipart/form-data": SourcesUploadSerializer,
          "application/x-www-form-urlencoded": SourcesCreateSerializer}


class DataSourcesApi(APIView):
    """List, add (URLs as JSON or a form, PDFs as multipart) and delete a guru's data sources."""

    parser_classes = [JSONParser, MultiPartParser, FormParser]
    pagination_class = SourcePagination

    @extend_schema(operation_id="data_sources_list", summary="List data sources", tags=["data sources"],
                   responses={200: SourceOutputSerializer(many=True), **errors(401, 403, 404, 429)})
    def get(self, request: Request, slug: str) -> Response:
        sources = source_list(guru=guru_for(request, slug))
        paginator = SourcePagination()
        page = paginator.paginate_queryset(sources, request, view=self)
        return paginator.get_paginated_response(SourceOutputSerializer(page, many=True).data)

    @extend_schema(
        operation_id="data_sources_create", summary="Add data sources", tags=["data sources"],
        description="Gurubase-compatible: answers 200 with one `results` entry per item (`success`, `exists` or "
                    "`error` with a `message`); one bad item does not drop the others. Lists may be JSON lists, "
                    "JSON-encoded strings or repeated form fields. At most "
                    f"{MAX_ITEMS} items, URLs up to {MAX_URL_LENGTH} characters, PDFs up to "
                    "OPENGURU_MAX_PDF_BYTES (413 `too_large`). Indexing runs in the background: poll the source's "
                    "status.",
        request=_FORMS, responses={200: CreatedSerializer, **errors(400, 401, 403, 404, 413, 429)},
    )
    def post(self, request: Request, slug: str) -> Response:
        guru = guru_for(request, slug)
        payload = request_payload(request.data, files=request.FILES)
        if payload is None:
            raise ValidationError("Send a JSON object or a form.")
        serializer = (SourcesUploadSerializer if isinstance(request.data, QueryDict) else SourcesCreateSerializer)(
            data=payload)
        serializer.is_valid(raise_exception=True)
        _check_sizes(serializer.validated_data.get("pdf_files", []))
        results, created = _create_all(guru, serializer.validated_data)
        return _created_response(guru, results, created)

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
