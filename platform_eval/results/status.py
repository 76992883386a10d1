"""A result row's status, and how every report writes a score: what the renderers read of a
row without the results model (which renders itself through them)."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    NOT_EVALUATED = "NOT_EVALUATED"
    #: Scored, but no threshold was given for the metric: no check was made.
    NOT_CHECKED = "NOT_CHECKED"
    #: The metric has nothing to compare for this case (no final state to match): shown as
    #: such, never counted as a pass or a failure.
    NOT_APPLICABLE = "NOT_APPLICABLE"
    #: The name NOT_CHECKED had before it said what it means.
    SCORED = "NOT_CHECKED"


def format_score(value: float | None) -> str:
    """A score as every report prints it: three decimals, ``-`` for none."""
    return "-" if value is None else f"{value:.3f}"


__all__ = ["Status", "format_score"]
