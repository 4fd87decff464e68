"""Slack's HTTP endpoints: the Events API and interactivity. Signed requests only; answered within 3 s."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from backend.channels.errors import error_response
from backend.channels.slack.inbound import take_action, take_in, verified_integration
from backend.core.errors import RequestError
from backend.integrations.models import Integration

MAX_BODY = 512 * 1024  # Slack's events are a few KB; anything larger is not Slack


def _body(request: HttpRequest) -> bytes:
    length = int(request.headers.get("Content-Length") or 0)
    if length > MAX_BODY:
        raise RequestError(413, "too_large", "Slack requests are far smaller than this.")
    return request.body


def _verified(request: HttpRequest, body: bytes, team_id: str, app_id: str) -> Integration:
    headers = {name.lower(): value for name, value in request.headers.items()}
    integration = verified_integration(body, headers, team_id, app_id)
    if integration is None:  # bad signature, replayed (timestamp older than 5 minutes) or unknown app
        raise RequestError(401, "invalid_signature", "This request is not signed by a connected Slack app.")
    return integration


def _json(raw: bytes | str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise RequestError(400, "invalid_json", "The body is not JSON.") from exc
    if not isinstance(data, dict):
        raise RequestError(400, "invalid_json", "The body is not a JSON object.")
    return data


@csrf_exempt
@require_POST
def events(request: HttpRequest) -> HttpResponse:
    try:
        body = _body(request)
        payload = _json(body)
        integration = _verified(request, body, str(payload.get("team_id", "")), str(payload.get("api_app_id", "")))
    except RequestError as exc:
        return error_response(exc)
    if payload.get("type") == "url_verification":
        return JsonResponse({"challenge": str(payload.get("challenge", ""))[:200]})
    take_in(integration, payload)
    return HttpResponse(status=200)


@csrf_exempt
@require_POST
def interactivity(request: HttpRequest) -> HttpResponse:
    try:
        body = _body(request)
        payload = _json(parse_qs(body.decode("utf-8", "replace")).get("payload", ["{}"])[0])
        team = payload.get("team")
        team = team if isinstance(team, dict) else {}
        integration = _verified(request, body, str(team.get("id", "")), str(payload.get("api_app_id", "")))
    except RequestError as exc:
        return error_response(exc)
    take_action(integration, payload)
    return HttpResponse(status=200)
