"""Rubrics and rubric verdicts (google.cloud.aiplatform.v1beta1 Rubric*)."""

from __future__ import annotations

from ._base import WireModel
from .enums import OpenImportance


class RubricContentProperty(WireModel):
    description: str | None = None


class RubricContent(WireModel):
    property: RubricContentProperty | None = None


class Rubric(WireModel):
    rubric_id: str | None = None
    content: RubricContent | None = None
    type: str | None = None
    importance: OpenImportance | None = None

    @classmethod
    def of(
        cls, description: str, *, rubric_id: str | None = None, type: str | None = None
    ) -> Rubric:
        """Shorthand for a property rubric with the given description."""
        return cls(
            rubric_id=rubric_id,
            type=type,
            content=RubricContent(property=RubricContentProperty(description=description)),
        )

    @property
    def description(self) -> str | None:
        prop = self.content.property if self.content else None
        return prop.description if prop else None


class RubricGroup(WireModel):
    group_id: str | None = None
    display_name: str | None = None
    rubrics: list[Rubric] | None = None


class RubricVerdict(WireModel):
    evaluated_rubric: Rubric | None = None
    verdict: bool | None = None
    reasoning: str | None = None
