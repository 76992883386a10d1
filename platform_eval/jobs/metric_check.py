"""Can the target compute these metrics: asked once, before anything is uploaded or an agent
runs, by every way in (``evaluate``, the command line, the pytest plugin).

The emulator answers for its own engine and judges (``POST /_emulator/computable``, so that a
running emulator with a judge of its own is asked, not guessed at); for the service, the
metrics only the emulator computes (ADK's criteria, platform-eval's argument rules) are
refused here, and the service answers for the rest when the run is created.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import metrics as engine
from .._operations import MetricLike, to_metric
from ..client import AsyncClient, Client
from ..errors import PlatformEvalError
from ..formats import adk
from ..metrics.computable import ADK, CODE, JUDGE, SERVICE, UNKNOWN, Refusal

#: The service's closest metric to each of ADK's criteria, for the refusal that names them.
SERVICE_EQUIVALENTS = {
    "tool_trajectory_avg_score": "trajectory_exact_match (or _in_order_ / _any_order_match)",
    "response_match_score": "rouge_1",
    "rubric_based_final_response_quality_v1": "final_response_quality_v1",
    "rubric_based_tool_use_quality_v1": "tool_use_quality_v1",
}
#: Where the emulator only computes a metric: refused on the service with the kind of cause.
EMULATOR_ONLY = "emulator_only"
#: What would let each kind of refused metric be computed, for a Python caller; the command
#: line says it in its own flags.
ADVICE = {
    JUDGE: (
        "give the emulator a judge model (PLATFORM_EVAL_JUDGE_MODEL, or the command's "
        "--judge-model), or evaluate on the service (a project)"
    ),
    SERVICE: "evaluate on the service (a project)",
    ADK: "pip install 'platform-eval[adk]' (google-adk), or evaluate on the service (a project)",
}


class MetricsRefusedError(PlatformEvalError):
    """Metrics the target cannot compute, found before anything was uploaded."""

    def __init__(self, refusals: Sequence[Refusal], advice: dict[str, str] | None = None) -> None:
        self.refusals = list(refusals)
        advice = ADVICE if advice is None else advice
        lines = []
        for refusal in self.refusals:
            tip = advice.get(refusal.kind)
            lines.append(f"{refusal.reason}: {tip}" if tip else refusal.reason)
        super().__init__("; ".join(lines))


def rubric_types(eval_set: adk.EvalSet) -> list[str | None]:
    """The types of the rubrics an eval set's cases and turns carry."""
    found: list[str | None] = []
    for case in eval_set.eval_cases:
        found += [r.type for r in case.rubrics or []]
        for invocation in case.conversation or []:
            found += [r.type for r in invocation.rubrics or []]
    return found


def service_refusals(chosen: Sequence[MetricLike]) -> list[Refusal]:
    """The metrics the service does not compute: ADK's criteria and platform-eval's argument
    rules (the emulator's own). A name this version does not know is left to the service,
    which may know metrics this version does not."""
    found = []
    local_only = []
    for metric in chosen:
        name = str(to_metric(metric).metric or "")
        try:
            params: Mapping[str, Any] = engine.resolve(to_metric(metric)).params
        except engine.MetricError:
            params = {}
        rules = sorted(set(params) & {"args_match", "extra_args", "keys_match"})
        if rules:
            found.append(
                Refusal(
                    name,
                    f"metric {name!r}: {', '.join(rules)} are platform-eval's own rules, "
                    "computed on the emulator only; the service compares arguments exactly: "
                    "evaluate on the emulator, or without those rules",
                    EMULATOR_ONLY,
                )
            )
            continue
        info = engine.REGISTRY.get(name)
        if info is not None and not info.service_defined:
            local_only.append(name)
    if local_only:
        instead = "; ".join(f"{n} -> {SERVICE_EQUIVALENTS.get(n, '?')}" for n in local_only)
        found.append(
            Refusal(
                ", ".join(local_only),
                f"the service does not compute {', '.join(local_only)} (ADK's criteria, "
                f"computed by the emulator only); its closest metrics: {instead}",
                EMULATOR_ONLY,
            )
        )
    return found


async def refusals_async(
    client: AsyncClient,
    chosen: Sequence[MetricLike],
    types: Sequence[str | None] | None = None,
) -> list[Refusal]:
    """What of ``chosen`` the client's target cannot compute (``types``: the rubric types the
    cases carry, where known)."""
    if not chosen:
        return []
    answered = await client.metric_refusals(chosen, types)
    if answered is None:
        return service_refusals(chosen)
    return [
        Refusal(str(r.get("metric", "")), str(r.get("reason", "")), str(r.get("kind", UNKNOWN)))
        for r in answered
    ]


def check_metrics(
    client: Client | AsyncClient,
    chosen: Sequence[MetricLike],
    types: Sequence[str | None] | None = None,
) -> Any:
    """Raises MetricsRefusedError naming every metric the target cannot compute, and why
    (a coroutine for an AsyncClient)."""
    from .._sync import run_or_defer

    async def job(async_client: AsyncClient) -> None:
        found = await refusals_async(async_client, chosen, types)
        if found:
            raise MetricsRefusedError(found)

    return run_or_defer(client, job)


__all__ = [
    "CODE",
    "EMULATOR_ONLY",
    "JUDGE",
    "SERVICE",
    "UNKNOWN",
    "MetricsRefusedError",
    "check_metrics",
    "refusals_async",
    "rubric_types",
    "service_refusals",
]
