"""google.rpc.Status, the error shape of the API."""

from __future__ import annotations

from typing import Any

from ._base import WireModel


class Status(WireModel):
    code: int | None = None
    message: str | None = None
    details: list[dict[str, Any]] | None = None
