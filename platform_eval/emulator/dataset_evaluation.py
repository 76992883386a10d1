"""``:evaluateDataset``: a batch evaluation of a Cloud Storage dataset, written back there.

The dataset is one object of the emulated Cloud Storage: JSON Lines, or a JSON array, of rows
(``prompt``, ``response``, ``reference`` and any template variables). Each row is scored by every
metric with the engine ``:evaluateInstances`` uses; the results go under the output prefix, one
line per row (``evaluation_results.jsonl``), and the aggregates to ``aggregation_results.json``
and into the operation's response, as the discovery document describes them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from ..metrics import MetricError
from ..metrics.instances import (
    UnimplementedError,
    metric_name,
    metric_specs,
    row_instance,
    score_instance,
)
from ..metrics.judges import Judges
from ..types import MetricConfig
from ..types.instances import MetricResult
from .backend import ApiError
from .gcs import ObjectStore, parse_gs_uri

#: The aggregate of a metric's scores is answered in the field of its kind.
_VALUE_FIELD = {
    "exact_match": "exactMatchMetricValue",
    "bleu": "bleuMetricValue",
    **{name: "rougeMetricValue" for name in ("rouge_1", "rouge_2", "rouge_l", "rouge_l_sum")},
}
_AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "AVERAGE": statistics.fmean,
    "STANDARD_DEVIATION": lambda v: statistics.stdev(v) if len(v) > 1 else 0.0,
    "VARIANCE": lambda v: statistics.variance(v) if len(v) > 1 else 0.0,
    "MINIMUM": min,
    "MAXIMUM": max,
    "MEDIAN": statistics.median,
    "MODE": statistics.mode,
}


def read_rows(objects: ObjectStore, uri: str, project: str) -> list[dict[str, Any]]:
    """The dataset's rows: a JSON array, or JSON Lines."""
    bucket, name = parse_gs_uri(uri)
    objects.claim(bucket, project)
    data, _ = objects.get(bucket, name)
    text = data.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
        rows = parsed if isinstance(parsed, list) else [parsed]
    except ValueError:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise ApiError(
                    "INVALID_ARGUMENT", f"{uri} line {number}: not JSON ({exc})"
                ) from None
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ApiError("INVALID_ARGUMENT", f"{uri} row {index + 1}: expected a JSON object")
    return rows


def evaluate_rows(
    rows: Sequence[dict[str, Any]],
    configs: Sequence[MetricConfig],
    judges: Judges,
    judge: Any = None,
) -> tuple[list[str], list[list[MetricResult]]]:
    """(the metric names, each row's results in the metrics' order); MetricError naming the
    metric or the row that cannot be scored."""
    specs = metric_specs([(f"metrics[{i}]", c) for i, c in enumerate(configs)], judges, judge)
    names = [metric_name(config) for config in configs]
    results = [
        score_instance(specs, row_instance(row, f"row {index + 1}"), judges, f"row {index + 1}")
        for index, row in enumerate(rows)
    ]
    return names, results


def aggregate(
    names: Sequence[str], configs: Sequence[MetricConfig], results: Sequence[list[MetricResult]]
) -> list[dict[str, Any]]:
    """One AggregationResult per metric and aggregation asked (AVERAGE and STANDARD_DEVIATION
    when a metric asks none), over the rows it scored."""
    found = []
    for index, (name, config) in enumerate(zip(names, configs, strict=True)):
        scores = [score for row in results if (score := row[index].score) is not None]
        if not scores:
            continue
        for kind in config.aggregation_metrics or ["AVERAGE", "STANDARD_DEVIATION"]:
            compute = _AGGREGATES.get(kind)
            if compute is None:
                raise ApiError(
                    "UNIMPLEMENTED",
                    f"metrics[{index}].aggregationMetrics: {kind} is not computed by the emulator "
                    f"(it computes {', '.join(_AGGREGATES)})",
                )
            field = _VALUE_FIELD.get(name, "pointwiseMetricResult")
            found.append({"aggregationMetric": kind, field: {"score": float(compute(scores))}})
    return found


def evaluate_dataset(
    rows: Sequence[dict[str, Any]],
    configs: Sequence[MetricConfig],
    judges: Judges,
    judge: Any,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(a line per row with its results, the aggregation results)."""
    try:
        names, results = evaluate_rows(rows, configs, judges, judge)
    except UnimplementedError as exc:
        raise ApiError("UNIMPLEMENTED", str(exc)) from None
    except MetricError as exc:
        raise ApiError("INVALID_ARGUMENT", str(exc)) from None
    lines = [
        {
            **row,
            "metricResults": {
                name: result.to_wire() for name, result in zip(names, row_results, strict=True)
            },
        }
        for row, row_results in zip(rows, results, strict=True)
    ]
    return lines, aggregate(names, configs, results)
