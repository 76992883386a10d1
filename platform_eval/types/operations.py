"""google.longrunning.Operation: what deletes and imports answer with."""

from __future__ import annotations

from typing import Any

from ._base import WireModel
from .status import Status


class Operation(WireModel):
    name: str | None = None
    done: bool | None = None
    error: Status | None = None
    #: Free-form: the ``@type`` says which message (``DeleteOperationMetadata``, ...).
    metadata: dict[str, Any] | None = None
    #: Free-form: the ``@type`` says which message (``EvaluationSet``, ``Empty``, ...).
    response: dict[str, Any] | None = None

    @property
    def response_fields(self) -> dict[str, Any]:
        """The response message's own fields, without its ``@type``."""
        return {k: v for k, v in (self.response or {}).items() if k != "@type"}
