"""Results people read: rows per eval case, candidate and metric, verdicts, thresholds, reports.

``fetch_results(client, run, thresholds=...)`` reads a finished run into ``RunResults``, which
renders as a terminal table, JSON, CSV, JUnit XML, Markdown, HTML or a pandas DataFrame, and
judges thresholds (``passed``, ``check``, ``assert_passed``). ``compare`` sets two runs side by
side.
"""

from .compare import Change, Comparison, compare, merge_runs
from .fetch import fetch_results, fetch_results_async
from .model import (
    CaseRecord,
    MetricSummary,
    Row,
    RunResults,
    Status,
    ThresholdError,
    Verdict,
    build,
)

__all__ = [
    "CaseRecord",
    "Change",
    "Comparison",
    "MetricSummary",
    "Row",
    "RunResults",
    "Status",
    "ThresholdError",
    "Verdict",
    "build",
    "compare",
    "fetch_results",
    "fetch_results_async",
    "merge_runs",
]
