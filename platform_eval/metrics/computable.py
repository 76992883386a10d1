"""Whether the local engine, with the judges it has, can compute a metric at all.

Asked before anything is uploaded (the CLI, ``jobs``) and when a run is created (the emulator
answers 400), so that a judged metric with no judge to decide it is refused up front rather than
NOT_EVALUATED case after case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import service_only
from ._spec import MetricError, MetricSpec
from .adk_judged import ADK_CRITERIA, adk_available
from .code_execution import ALLOW_FLAG
from .engine import REGISTRY, resolve
from .judges import LOCAL_TYPES, Judges
from .rubric_metrics import ADK_RUBRIC_CRITERIA

#: What keeps a metric from being computed, as ``Refusal.kind`` says it.
UNKNOWN = "unknown"  # no such metric, or a spec the engine refuses
SERVICE = "service"  # only the service computes it
JUDGE = "judge"  # a judge model would compute it, and none is configured
CODE = "code"  # a custom code metric, and code metrics are not allowed
ADK = "adk"  # one of ADK's judged criteria, and google-adk is not installed


@dataclass(frozen=True)
class Refusal:
    """A metric the local engine, with its judges, cannot compute: which, why, and the kind of
    cause (``UNKNOWN``, ``SERVICE``, ``JUDGE``, ``CODE``, ``ADK``), which says what would
    help."""

    metric: str
    reason: str
    kind: str

    def to_json(self) -> dict[str, str]:
        return {"metric": self.metric, "reason": self.reason, "kind": self.kind}


def refusals(
    metrics: Sequence[Any], judges: Judges, rubric_types: Sequence[str | None] | None = None
) -> list[Refusal]:
    """The metrics of ``metrics`` (EvaluationRunMetrics) that cannot be computed here, in order.

    A registered metric (``metricResourceName``) is looked up when its run is created: it is
    let through here."""
    found = []
    for metric in metrics:
        if getattr(metric, "metric_resource_name", None):
            continue
        name = str(getattr(metric, "metric", None) or "(unnamed)")
        try:
            spec = resolve(metric)
        except MetricError as exc:
            why = f"metric {name!r} cannot be computed on the emulator: {exc}"
            found.append(Refusal(name, why, UNKNOWN))
            continue
        beyond = service_only.reason(spec.name)
        if beyond is not None:
            found.append(Refusal(spec.name, beyond, SERVICE))
            continue
        if _needs_adk(spec, judges) and not adk_available():
            why = (
                f"metric {spec.name!r} is judged by google-adk's own evaluator and prompts, and "
                "google-adk is not installed where the emulator runs"
            )
            found.append(Refusal(spec.name, why, ADK))
            continue
        why_not = why_not_computable(spec, judges, rubric_types)
        if why_not is not None:
            kind = CODE if "evaluation_function" in spec.params else JUDGE
            found.append(Refusal(spec.name, why_not, kind))
    return found


def _needs_adk(spec: MetricSpec, judges: Judges) -> bool:
    """One of ADK's judged criteria, scored by google-adk's evaluator: ADK's rubric criteria
    only with a model judge (without one, the local judge decides their typed rubrics here)."""
    if spec.name not in ADK_CRITERIA:
        return False
    return spec.name not in ADK_RUBRIC_CRITERIA or judges.model is not None


def why_not_computable(
    spec: MetricSpec, judges: Judges, rubric_types: Sequence[str | None] | None = None
) -> str | None:
    """Why ``spec`` cannot be computed with ``judges``, or None when it can.

    ``rubric_types``: the types of the rubrics the eval set carries, when known (None: not
    known, and rubric metrics are let through, their rubrics decided or reported per case).
    """
    if spec.computes is not None:  # a label for the metric it computes
        return why_not_computable(spec.computes, judges, rubric_types)
    has_model = judges.model is not None
    if "evaluation_function" in spec.params:  # a custom code metric
        if judges.code is None:
            return (
                f"metric {spec.name!r} is a custom code metric: the emulator runs the code it "
                f"receives only when started with {ALLOW_FLAG} (in a subprocess with a time "
                "and a memory limit)"
            )
        return None
    if spec.scorer is not None:  # a custom LLM metric
        if not has_model:
            return (
                f"metric {spec.name!r} is a custom LLM metric: a judge model scores it, and none "
                "is configured"
            )
        return None
    info = REGISTRY[spec.name]
    if not info.needs_judge:
        return None
    if (why := service_only.reason(spec.name)) is not None:
        return f"{why}: run against a project"
    if has_model:
        return None
    if "rubrics" not in info.reads:
        return f"metric {spec.name!r} is judged by a model, and none is configured"
    if rubric_types is None:
        return None
    types = [*rubric_types, *(r.type for r in spec.rubrics)]
    undecidable = sorted({str(t) for t in types if (t or "").upper() not in LOCAL_TYPES})
    if types and not undecidable:
        return None
    what = "has no rubrics" if not types else f"has rubrics of types {undecidable}"
    return (
        f"metric {spec.name!r} needs a judge for free-text rubrics, and only the local judge is "
        f"configured (it decides rubrics typed {', '.join(sorted(LOCAL_TYPES))}); the eval set "
        f"{what}"
    )
