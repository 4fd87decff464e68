"""Validate a model's structured (JSON) reply against the required keys of the requested schema."""

from __future__ import annotations

import json
from typing import Any


class InvalidStructuredReply(ValueError):
    """The reply is not a JSON object with every required key (worth retrying)."""


def json_object(text: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply as a dict holding every key the schema requires."""
    if not text:
        raise InvalidStructuredReply("the reply has no JSON content (refused or truncated)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidStructuredReply(f"invalid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise InvalidStructuredReply(f"expected a JSON object, got {type(data).__name__}")
    missing = [key for key in schema.get("required", []) if key not in data]
    if missing:
        raise InvalidStructuredReply(f"JSON object lacks required keys {missing}")
    return data
