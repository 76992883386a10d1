"""Enumerations of the wire contract.

Each enum is paired with an ``Open*`` annotated type used on model fields: a value the SDK
already knows becomes the enum member, a value it does not know yet (a newer service) is kept
as the plain string instead of failing. Members compare equal to their strings.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, Field


class EvaluationItemType(StrEnum):
    EVALUATION_ITEM_TYPE_UNSPECIFIED = "EVALUATION_ITEM_TYPE_UNSPECIFIED"
    REQUEST = "REQUEST"
    RESULT = "RESULT"
    HARBOR_TASK = "HARBOR_TASK"


class EvaluationRunState(StrEnum):
    """``EvaluationRun.state``, spelled as the discovery documents spell it."""

    STATE_UNSPECIFIED = "STATE_UNSPECIFIED"
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    INFERENCE = "INFERENCE"
    GENERATING_RUBRICS = "GENERATING_RUBRICS"
    GENERATING_LOSS_CLUSTERS = "GENERATING_LOSS_CLUSTERS"

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL_RUN_STATES


_TERMINAL_RUN_STATES = frozenset(
    {EvaluationRunState.SUCCEEDED, EvaluationRunState.FAILED, EvaluationRunState.CANCELLED}
)


def is_terminal_state(state: EvaluationRunState | str | None) -> bool:
    """True for a state no run leaves (an unknown state is treated as not terminal)."""
    return state in _TERMINAL_RUN_STATES


class Importance(StrEnum):
    IMPORTANCE_UNSPECIFIED = "IMPORTANCE_UNSPECIFIED"
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


def _by_number(enum: type[StrEnum]) -> BeforeValidator:
    # proto3 JSON parsers accept an enum's number as well as its name; members are declared
    # in proto number order.
    members = list(enum)

    def convert(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return members[value] if 0 <= value < len(members) else str(value)
        return value

    return BeforeValidator(convert)


OpenEvaluationItemType = Annotated[
    EvaluationItemType | str, Field(union_mode="left_to_right"), _by_number(EvaluationItemType)
]
OpenImportance = Annotated[
    Importance | str, Field(union_mode="left_to_right"), _by_number(Importance)
]
# Run states are not numbered in declaration order on the wire, so only names are accepted.
OpenEvaluationRunState = Annotated[EvaluationRunState | str, Field(union_mode="left_to_right")]
