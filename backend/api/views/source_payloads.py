"""Wire shapes of the data-sources API: Gurubase's request encodings decoded, and the per-item results."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import SuspiciousFileOperation
from django.core.files.uploadedfile import UploadedFile
from django.http import QueryDict
from django.utils.datastructures import MultiValueDict
from django.utils.text import get_valid_filename
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from backend.core.errors import AppError, Conflict
from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind, SourceStatus
from backend.sources.validation import AlreadyASource, source_with_url

URL_LISTS = ("youtube_urls", "website_urls", "github_repos")
# Gurubase source kinds OpenGuru does not index: accepted on the wire, each item answered with an `error` result.
UNSUPPORTED_URL_LISTS = {"jira_urls": "JIRA", "zendesk_urls": "ZENDESK", "confluence_urls": "CONFLUENCE"}
LIST_FIELDS = (*URL_LISTS, *UNSUPPORTED_URL_LISTS)
FILE_FIELDS = ("pdf_files", "excel_files")
EXCEL = "EXCEL"
# The `type` Gurubase puts in a per-item result (not the list's type: its result labels are display names).
RESULT_TYPES = {SourceKind.PDF: "PDF", SourceKind.YOUTUBE: "YouTube", SourceKind.WEBSITE: "Website",
                SourceKind.GITHUB_REPO: "GitHub", "JIRA": "Jira", "ZENDESK": "Zendesk", "CONFLUENCE": "Confluence",
                EXCEL: "Excel"}
FILE_KINDS = (SourceKind.PDF, EXCEL)


class UnsupportedSource(AppError):
    code = "unsupported_source"


def _is_json_list(value: Any) -> bool:
    return isinstance(value, str) and value.lstrip().startswith("[")


def json_list(name: str, values: list[Any]) -> list[Any]:
    """A list sent as repeated fields or, Gurubase-style, as one JSON-encoded list."""
    if len(values) == 1 and _is_json_list(values[0]):
        try:
            parsed = json.loads(values[0])
        except ValueError as exc:
            raise ValidationError({name: ["Not a valid JSON list."]}) from exc
        if not isinstance(parsed, list):
            raise ValidationError({name: ["Not a valid JSON list."]})
        return parsed
    return values


def _json_object(value: Any) -> Any:
    """A repository given as one string holding a JSON object."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValidationError({"github_repos": ["Not a valid JSON object."]}) from exc
    return value


def safe_name(upload: UploadedFile) -> UploadedFile:
    """Storage refuses names that clean down to nothing (e.g. '$$'); such files are stored as document.pdf."""
    try:
        get_valid_filename(upload.name or "")
    except SuspiciousFileOperation:
        upload.name = "document.pdf"
    return upload


def _form_fields(data: QueryDict, files: MultiValueDict[str, UploadedFile]) -> dict[str, Any]:
    """A multipart or url-encoded form as lists: repeated fields, or one field holding a JSON list."""
    payload: dict[str, Any] = {name: json_list(name, data.getlist(name)) for name in LIST_FIELDS if name in data}
    if "website_mode" in data:
        payload["website_mode"] = data["website_mode"]
    for alias in ("pdf_privacies", "pdf_privacy"):
        if alias in data:
            payload["pdf_privacies"] = json_list("pdf_privacies", data.getlist(alias))
            break
    for name in FILE_FIELDS:
        uploads = files.getlist(name) + files.getlist(f"{name}[]")
        if uploads:
            payload[name] = uploads
    return payload


def request_payload(data: Any, *, files: MultiValueDict[str, UploadedFile]) -> dict[str, Any] | None:
    """The body as the serializers' input, whatever the encoding; None when it is not an object."""
    if isinstance(data, QueryDict):
        payload = _form_fields(data, files)
    elif isinstance(data, Mapping):
        # JSON: Gurubase's clients JSON-encode a list into a string even in JSON bodies; decode those too.
        # A string that is not a JSON list stays a string, which the list fields refuse (as Gurubase does).
        payload = {name: json_list(name, [value]) if name in LIST_FIELDS and _is_json_list(value) else value
                   for name, value in data.items()}
    else:
        return None
    if isinstance(payload.get("github_repos"), list):
        payload["github_repos"] = [_json_object(repo) for repo in payload["github_repos"]]
    return payload


def item_label(kind: str, item: Any) -> str:
    """The URL or file name as the client gave it."""
    if kind in FILE_KINDS:
        return str(item.name or "")
    return str(item["url"] if isinstance(item, dict) else item)


def _existing_after_conflict(guru: Guru, kind: str, item: Any) -> DataSource | None:
    """The source a database-level duplicate collided with: the same PDF bytes, or (a race) the same URL."""
    if kind == SourceKind.PDF:
        digest = hashlib.sha256()
        for part in item.chunks():
            digest.update(part)
        return DataSource.objects.filter(guru=guru, kind=kind, content_hash=digest.hexdigest()).first()
    return source_with_url(guru=guru, kind=kind, url=item_label(kind, item))


def item_result(guru: Guru, kind: str, item: Any, *, source: DataSource | None = None,
                exc: AppError | None = None) -> dict[str, Any]:
    """Gurubase's `{type, url|file, status, id, title, message?}` for one item, plus our stable `code`."""
    result: dict[str, Any] = {"type": RESULT_TYPES[kind], ("file" if kind in FILE_KINDS else "url"): item_label(
        kind, item)}
    if exc is None and source is not None:
        return {**result, "status": "success", "id": source.pk, "title": source.title}
    if isinstance(exc, Conflict):
        existing = exc.source if isinstance(exc, AlreadyASource) else _existing_after_conflict(guru, kind, item)
        if existing is not None:
            return {**result, "status": "exists", "id": existing.pk, "title": existing.title, "code": exc.code,
                    "message": exc.detail}
    return {**result, "status": "error", "code": getattr(exc, "code", "error"),
            "message": getattr(exc, "detail", "Not added.")}


class ItemResultSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=sorted(set(RESULT_TYPES.values())),
                                   help_text="Gurubase's label of the item's kind (YouTube, Website, GitHub, PDF, …).")
    url = serializers.CharField(required=False, help_text="The URL as given (URL kinds).")
    file = serializers.CharField(required=False, help_text="The file name as given (PDF, Excel).")
    status = serializers.ChoiceField(choices=["success", "exists", "error"], help_text=(
        "success: added, indexing in the background; exists: the guru already has it (`id` is that source); "
        "error: not added, see `message`."))
    id = serializers.IntegerField(required=False, help_text="The source added, or the one that already exists.")
    title = serializers.CharField(required=False, allow_blank=True, help_text="Empty until the first index run.")
    code = serializers.CharField(required=False, help_text="For exists and error: our stable code, e.g. "
                                                           "`conflict`, `invalid_source`, `unsupported_source`.")
    message = serializers.CharField(required=False, help_text="Why it was not added.")

    class Meta:
        ref_name = "DataSourceItemResult"


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(source="progress_done")
    total = serializers.IntegerField(source="progress_total", help_text="0 while the total is not known yet.")

    class Meta:
        ref_name = "DataSourceProgress"


class SourceOutputSerializer(serializers.Serializer):
    """Gurubase's fields (id, type, url, title, status, error, date_created, private, last_reindex_date,
    reindex_count) and ours (progress, error_message, chunk_count, last_indexed_at)."""

    id = serializers.IntegerField()
    type = serializers.ChoiceField(source="kind", choices=SourceKind.choices)
    url = serializers.CharField(required=False, help_text="Omitted for uploaded files (as in Gurubase).")
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=SourceStatus.choices)
    progress = ProgressSerializer(source="*")
    error = serializers.CharField(source="error_message", help_text="Why the last run failed (Gurubase's name).")
    error_message = serializers.CharField()
    chunk_count = serializers.IntegerField()
    private = serializers.BooleanField()
    last_indexed_at = serializers.DateTimeField(allow_null=True)
    last_reindex_date = serializers.SerializerMethodField(
        help_text="When it was last (re-)indexed, else when it was added (Gurubase's field, never null).")
    reindex_count = serializers.IntegerField()
    date_created = serializers.DateTimeField(source="created_at")

    class Meta:
        ref_name = "DataSource"

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_last_reindex_date(self, source: DataSource) -> str:
        return serializers.DateTimeField().to_representation(source.last_indexed_at or source.created_at)

    def to_representation(self, instance: DataSource) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        if instance.kind == SourceKind.PDF:
            del data["url"]
        return data


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
    msg = serializers.CharField(help_text='Always "Data sources processing completed" (Gurubase\'s text).')
    results = ItemResultSerializer(many=True, help_text="One per item given, in Gurubase's order: PDFs, YouTube, "
                                                        "websites, Jira, Zendesk, Confluence, Excel, Git.")
    created = SourceOutputSerializer(many=True, help_text="The sources added (status success), in full.")
    errors = ItemErrorSerializer(  # type: ignore[assignment]  # a field, not Serializer.errors: see ErrorSerializer
        many=True, help_text="The items that were not added (exists and error), each with its reason.")
    warnings = WarningSerializer(many=True, help_text="Added, but worth knowing: a page a sitemap or crawl of "
                                                      "the guru already indexes.")

    class Meta:
        ref_name = "DataSourcesCreated"
