"""Failure analysis of a finished run: its failed rubric verdicts of one metric, clustered into a
two-level taxonomy (``:generateLossClusters``), with the eval cases of each cluster.

``analyze(client, run, metric=...)`` uses the clusters recorded with the run when it asked for
them (``lossAnalysisConfig``), else asks the location's ``generateLossClusters`` for the run's
result set: against the emulator the judge model clusters them (and its cache answers the same
question again), against a project the service does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..client import Client
from ..errors import PlatformEvalError
from ..types import EvaluationRun, LossAnalysisResult
from ._safe_text import printable
from .fetch import fetch_results


class AnalysisError(PlatformEvalError, ValueError):
    """The run cannot be analysed as asked (no such metric, several to choose from)."""


@dataclass(frozen=True)
class LossClusterRow:
    l1: str
    l2: str
    description: str
    #: Items (cases x candidates) of the cluster, and their share of the failing ones.
    count: int
    share: float
    #: The eval cases of the cluster, each once, in the run's order.
    cases: tuple[str, ...]


@dataclass(frozen=True)
class LossReport:
    run: str
    metric: str
    #: Items with at least one failed rubric of the metric.
    failing: int
    clusters: tuple[LossClusterRow, ...]
    #: True when the clusters were recorded with the run (no new analysis was made).
    recorded: bool

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    def to_table(self) -> str:
        lines = [
            f"Failure analysis of {self.run}, metric {self.metric}: {self.failing} failing "
            f"item(s), {len(self.clusters)} cluster(s)"
        ]
        if not self.clusters:
            return lines[0] + "\n"
        header = ("L1", "L2", "count", "%", "description")
        rows = [
            (c.l1, c.l2, str(c.count), f"{100 * c.share:.0f}%", c.description)
            for c in self.clusters
        ]
        widths = [max(len(printable(r[i])) for r in [header, *rows]) for i in range(4)]
        for row in [header, *rows]:
            cells = [printable(row[i]).ljust(widths[i]) for i in range(4)]
            lines.append("  ".join([*cells, printable(row[4])]).rstrip())
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        from ._templates import render

        clusters = [{**asdict(c), "percent": f"{100 * c.share:.0f}%"} for c in self.clusters]
        return render(
            "loss.html.j2",
            run=self.run,
            metric=self.metric,
            failing=self.failing,
            clusters=clusters,
        )


def _failing_metrics(results: Any) -> dict[str, set[str]]:
    """metric -> the result items with at least one failed rubric of it."""
    found: dict[str, set[str]] = {}
    for row in results.rows:
        if any(v.verdict is False for v in row.verdicts):
            found.setdefault(row.metric, set()).add(row.item)
    return found


def _recorded(run: EvaluationRun, metric: str, top_k: int | None) -> LossAnalysisResult | None:
    analysed = run.evaluation_results.loss_analysis_results if run.evaluation_results else None
    for result in analysed or []:
        config = result.config
        same_top = config is not None and (top_k is None or config.max_top_cluster_count == top_k)
        if config is not None and config.metric == metric and same_top:
            return result
    return None


def analyze(
    client: Client, run: Any, *, metric: str | None = None, top_k: int | None = None
) -> LossReport:
    """The run's failures of ``metric`` (the only metric with failures when None) clustered;
    AnalysisError when the metric has to be named."""
    results = fetch_results(client, run)
    current = results.run
    if current is None:
        raise AnalysisError(f"{run}: not a run")
    failing = _failing_metrics(results)
    if metric is None:
        if len(failing) > 1:
            raise AnalysisError(
                f"{len(failing)} metrics have failed rubrics ({', '.join(sorted(failing))}): "
                "name one with --metric"
            )
        if not failing:
            named = sorted({row.metric for row in results.rows})
            return LossReport(str(current.name), ", ".join(named), 0, (), recorded=False)
        (metric,) = failing
    items = failing.get(metric, set())
    case_of = {row.item: row.eval_case_id for row in results.rows}
    analysed = _recorded(current, metric, top_k)
    recorded = analysed is not None
    if analysed is None and items:
        result_set = (
            current.evaluation_results.evaluation_set if current.evaluation_results else None
        )
        if not result_set:
            raise AnalysisError(f"{current.name} has no result set to analyse")
        config: dict[str, Any] = {"metric": metric}
        if top_k:
            config["maxTopClusterCount"] = top_k
        response = client.generate_loss_clusters(
            {"evaluationSet": result_set, "configs": [config]}, wait=True
        ).result()
        analysed = response.results[0] if response.results else None
    return LossReport(
        run=str(current.name),
        metric=metric,
        failing=len(items),
        clusters=_rows(analysed, case_of, len(items)),
        recorded=recorded,
    )


def _rows(
    analysed: LossAnalysisResult | None, case_of: dict[str, str], failing: int
) -> tuple[LossClusterRow, ...]:
    rows = []
    for cluster in (analysed.clusters if analysed else None) or []:
        entry = cluster.taxonomy_entry
        examples: Sequence[Any] = cluster.examples or []
        cases = tuple(
            dict.fromkeys(
                case_of.get(e.evaluation_item or "", e.evaluation_item or "?") for e in examples
            )
        )
        count = cluster.item_count if cluster.item_count is not None else len(examples)
        rows.append(
            LossClusterRow(
                l1=(entry.l1_category if entry else None) or "",
                l2=(entry.l2_category if entry else None) or "",
                description=(entry.description if entry else None) or "",
                count=count,
                share=count / failing if failing else 0.0,
                cases=cases,
            )
        )
    return tuple(rows)
