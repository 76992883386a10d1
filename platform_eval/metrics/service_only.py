"""The service's metrics the emulator does not compute, each with the reason: it refuses them
before anything is uploaded, naming it, rather than inventing a score no judge like the
service's made."""

from __future__ import annotations

from ..types import CandidateResult
from ._invocations import Subject
from ._spec import MetricInfo, MetricSpec, NotEvaluatedError
from .judges import Judges

_SAFETY = "is computed by the Vertex AI evaluation service{adk}; the emulator does not imitate it"
_GECKO = (
    "scores a generated {what} against its prompt: it needs a judge that reads {what}s, and the "
    "emulator's judges read text"
)

#: metric -> why the emulator does not compute it.
SERVICE_ONLY: dict[str, str] = {
    "safety_v1": _SAFETY.format(adk=" (google-adk calls it)"),
    "safety_v3": _SAFETY.format(adk=""),
    # A predefined metric the service accepts by this name (issue 61's recorded runs); what it
    # computes is documented nowhere the emulator could follow.
    "universal_ar_v1": _SAFETY.format(adk=""),
    **{
        f"gecko_text2{what}_v{version}": _GECKO.format(what=what)
        for what in ("image", "video")
        for version in (1, 2)
    },
}


def reason(metric: str) -> str | None:
    """Why the emulator does not compute ``metric``, when it does not."""
    found = SERVICE_ONLY.get(metric)
    return f"metric {metric!r} {found}" if found else None


def _refused(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    raise NotEvaluatedError(f"{reason(spec.name)}: run against a project (--project)")


SERVICE_ONLY_METRICS = tuple(
    MetricInfo(
        name,
        description,
        reads=reads,
        needs_judge=True,
        service_defined=True,
        params={"judge_model": (), "num_samples": ()},
        judged_scorer=_refused,
    )
    for name, description, reads in (
        ("safety_v3", "safety of the response (the service computes it)", ("response",)),
        ("universal_ar_v1", "the service's predefined universal metric", ("prompt", "response")),
        *(
            (
                f"gecko_text2{what}_v{version}",
                f"a generated {what} against its prompt (the service computes it)",
                ("prompt", "response"),
            )
            for what in ("image", "video")
            for version in (1, 2)
        ),
    )
)
