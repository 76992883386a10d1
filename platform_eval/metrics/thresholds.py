"""Whether a threshold can mean anything: a known metric, a finite number, within its range.

A misspelled metric in a threshold used to be ignored (and the run passed), and thresholds of
1.5, -1 or NaN were taken: each is a check that can never, or always, hold.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection

from .engine import REGISTRY

#: A threshold on repeated runs' reliability (``--num-runs N``): ``pass@k`` (the case passes at
#: least once in k runs) or ``pass^k`` (every time in k runs), k from 1.
_RELIABILITY = re.compile(r"^pass(?P<kind>[@^])(?P<k>[1-9][0-9]{0,3})$")


#: Upper bounds on what the agent's runs took and cost (``results.usage``); in live mode, the
#: time from each user turn to the agent's first and to its last audio.
USAGE_THRESHOLDS = (
    "latency_p50_s",
    "latency_p95_s",
    "cost_per_case_usd",
    "first_audio_p50_s",
    "first_audio_p95_s",
    "last_audio_p50_s",
    "last_audio_p95_s",
)


def reliability_name(name: str) -> tuple[str, int] | None:
    """``pass@3`` -> ("@", 3), ``pass^2`` -> ("^", 2); None for a metric's name."""
    found = _RELIABILITY.match(name)
    return (found["kind"], int(found["k"])) if found else None


def threshold_problem(metric: str, value: object, run_metrics: Collection[str] = ()) -> str | None:
    """What is wrong with ``metric=value`` as a threshold, or None.

    ``run_metrics``: the metrics the run computes, when known; a threshold for any other metric
    would judge nothing. A metric the registry knows has its range checked; another (a custom
    LLM metric, scored on its own template's scale) only needs a finite number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"the threshold must be a number, not {type(value).__name__}"
    if not math.isfinite(value):
        return f"the threshold {value} is not a finite number"
    if metric in USAGE_THRESHOLDS:
        return None if value >= 0 else f"{value:g} is below 0: {metric} is at least 0"
    if reliability_name(metric) is not None:
        # A share of cases: it judges the runs of every metric together.
        return None if 0 <= value <= 1 else f"{value:g} is outside [0, 1], the range of {metric}"
    if run_metrics and metric not in run_metrics:
        return f"no metric {metric!r} in this run{_did_you_mean(metric, run_metrics)}"
    info = REGISTRY.get(metric)
    if info is None:
        return None
    low, high = info.score_range
    if not low <= value <= high:
        return (
            f"{value:g} is outside the range of {metric}'s scores, [{low:g}, {high:g}]"
            f" ({'higher' if info.higher_is_better else 'lower'} is better)"
        )
    return None


def _did_you_mean(metric: str, names: Collection[str]) -> str:
    close = difflib.get_close_matches(metric, sorted(names), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else f"; it computes {', '.join(sorted(names))}"
