"""The local metric engine: resolves a run's metrics and scores every candidate of a request."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types import CandidateResponse, CandidateResult, EvaluationRequest, EvaluationRunMetric
from . import text, trajectory
from ._invocations import Invocation, context_turn_count, final_text, response_invocations


class MetricError(ValueError):
    """A metric the engine does not know, or options it cannot accept."""


class NotEvaluatedError(Exception):
    """This candidate cannot be scored by this metric; the message says why."""


@dataclass(frozen=True)
class MetricSpec:
    """A metric name with its resolved options."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)


Scorer = Callable[[MetricSpec, EvaluationRequest, CandidateResponse], CandidateResult]


@dataclass(frozen=True)
class MetricInfo:
    name: str
    description: str
    reads: tuple[str, ...]
    needs_judge: bool
    service_defined: bool
    params: Mapping[str, tuple[Any, ...]]  # option name -> allowed values (empty: any)
    scorer: Scorer


def _golden(request: EvaluationRequest) -> CandidateResponse:
    if request.golden_response is None:
        raise NotEvaluatedError("the request has no goldenResponse to compare against")
    return request.golden_response


def aligned_invocations(
    request: EvaluationRequest, candidate: CandidateResponse
) -> list[tuple[Invocation, Invocation]]:
    """Pairs (actual, expected) invocations, as ADK compares them turn by turn."""
    golden = _golden(request)
    expected = response_invocations(golden)
    actual = response_invocations(candidate)
    if not expected:
        raise NotEvaluatedError("the goldenResponse is empty")
    if not actual:
        raise NotEvaluatedError("the candidate response is empty")
    golden_is_final_answer_only = golden.agent_data is None and not golden.events
    if golden_is_final_answer_only and len(expected) == 1:
        # Only a final answer is expected: compare it with the last turn.
        actual = actual[-1:]
    context = context_turn_count(request)
    if context and len(actual) == len(expected) + context:
        # The candidate replays the context turns too: compare only its new turns.
        actual = actual[context:]
    elif context and len(expected) == len(actual) + context:
        # The golden response covers the whole conversation, the candidate only the new turns.
        expected = expected[context:]
    if len(actual) != len(expected):
        raise NotEvaluatedError(
            f"the candidate has {len(actual)} turns and the goldenResponse {len(expected)}; "
            "per-turn metrics need the same number"
        )
    return list(zip(actual, expected, strict=True))


def _per_invocation(
    spec: MetricSpec,
    candidate: CandidateResponse,
    pairs: Sequence[tuple[Invocation, Invocation]],
    score_one: Callable[[Invocation, Invocation], float],
    describe: str,
) -> CandidateResult:
    scores = [score_one(actual, expected) for actual, expected in pairs]
    mean = sum(scores) / len(scores)
    return CandidateResult(
        candidate=candidate.candidate,
        metric=spec.name,
        score=mean,
        explanation=f"{describe}; per-turn scores {[round(s, 4) for s in scores]}",
        additional_results={"perTurnScores": scores},
    )


def _tool_trajectory_avg_score(
    spec: MetricSpec, request: EvaluationRequest, candidate: CandidateResponse
) -> CandidateResult:
    match_type = trajectory.MatchType(spec.params.get("match_type", "EXACT"))
    ignore_args = bool(spec.params.get("ignore_args", False))
    pairs = aligned_invocations(request, candidate)
    matched = sum(
        trajectory.invocation_score(a.tool_calls, e.tool_calls, match_type, ignore_args)
        for a, e in pairs
    )
    describe = (
        f"{int(matched)} of {len(pairs)} turns matched the expected tool calls ({match_type})"
    )
    return _per_invocation(
        spec,
        candidate,
        pairs,
        lambda a, e: trajectory.invocation_score(
            a.tool_calls, e.tool_calls, match_type, ignore_args
        ),
        describe,
    )


def _response_match_score(
    spec: MetricSpec, request: EvaluationRequest, candidate: CandidateResponse
) -> CandidateResult:
    pairs = aligned_invocations(request, candidate)
    return _per_invocation(
        spec,
        candidate,
        pairs,
        lambda a, e: text.response_match_score(a.final_text, e.final_text),
        "ROUGE-1 F-measure of the final response against the golden one",
    )


def _exact_match(
    spec: MetricSpec, request: EvaluationRequest, candidate: CandidateResponse
) -> CandidateResult:
    expected = final_text(_golden(request))
    actual = final_text(candidate)
    score = text.exact_match(actual, expected)
    return CandidateResult(
        candidate=candidate.candidate,
        metric=spec.name,
        score=score,
        explanation="the response equals the golden response"
        if score
        else "the response differs from the golden response",
    )


_MATCH_TYPES = tuple(m.value for m in trajectory.MatchType)

REGISTRY: dict[str, MetricInfo] = {
    info.name: info
    for info in (
        MetricInfo(
            "exact_match",
            "1 when the final response equals the golden response exactly, else 0",
            reads=("golden", "response"),
            needs_judge=False,
            service_defined=True,
            params={},
            scorer=_exact_match,
        ),
        MetricInfo(
            "tool_trajectory_avg_score",
            "ADK: per turn 1 when the tool calls match the expected ones, averaged",
            reads=("golden", "trajectory"),
            needs_judge=False,
            service_defined=False,
            params={"match_type": _MATCH_TYPES, "ignore_args": (True, False)},
            scorer=_tool_trajectory_avg_score,
        ),
        MetricInfo(
            "response_match_score",
            "ADK: ROUGE-1 F-measure of the final response against the golden one, per turn",
            reads=("golden", "response"),
            needs_judge=False,
            service_defined=False,
            params={},
            scorer=_response_match_score,
        ),
    )
}


def _params(metric: EvaluationRunMetric) -> dict[str, Any]:
    config = metric.metric_config
    if config is None:
        return {}
    if config.computation_based_metric_spec and config.computation_based_metric_spec.parameters:
        return dict(config.computation_based_metric_spec.parameters)
    if config.predefined_metric_spec and config.predefined_metric_spec.metric_spec_parameters:
        return dict(config.predefined_metric_spec.metric_spec_parameters)
    return {}


def _metric_name(metric: EvaluationRunMetric) -> str | None:
    if metric.metric:
        return metric.metric
    config = metric.metric_config
    if config and config.predefined_metric_spec:
        return config.predefined_metric_spec.metric_spec_name
    return None


def resolve(metric: EvaluationRunMetric) -> MetricSpec:
    """Checks a run metric against the registry and returns it with validated options."""
    name = _metric_name(metric)
    if not name:
        raise MetricError("a metric needs a name in `metric` (or predefinedMetricSpec)")
    info = REGISTRY.get(name)
    if info is None:
        raise MetricError(
            f"metric {name!r} is not supported by the local engine; supported: "
            f"{', '.join(sorted(REGISTRY))}"
        )
    params = _params(metric)
    for key, value in params.items():
        if key not in info.params:
            raise MetricError(
                f"metric {name!r} has no option {key!r}; options: {sorted(info.params) or 'none'}"
            )
        allowed = info.params[key]
        if allowed and value not in allowed:
            raise MetricError(f"metric {name!r} option {key!r} must be one of {list(allowed)}")
    return MetricSpec(name, params)


def score(
    spec: MetricSpec, request: EvaluationRequest, candidate: CandidateResponse
) -> CandidateResult:
    """Scores one candidate; a candidate that cannot be scored gets no score and a reason."""
    try:
        return REGISTRY[spec.name].scorer(spec, request, candidate)
    except NotEvaluatedError as reason:
        return CandidateResult(
            candidate=candidate.candidate,
            metric=spec.name,
            explanation=f"not evaluated: {reason}",
        )


def evaluate_request(
    specs: Sequence[MetricSpec], request: EvaluationRequest
) -> list[CandidateResult]:
    """One CandidateResult per candidate x metric, candidates in request order."""
    return [
        score(spec, request, candidate)
        for candidate in request.candidate_responses or []
        for spec in specs
    ]


def summarize(results_by_metric: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """``<metric>/AVERAGE`` and ``<metric>/STANDARD_DEVIATION`` (sample) of the scores."""
    summary: dict[str, float] = {}
    for metric, scores in results_by_metric.items():
        if not scores:
            continue
        summary[f"{metric}/AVERAGE"] = statistics.fmean(scores)
        summary[f"{metric}/STANDARD_DEVIATION"] = (
            statistics.stdev(scores) if len(scores) > 1 else 0.0
        )
    return summary
