"""genai Content from the JSON a recorder wrote, reading past a part that does not parse."""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types
from pydantic import ValidationError

_SIGNATURES = ("thought_signature", "thoughtSignature")


def _part(raw: Any, where: str, notes: list[str] | None) -> genai_types.Part | None:
    try:
        return genai_types.Part.model_validate(raw)
    except ValidationError:
        pass
    if isinstance(raw, dict) and any(k in raw for k in _SIGNATURES):
        # An opaque signature that is not base64 (a mock model's) says nothing evaluation reads.
        try:
            return genai_types.Part.model_validate(
                {k: v for k, v in raw.items() if k not in _SIGNATURES}
            )
        except ValidationError:
            pass
    if notes is not None:
        notes.append(f"{where}: an unreadable part was dropped")
    return None


def read_content(
    value: Any, where: str = "content", notes: list[str] | None = None
) -> genai_types.Content | None:
    """A genai Content; a part that does not read is dropped (with a note), not the message."""
    if not isinstance(value, dict):
        return None
    try:
        return genai_types.Content.model_validate(value)
    except ValidationError:
        pass
    raw_parts = value.get("parts")
    if not isinstance(raw_parts, list):
        return None
    parts = [
        part
        for index, raw in enumerate(raw_parts)
        if (part := _part(raw, f"{where}.parts[{index}]", notes)) is not None
    ]
    role = value.get("role")
    return genai_types.Content(role=role if isinstance(role, str) else None, parts=parts)
