"""What every metric shares: its options, its description in the registry, its errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..types import CandidateResult, Rubric

if TYPE_CHECKING:
    from ._invocations import Subject
    from .judges import Judges


class MetricError(ValueError):
    """A metric the engine does not know, or options it cannot accept."""


class NotEvaluatedError(Exception):
    """This candidate cannot be scored by this metric; the message says why."""


class NotApplicableError(NotEvaluatedError):
    """The metric has nothing to compare for this case (a final-state check on a case with no
    final state): not a pass, and not a failure either; the message says why."""


#: How a result the metric does not apply to begins its explanation: on the wire it is a result
#: with no score, like any other; readers tell the two apart by this.
NOT_APPLICABLE_PREFIX = "not applicable: "


def not_applicable(explanation: str | None) -> bool:
    return (explanation or "").startswith(NOT_APPLICABLE_PREFIX)


Scorer = Callable[["MetricSpec", "Subject"], CandidateResult]
JudgedScorer = Callable[["MetricSpec", "Subject", "Judges"], CandidateResult]


@dataclass(frozen=True)
class MetricSpec:
    """A metric name with its resolved options."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Rubrics given with the metric (``rubricBasedMetricSpec.inlineRubrics``).
    rubrics: tuple[Rubric, ...] = ()
    #: How a metric defined by its spec (a custom LLM metric), not by a registered name, scores.
    scorer: JudgedScorer | None = field(default=None, compare=False)
    #: The value rules its options give (``args_match``/``extra_args``: an ``ArgRules``;
    #: ``keys_match``: a ``ValueRules``), parsed once when the metric is resolved.
    rules: Any = field(default=None, compare=False)
    #: The metric computed under this name, where the name is the caller's label for it (a
    #: run metric whose ``computationBasedMetricSpec`` says what it computes).
    computes: MetricSpec | None = None


@dataclass(frozen=True)
class MetricInfo:
    name: str
    description: str
    reads: tuple[str, ...]
    needs_judge: bool
    service_defined: bool
    params: Mapping[str, tuple[Any, ...]]  # option name -> allowed values (empty: any)
    scorer: Scorer | None = None
    judged_scorer: JudgedScorer | None = None
    #: The lowest and highest score the metric gives; a threshold outside is refused.
    score_range: tuple[float, float] = (0.0, 1.0)
    #: Whether a higher score is the better one (every metric here so far).
    higher_is_better: bool = True
