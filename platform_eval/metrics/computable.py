"""Whether the local engine, with the judges it has, can compute a metric at all.

Asked before anything is uploaded (the CLI, ``jobs``) and when a run is created (the emulator
answers 400), so that a judged metric with no judge to decide it is refused up front rather than
NOT_EVALUATED case after case.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import service_only
from ._spec import MetricSpec
from .code_execution import ALLOW_FLAG
from .engine import REGISTRY
from .judges import LOCAL_TYPES, Judges


def why_not_computable(
    spec: MetricSpec, judges: Judges, rubric_types: Sequence[str | None] | None = None
) -> str | None:
    """Why ``spec`` cannot be computed with ``judges``, or None when it can.

    ``rubric_types``: the types of the rubrics the eval set carries, when known (None: not
    known, and rubric metrics are let through, their rubrics decided or reported per case).
    """
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
