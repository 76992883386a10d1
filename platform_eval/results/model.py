"""A finished run's results as people read them: one row per eval case, candidate and metric.

Thresholds apply as in ADK: a row passes its metric when its score is at least the threshold;
a run passes when every row with a threshold passes. A row without a score is NOT_EVALUATED,
with the reason, and never passes. A metric with no threshold is NOT_CHECKED: its scores are
reported and nothing says it passed; results with no threshold at all are NOT_CHECKED as a
whole, never PASSED.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import PlatformEvalError
from ..metrics._spec import not_applicable
from ..metrics.thresholds import USAGE_THRESHOLDS, reliability_name
from ..types import AgentData, EvaluationItem, EvaluationRun, EvaluationRunState, RubricVerdict

# Status and format_score are this module's too, as they were before they moved.
from .reliability import Reliability, reliability
from .status import Status as Status
from .status import format_score as format_score
from .usage import Usage, usage


@dataclass(frozen=True)
class Verdict:
    rubric_id: str | None
    rubric: str
    verdict: bool | None
    reasoning: str | None

    @property
    def status(self) -> Status:
        if self.verdict is None:
            return Status.NOT_EVALUATED
        return Status.PASSED if self.verdict else Status.FAILED

    @property
    def mark(self) -> str:
        """PASS, FAIL or NOT_EVALUATED."""
        return {Status.PASSED: "PASS", Status.FAILED: "FAIL"}.get(self.status, self.status.value)


@dataclass(frozen=True)
class Row:
    eval_case_id: str
    item: str
    request: str | None
    candidate: str
    metric: str
    score: float | None
    threshold: float | None
    explanation: str | None
    verdicts: tuple[Verdict, ...] = ()

    @property
    def status(self) -> Status:
        if self.score is None or math.isnan(self.score):
            if not_applicable(self.explanation):
                return Status.NOT_APPLICABLE
            return Status.NOT_EVALUATED
        if self.threshold is None:
            return Status.NOT_CHECKED
        return Status.PASSED if self.score >= self.threshold else Status.FAILED

    @property
    def passed(self) -> bool | None:
        """True or False against the threshold; None without one, or where the metric does not
        apply. NOT_EVALUATED is False."""
        status = self.status
        if status in (Status.NOT_CHECKED, Status.NOT_APPLICABLE):
            return None
        return status == Status.PASSED

    def as_dict(self) -> dict[str, Any]:
        return {
            "evalCaseId": self.eval_case_id,
            "item": self.item,
            "request": self.request,
            "candidate": self.candidate,
            "metric": self.metric,
            "score": self.score,
            "threshold": self.threshold,
            "status": self.status.value,
            "passed": self.passed,
            "explanation": self.explanation,
            "rubricVerdicts": [
                {
                    "rubricId": v.rubric_id,
                    "rubric": v.rubric,
                    "verdict": v.verdict,
                    "reasoning": v.reasoning,
                }
                for v in self.verdicts
            ],
        }


@dataclass(frozen=True)
class MetricSummary:
    metric: str
    mean: float | None
    #: The population standard deviation (n), as the service's ``STANDARD_DEVIATION``
    #: (``metrics/summary.py``): one standard deviation everywhere; 0.0 for a single score.
    stdev: float | None
    scored: int
    not_evaluated: int
    passed: int
    failed: int
    threshold: float | None

    @property
    def status(self) -> Status:
        if self.threshold is None:
            return Status.NOT_CHECKED if self.scored else Status.NOT_EVALUATED
        if self.failed or self.not_evaluated:
            return Status.FAILED if self.failed else Status.NOT_EVALUATED
        if not self.scored:
            # Every case was one the metric does not apply to: nothing passed.
            return Status.NOT_APPLICABLE
        return Status.PASSED


@dataclass(frozen=True)
class CaseSpread:
    """One metric of one case over its candidates (an agent run N times: N candidates): how
    much the score varies from run to run."""

    eval_case_id: str
    metric: str
    candidates: int
    scored: int
    mean: float | None
    #: The population standard deviation (n), as the summaries; 0.0 for a single score.
    stdev: float | None
    low: float | None
    high: float | None

    def describe(self) -> str:
        """``mean 0.667, stdev 0.471, 0.000-1.000 over 3 candidates``."""
        if self.mean is None:
            return f"no score over {self.candidates} candidates"
        missing = self.candidates - self.scored
        return (
            f"mean {format_score(self.mean)}, stdev {format_score(self.stdev)}, "
            f"{format_score(self.low)}-{format_score(self.high)} over {self.candidates} "
            "candidates" + (f" ({missing} not evaluated)" if missing else "")
        )


def _spread(case: str, metric: str, rows: list[Row]) -> CaseSpread:
    scores = [r.score for r in rows if r.score is not None and not math.isnan(r.score)]
    return CaseSpread(
        eval_case_id=case,
        metric=metric,
        candidates=len(rows),
        scored=len(scores),
        mean=statistics.fmean(scores) if scores else None,
        stdev=statistics.pstdev(scores) if scores else None,
        low=min(scores) if scores else None,
        high=max(scores) if scores else None,
    )


NOT_CHECKED_REASON = (
    "no metric has a threshold, neither recorded with the run nor given (--threshold "
    "METRIC=X or --config eval_config.json); the scores are shown, none was judged"
)


@dataclass(frozen=True)
class CaseRecord:
    """What a case was about, for reports: the golden answer and each candidate's record."""

    prompt: str | None
    golden: AgentData | str | None
    candidates: dict[str, AgentData | str | None]


class ThresholdError(PlatformEvalError):
    """Results that miss a threshold, or that could not be evaluated."""

    def __init__(self, results: RunResults) -> None:
        self.results = results
        super().__init__(results.failure_message())


#: What a report says in place of a run when there was none to start.
NO_RUN = "no evaluation run: every metric is a local code metric, computed here"


@dataclass
class RunResults:
    #: None when no run was started: every metric was a local code metric.
    run: EvaluationRun | None
    rows: list[Row]
    conversations: dict[str, CaseRecord] = field(default_factory=dict)
    #: What judging the run cost, where it is known (the embedded emulator judged it):
    #: calls, cacheHits, promptTokens, candidatesTokens, thoughtsTokens, and the same per
    #: metric (byMetric) and per eval case and metric (byCase).
    judge: dict[str, Any] | None = None
    #: Thresholds on repeated runs' reliability (``pass@k``, ``pass^k``): when given, they
    #: are the gate, and a single run's miss is counted in them (``reliability``).
    reliability_thresholds: dict[str, float] = field(default_factory=dict)
    #: Eval cases whose failures are reported and fail no gate (``--quarantine``).
    quarantine: frozenset[str] = frozenset()
    #: What each case run of the agent cost and took, by (eval case, candidate), as recorded
    #: with the run (``agents.usage``); upper bounds on it (``latency_p95_s``, ...).
    agent_usage: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    usage_thresholds: dict[str, float] = field(default_factory=dict)
    #: The price table costs are computed with (None: ``usage.PRICES``).
    prices: Mapping[str, tuple[float, float]] | None = None

    @property
    def run_failed(self) -> bool:
        return self.run is not None and self.run.state != EvaluationRunState.SUCCEEDED

    @property
    def run_name(self) -> str | None:
        return self.run.name if self.run is not None else None

    @property
    def run_state(self) -> str | None:
        return str(self.run.state) if self.run is not None else None

    @property
    def title(self) -> str:
        """The run's display name, else its name; what reports head with."""
        if self.run is None:
            return "local code metrics"
        return self.run.display_name or self.run.name or f"run {self.run.id}"

    def run_line(self) -> str:
        """``Run `NAME` (STATE)``, or that there was no run."""
        if self.run is None:
            return NO_RUN[0].upper() + NO_RUN[1:]
        return f"Run `{self.run.name}` ({self.run.state})"

    @property
    def thresholds(self) -> dict[str, float]:
        return {r.metric: r.threshold for r in self.rows if r.threshold is not None}

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(r.metric for r in self.rows))

    @property
    def cases(self) -> list[str]:
        return list(dict.fromkeys(r.eval_case_id for r in self.rows))

    def rows_by_case(self) -> dict[str, list[Row]]:
        """Each case's rows, cases in the order they first appear: one pass over the rows."""
        grouped: dict[str, list[Row]] = {}
        for row in self.rows:
            grouped.setdefault(row.eval_case_id, []).append(row)
        return grouped

    def summary(self) -> list[MetricSummary]:
        out = []
        for metric in self.metrics:
            rows = [r for r in self.rows if r.metric == metric]
            scores = [r.score for r in rows if r.score is not None and not math.isnan(r.score)]
            out.append(
                MetricSummary(
                    metric=metric,
                    mean=statistics.fmean(scores) if scores else None,
                    stdev=statistics.pstdev(scores) if scores else None,
                    scored=len(scores),
                    not_evaluated=sum(1 for r in rows if r.status == Status.NOT_EVALUATED),
                    passed=sum(1 for r in rows if r.status == Status.PASSED),
                    failed=sum(1 for r in rows if r.status == Status.FAILED),
                    threshold=next((r.threshold for r in rows if r.threshold is not None), None),
                )
            )
        return out

    def spreads(self) -> list[CaseSpread]:
        """Per case and metric, the mean and spread over the case's candidates, for the cases
        that have several (``run --agent --num-runs N``); empty when every case has one."""
        grouped: dict[tuple[str, str], list[Row]] = {}
        for row in self.rows:
            grouped.setdefault((row.eval_case_id, row.metric), []).append(row)
        if all(len(rows) < 2 for rows in grouped.values()):
            return []
        return [_spread(case, metric, rows) for (case, metric), rows in grouped.items()]

    def spread_of(self) -> dict[tuple[str, str], CaseSpread]:
        """``spreads()`` by (eval case id, metric)."""
        return {(s.eval_case_id, s.metric): s for s in self.spreads()}

    def with_thresholds(self, thresholds: Mapping[str, float]) -> RunResults:
        """The same results judged against ``thresholds`` (metric -> minimum score; ``pass@k``
        and ``pass^k`` -> the least reliability of the repeated runs)."""
        by_metric, on_reliability, on_usage = split_thresholds(thresholds)
        rows = [
            dataclasses.replace(r, threshold=by_metric.get(r.metric, r.threshold))
            for r in self.rows
        ]
        return dataclasses.replace(
            self,
            rows=rows,
            reliability_thresholds={**self.reliability_thresholds, **on_reliability},
            usage_thresholds={**self.usage_thresholds, **on_usage},
        )

    def usage(self) -> Usage | None:
        """What the agent's runs cost and took, where it was recorded."""
        return usage(self)

    def usage_misses(self) -> list[str]:
        """Each cost or latency bound missed (or that cannot be computed), said."""
        if not self.usage_thresholds:
            return []
        found = self.usage()
        if found is None:
            names = ", ".join(self.usage_thresholds)
            return [f"{names}: cannot be computed: no agent run of this run recorded its usage"]
        return found.misses(self.usage_thresholds)

    def reliability(self) -> Reliability | None:
        """pass@k, pass^k and the flaky cases, where cases ran several times."""
        return reliability(self)

    def reliability_misses(self) -> list[str]:
        """Each reliability threshold missed (or that cannot be computed), said."""
        if not self.reliability_thresholds:
            return []
        found = self.reliability()
        if found is None:
            names = ", ".join(self.reliability_thresholds)
            return [
                f"{names}: cannot be computed: no case ran more than once with a threshold "
                "to pass (run --agent --num-runs N, with thresholds on its metrics)"
            ]
        return found.misses(self.reliability_thresholds)

    def gating_failures(self) -> list[Row]:
        """The failures that fail the run: not those of quarantined cases."""
        return [r for r in self.failures() if r.eval_case_id not in self.quarantine]

    def failures(self) -> list[Row]:
        """Rows that miss their threshold, and rows that could not be evaluated."""
        return [
            r
            for r in self.rows
            if r.status == Status.FAILED
            or (r.status == Status.NOT_EVALUATED and r.threshold is not None)
        ]

    @property
    def evaluated_anything(self) -> bool:
        return any(r.status not in (Status.NOT_EVALUATED, Status.NOT_APPLICABLE) for r in self.rows)

    @property
    def checked(self) -> bool:
        """True when at least one result has a threshold to be judged by."""
        return (
            bool(self.reliability_thresholds)
            or bool(self.usage_thresholds)
            or any(r.threshold is not None for r in self.rows)
        )

    @property
    def verdict(self) -> Status:
        """FAILED (the run failed, or a threshold was missed), NOT_EVALUATED (no score at all),
        NOT_CHECKED (scores, but no threshold to judge them by) or PASSED."""
        if self.run_failed or self.usage_misses():
            return Status.FAILED
        if self.reliability_thresholds:
            # Repeated runs are judged by their reliability: one run's miss is counted in it.
            if self.reliability_misses():
                return Status.FAILED
        elif self.gating_failures():
            return Status.FAILED
        if not self.evaluated_anything:
            return Status.NOT_EVALUATED
        return Status.PASSED if self.checked else Status.NOT_CHECKED

    @property
    def passed(self) -> bool:
        """Every threshold met, the run succeeded, at least one score was computed, and at
        least one threshold was checked: results nobody judged never pass."""
        return self.verdict == Status.PASSED

    @property
    def ok(self) -> bool:
        """Nothing failed: PASSED, or NOT_CHECKED (the command exits 0 and says so)."""
        return self.verdict in (Status.PASSED, Status.NOT_CHECKED)

    def check(self, thresholds: Mapping[str, float] | None = None) -> bool:
        return (self.with_thresholds(thresholds) if thresholds else self).passed

    def assert_passed(self, thresholds: Mapping[str, float] | None = None) -> None:
        judged = self.with_thresholds(thresholds) if thresholds else self
        if not judged.passed:
            raise ThresholdError(judged)

    def verdict_line(self) -> str:
        """The last line every report prints: PASSED, NOT CHECKED with why, or the failures."""
        verdict = self.verdict
        if verdict == Status.PASSED:
            return "PASSED"
        if verdict == Status.NOT_CHECKED:
            return f"NOT CHECKED: {NOT_CHECKED_REASON}"
        return self.failure_message()

    def _why_nothing(self) -> str:
        reasons = sorted({r.explanation or "no reason given" for r in self.rows})
        return "nothing could be evaluated: " + "; ".join(reasons[:5])

    def failure_message(self) -> str:
        if self.verdict == Status.NOT_CHECKED:
            return f"nothing was checked: {NOT_CHECKED_REASON}"
        if self.run is not None and self.run_failed:
            error = self.run.error.message if self.run.error else "no error message"
            said = f"run {self.run.name} is {self.run.state}: {error}"
            if self.rows and not self.evaluated_anything:
                # The service fails a run with no score at all: why each result has none comes
                # first (a judge down, an agent that never answered), the run's word after.
                return f"{self._why_nothing()} ({said})"
            return said
        if not self.evaluated_anything:
            return self._why_nothing()
        over = self.usage_misses()
        if over:
            found_usage = self.usage()
            lines = [f"{len(over)} cost or latency bounds missed:", *(f"  {m}" for m in over)]
            if found_usage is not None:
                lines.append(f"  ({found_usage.line()})")
            return "\n".join(lines)
        missed = self.reliability_misses()
        if missed:
            found = self.reliability()
            lines = [f"{len(missed)} reliability thresholds missed:", *(f"  {m}" for m in missed)]
            if found is not None:
                lines.append(f"  ({found.line()})")
            return "\n".join(lines)
        failures = self.gating_failures()
        lines = [f"{len(failures)} of {len(self.rows)} results miss their threshold:"]
        for row in failures[:20]:
            score = "NOT_EVALUATED" if row.score is None else f"{row.score:.3f}"
            lines.append(
                f"  {row.eval_case_id} [{row.candidate}] {row.metric}: {score} < "
                f"{row.threshold} ({row.explanation or 'no explanation'})"
            )
            lines += [
                f"    rubric {v.rubric_id or v.rubric!r}: {v.mark.lower()} - {v.reasoning or ''}"
                for v in row.verdicts
                if v.verdict is not True
            ]
        quarantined = len(self.failures()) - len(failures)
        if quarantined:
            lines.append(f"({quarantined} failures of quarantined cases fail no gate)")
        return "\n".join(lines)

    def compare(self, after: RunResults, **options: Any) -> Any:
        """This run beside a later one: ``results.compare(before, after, **options)``, with
        per metric the paired delta, its 95% interval, a p-value and whether it regressed."""
        from .compare import compare

        return compare(self, after, **options)

    # -- renderers (see render.py) ----------------------------------------------------------

    def to_json(self, *, indent: int | None = 2) -> str:
        from .render import to_json

        return to_json(self, indent=indent)

    def to_csv(self) -> str:
        from .render import to_csv

        return to_csv(self)

    def to_junit(self) -> str:
        from .render import to_junit

        return to_junit(self)

    def to_markdown(self) -> str:
        from .render import to_markdown

        return to_markdown(self)

    def to_html(self) -> str:
        from .html import to_html

        return to_html(self)

    def to_table(self, *, rubrics: bool = False, width: int | None = None) -> str:
        """The plain-text table; ``width``: the columns to fit explanations in (None: whole)."""
        from .render import to_table

        return to_table(self, rubrics=rubrics, width=width)

    def to_dataframe(self) -> Any:
        """One row per case, candidate and metric (needs the ``pandas`` extra)."""
        try:
            import pandas as pd
        except ImportError:
            raise PlatformEvalError(
                "to_dataframe needs pandas: pip install 'platform-eval[pandas]'"
            ) from None
        spread = self.spread_of()
        records = []
        for r in self.rows:
            record = {k: v for k, v in r.as_dict().items() if k != "rubricVerdicts"}
            case = spread.get((r.eval_case_id, r.metric))
            record["caseMean"] = case.mean if case else None
            record["caseStdev"] = case.stdev if case else None
            records.append(record)
        return pd.DataFrame.from_records(
            records,
            columns=[
                "evalCaseId",
                "item",
                "request",
                "candidate",
                "metric",
                "score",
                "threshold",
                "status",
                "passed",
                "explanation",
                "caseMean",
                "caseStdev",
            ],
        )


def _verdicts(raw: Iterable[RubricVerdict]) -> tuple[Verdict, ...]:
    return tuple(
        Verdict(
            rubric_id=v.evaluated_rubric.rubric_id if v.evaluated_rubric else None,
            rubric=(v.evaluated_rubric.description if v.evaluated_rubric else None) or "",
            verdict=v.verdict,
            reasoning=v.reasoning,
        )
        for v in raw
    )


def build(
    run: EvaluationRun | None,
    results: Iterable[EvaluationItem],
    *,
    case_ids: Mapping[str, str] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> RunResults:
    """Rows from a run's RESULT items; ``case_ids`` maps request item names to eval case ids."""
    case_ids = case_ids or {}
    thresholds, on_reliability, on_usage = split_thresholds(thresholds or {})
    rows: list[Row] = []
    conversations: dict[str, CaseRecord] = {}
    for item in results:
        response = item.evaluation_response
        if response is None:
            continue
        request_name = response.evaluation_request
        case = case_ids.get(request_name or "") or _case_of(item, request_name)
        request = response.request
        if request is not None and case not in conversations:
            conversations[case] = _conversation(request)
        for result in response.candidate_results or []:
            metric = result.metric or response.metric or "?"
            rows.append(
                Row(
                    eval_case_id=case,
                    item=item.name or "",
                    request=request_name,
                    candidate=result.candidate or "",
                    metric=metric,
                    score=result.score,
                    threshold=thresholds.get(metric),
                    explanation=result.explanation,
                    verdicts=_verdicts(result.rubric_verdicts or []),
                )
            )
    recorded: dict[tuple[str, str], dict[str, Any]] = {}
    if run is not None:
        rows += _not_evaluated_rows(run, rows, thresholds)
        for case, by_candidate in run.recorded_agent_usage.items():
            recorded.update(((case, c), u) for c, u in by_candidate.items())
    return RunResults(
        run,
        rows,
        conversations,
        reliability_thresholds=on_reliability,
        agent_usage=recorded,
        usage_thresholds=on_usage,
    )


def split_thresholds(
    thresholds: Mapping[str, float],
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """(metric thresholds, reliability thresholds: ``pass@k`` and ``pass^k``, cost and latency
    bounds: ``latency_p95_s``, ...)."""
    on_usage = {m: v for m, v in thresholds.items() if m in USAGE_THRESHOLDS}
    on_reliability = {m: v for m, v in thresholds.items() if reliability_name(m) is not None}
    by_metric = {
        m: v for m, v in thresholds.items() if m not in on_usage and m not in on_reliability
    }
    return by_metric, on_reliability, on_usage


def _not_evaluated_rows(
    run: EvaluationRun, rows: list[Row], thresholds: Mapping[str, float]
) -> list[Row]:
    """A NOT_EVALUATED row per metric for each candidate that never reached the run (the
    agent failed on its case), with the reason recorded when the run was started."""
    config = run.evaluation_config
    names = [str(m.metric) for m in (config.metrics if config else None) or [] if m.metric]
    metrics = list(dict.fromkeys([*names, *(r.metric for r in rows)]))
    return [
        Row(
            eval_case_id=case,
            item="",
            request=None,
            candidate=candidate,
            metric=metric,
            score=None,
            threshold=thresholds.get(metric),
            explanation=why,
        )
        for case, candidates in run.recorded_not_evaluated.items()
        for candidate, why in candidates.items()
        for metric in metrics
    ]


def eval_case_id(item: EvaluationItem) -> str | None:
    """The eval case an item records in its metadata (``evalCaseId``), if it records one."""
    metadata = item.metadata if isinstance(item.metadata, dict) else {}
    case = metadata.get("evalCaseId")
    return str(case) if isinstance(case, str) and case else None


def _case_of(item: EvaluationItem, request_name: str | None) -> str:
    return eval_case_id(item) or (request_name or item.name or "?").rsplit("/", 1)[-1]


def _conversation(request: Any) -> CaseRecord:
    prompt = request.prompt.text if request.prompt is not None else None
    golden_response = request.golden_response
    golden: AgentData | str | None = None
    if golden_response is not None:
        golden = golden_response.agent_data or golden_response.text
    candidates: dict[str, AgentData | str | None] = {}
    for candidate in request.candidate_responses or []:
        candidates[candidate.candidate or ""] = candidate.agent_data or candidate.text
    return CaseRecord(prompt=prompt, golden=golden, candidates=candidates)
