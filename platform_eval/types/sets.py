"""EvaluationSet: a named, ordered collection of evaluation items."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ._base import WireModel


class EvaluationSet(WireModel):
    name: str | None = None
    display_name: str | None = None
    evaluation_items: list[str] | None = None
    create_time: datetime | None = None
    update_time: datetime | None = None
    metadata: Any = None

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None
