"""Multipart input of the data-sources API: Gurubase sends lists as repeated fields or as one JSON string."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import SuspiciousFileOperation
from django.core.files.uploadedfile import UploadedFile
from django.http import QueryDict
from django.utils.datastructures import MultiValueDict
from django.utils.text import get_valid_filename
from rest_framework.exceptions import ValidationError

URL_LISTS = ("youtube_urls", "website_urls", "github_repos")


def json_list(name: str, values: list[Any]) -> list[Any]:
    """Multipart sends a list as repeated fields or, Gurubase-style, as one JSON-encoded list."""
    if len(values) == 1 and isinstance(values[0], str) and values[0].lstrip().startswith("["):
        try:
            parsed = json.loads(values[0])
        except ValueError as exc:
            raise ValidationError({name: ["Not a valid JSON list."]}) from exc
        if not isinstance(parsed, list):
            raise ValidationError({name: ["Not a valid JSON list."]})
        return parsed
    return values


def _json_object(value: Any) -> Any:
    """A repository given as one multipart field holding a JSON object."""
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


def multipart_payload(data: QueryDict, *, files: MultiValueDict[str, UploadedFile]) -> dict[str, Any]:
    """The multipart fields and files as the serializers' input (JSON-encoded lists and objects decoded)."""
    payload: dict[str, Any] = {name: json_list(name, data.getlist(name)) for name in URL_LISTS if name in data}
    if "github_repos" in payload:
        payload["github_repos"] = [_json_object(repo) for repo in payload["github_repos"]]
    if "website_mode" in data:
        payload["website_mode"] = data["website_mode"]
    for alias in ("pdf_privacies", "pdf_privacy"):
        if alias in data:
            payload["pdf_privacies"] = json_list("pdf_privacies", data.getlist(alias))
            break
    uploads = files.getlist("pdf_files") + files.getlist("pdf_files[]")
    if uploads:
        payload["pdf_files"] = uploads
    return payload
