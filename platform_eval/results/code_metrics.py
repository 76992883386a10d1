"""An agents-cli config's local code metrics, computed on a run's results: each case and
candidate the run evaluated is given to the user's ``evaluate(instance)``, and the scores join
the run's rows (they are the evaluating process's, not the run's: ``results RUN`` later shows
the run's own metrics only)."""

from __future__ import annotations

import dataclasses

from ..formats.config import CodeMetricSource
from ..metrics import code_metrics
from .model import Row, RunResults
from .pairwise import final_answer


def with_code_metrics(
    results: RunResults,
    sources: dict[str, CodeMetricSource],
    thresholds: dict[str, float] | None = None,
) -> RunResults:
    """``results`` with a row per case, candidate and code metric."""
    if not sources:
        return results
    functions = {
        name: code_metrics.load_function(name, source.source, source.origin)
        for name, source in sources.items()
    }
    rows = list(results.rows)
    firsts: dict[tuple[str, str], Row] = {}
    for row in results.rows:
        firsts.setdefault((row.eval_case_id, row.candidate), row)
    for (case_id, candidate), first in firsts.items():
        record = results.conversations.get(case_id)
        given = code_metrics.instance(
            case_id,
            record.prompt if record else None,
            record.golden if record else None,
            record.candidates.get(candidate) if record else None,
            final_answer,
        )
        for name, function in functions.items():
            scored = code_metrics.score(name, function, candidate, given)
            rows.append(
                dataclasses.replace(
                    first,
                    metric=name,
                    score=scored.score,
                    threshold=(thresholds or {}).get(name),
                    explanation=scored.explanation,
                    verdicts=(),
                )
            )
    return RunResults(results.run, rows, results.conversations, results.judge)
