"""A run's ``evaluationResults.summaryMetrics.metrics``, keyed and computed as the service
writes them.

The evidence (nothing in the discovery documents says it):

* cloud-custodian's flight ``vertexai-evaluation-run-filtering`` (recorded against the v1
  service on 2026-08-14, cloud-custodian/cloud-custodian PR #11013): one item, candidate
  ``model-under-test``, metric ``exact_match``: nine keys
  ``model-under-test/exact_match/<AGGREGATION>``, and ``totalItems`` with no ``failedItems``;
* the assertions of googleapis/python-aiplatform's replay test ``test_get_evaluation_run.py``
  (a run of 19 items, 2025-09): the same ``<candidate>/<metric>/<AGGREGATION>`` keys, one set
  per candidate. Its integer scores fix the formulas: ``user_defined`` averages 90/19 with a
  minimum of 3 and a median of 5, so its scores are 3, 3, 4 and sixteen 5s, whose population
  variance is 0.40443213296398..., the recorded ``VARIANCE`` (the sample variance would be
  0.42690...), and ``STANDARD_DEVIATION`` is its square root. Its ``universal`` percentiles
  (P90 0.8778, P95 0.9, P99 0.98 over 0.875, 0.8889 and 1) are linear interpolation between
  the closest ranks, as numpy's default. That run also wrote ``MODE`` (a list when tied) and
  named the percentiles ``P90``; the 2026 recording has neither ``MODE`` nor those names, and
  is followed here.

Candidate results with no score are in no aggregation (never counted as 0 or 1).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence

from ..types.runs import summary_key


def _percentile(share: float) -> Callable[[Sequence[float]], float]:
    def computed(scores: Sequence[float]) -> float:
        ordered = sorted(scores)
        rank = share * (len(ordered) - 1)
        low = math.floor(rank)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)

    return computed


#: The nine aggregations of the 2026 recording.
AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "AVERAGE": statistics.fmean,
    "STANDARD_DEVIATION": statistics.pstdev,
    "VARIANCE": statistics.pvariance,
    "MINIMUM": min,
    "MAXIMUM": max,
    "MEDIAN": statistics.median,
    "PERCENTILE_P90": _percentile(0.90),
    "PERCENTILE_P95": _percentile(0.95),
    "PERCENTILE_P99": _percentile(0.99),
}


def summarize(scores: Mapping[tuple[str | None, str], Sequence[float]]) -> dict[str, float]:
    """Every aggregation of each (candidate, metric)'s scores; none for one with no score."""
    summary: dict[str, float] = {}
    for (candidate, metric), found in scores.items():
        if not found:
            continue
        for aggregation, compute in AGGREGATIONS.items():
            summary[summary_key(candidate, metric, aggregation)] = float(compute(found))
    return summary
