"""Rubric metrics: every rubric of the request is given to a judge that can decide it.

The score is the share of the rubrics that passed, and every rubric counts: when one of them
gets no verdict (no configured judge can decide it, or the judge failed on it) the candidate is
not evaluated for the metric, with no score, and the explanation names each such rubric with
the reason. A score over the decidable rubrics alone would pass a candidate on a subset.

Which rubrics: those of the group named by the ``rubric_group`` option, else every group of the
request. With no rubrics at all, a model judge (Gemini) writes them for the metric; without one
the candidate is not evaluated.
"""

from __future__ import annotations

from typing import Any

from ..types import CandidateResult, EvaluationRequest, Rubric, RubricVerdict
from . import adk_judged, model_rubrics
from ._invocations import Subject, final_text
from ._spec import MetricInfo, MetricSpec, NotApplicableError, NotEvaluatedError
from .judges import JudgeError, JudgeInput, Judges

# (name, description, defined by the service)
_METRICS = (
    (
        "rubric_based_final_response_quality_v1",
        "ADK: the final response against the request's rubrics",
        False,
    ),
    ("rubric_based_tool_use_quality_v1", "ADK: the tool use against the request's rubrics", False),
    (
        "general_quality_v1",
        "overall quality against rubrics (given, or written by the model judge)",
        True,
    ),
    ("final_response_quality_v1", "final response quality against rubrics", True),
    ("tool_use_quality_v1", "tool use quality against rubrics", True),
    ("multi_turn_task_success_v1", "whether the conversation achieved the user's task", True),
    ("instruction_following_v1", "instruction following against rubrics", True),
    ("text_quality_v1", "text quality against rubrics", True),
    # The versions the official client resolves unversioned names to (RubricMetric.GENERAL_QUALITY
    # is general_quality_v2); locally they are judged like v1.
    ("general_quality_v2", "overall quality against rubrics (latest version)", True),
    ("final_response_quality_v2", "final response quality against rubrics (latest)", True),
    ("tool_use_quality_v2", "tool use quality against rubrics (latest version)", True),
    ("instruction_following_v2", "instruction following against rubrics (latest)", True),
    ("text_quality_v2", "text quality against rubrics (latest version)", True),
)

#: The rest of the service's catalog (the official SDK's SUPPORTED_PREDEFINED_METRICS): on the
#: emulator each is judged in the same frame, with what the service's metric measures told to
#: the model that writes the rubrics (when the request brings none) and decides them.
#: name -> (description, what the written rubrics check, whether they need the reference)
_CATALOG: dict[str, tuple[str, str, bool]] = {
    **{
        f"final_response_reference_free_v{v}": (
            "the final response's quality on its own, with no reference answer",
            "the agent's final response on its own (there is no reference answer): that it "
            "answers what the user asked, is correct, complete and clear",
            False,
        )
        for v in (1, 2)
    },
    "final_response_match_v3": (
        "whether the final response agrees with the reference answer",
        "whether the agent's final response agrees with the REFERENCE ANSWER below: one rubric "
        "per fact or conclusion of the reference, satisfied when the response states the same",
        True,
    ),
    **{
        f"hallucination_v{v}": (
            "the share of the final response's claims the conversation supports",
            "the agent's final response, claim by claim: split it into its factual claims and "
            "write one rubric per claim, 'the claim \"...\" is supported by the conversation' "
            "(the user's messages, the tool results, the context given), not by outside "
            "knowledge",
            False,
        )
        for v in (1, 2)
    },
    **{
        f"grounding_v{v}": (
            "the share of the final response's claims grounded in the context given",
            "the agent's final response, claim by claim: one rubric per factual claim, "
            "satisfied when the context the prompt and the tool results give states it",
            False,
        )
        for v in (1, 2)
    },
    **{
        f"multi_turn_general_quality_v{v}": (
            "overall quality of every agent turn of a multi-turn conversation",
            "the whole multi-turn conversation, every agent turn: that each answers its user "
            "message, keeps to what was said before, and the conversation reaches its goal",
            False,
        )
        for v in (1, 2)
    },
    **{
        f"multi_turn_text_quality_v{v}": (
            "text quality (fluency, coherence, grounding) over a multi-turn conversation",
            "the text of every agent turn of the conversation: fluent, coherent with the turns "
            "before it, and consistent with what the user and the tools said",
            False,
        )
        for v in (1, 2)
    },
    "multi_turn_tool_use_quality_v1": (
        "tool use quality over every turn of a multi-turn conversation",
        "the agent's tool calls over the whole conversation: the right tools, with the right "
        "arguments, at the right turn, and their results used in the answers",
        False,
    ),
    "multi_turn_trajectory_quality_v1": (
        "the quality of the agent's whole trajectory over a multi-turn conversation",
        "the agent's trajectory over the whole conversation (its steps, tool calls and "
        "answers, in order): each step needed, none missing, in a sensible order",
        False,
    ),
}


def focus_of(metric: str) -> tuple[str, bool] | None:
    """What the rubrics of a catalog metric check, and whether they need the reference."""
    found = _CATALOG.get(metric)
    return (found[1], found[2]) if found else None


def _rubrics(spec: MetricSpec, request: EvaluationRequest) -> list[Rubric]:
    """The metric's own rubrics, then the request's (one group, or all); as ADK adds each turn's
    rubrics to the criterion's. A request rubric with the id of a metric rubric is the same one."""
    groups = request.rubrics or {}
    wanted = spec.params.get("rubric_group")
    if wanted:
        if wanted not in groups:
            raise NotEvaluatedError(
                f"the request has no rubric group {wanted!r}; it has {sorted(groups)}"
            )
        from_request = list(groups[wanted].rubrics or [])
    else:
        from_request = [rubric for group in groups.values() for rubric in group.rubrics or []]
    own_ids = {rubric.rubric_id for rubric in spec.rubrics if rubric.rubric_id}
    return [*spec.rubrics, *(r for r in from_request if r.rubric_id not in own_ids)]


#: ADK's rubric criteria: with a model judge configured, google-adk's own evaluators score them.
ADK_RUBRIC_CRITERIA = (
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
)


def _focus_and_reference(metric: str, request: EvaluationRequest) -> tuple[str | None, str | None]:
    """A catalog metric's focus, and the reference answer when its rubrics need one."""
    found = focus_of(metric)
    if found is None:
        return None, None
    focus, needs_reference = found
    if not needs_reference:
        return focus, None
    reference = final_text(request.golden_response) if request.golden_response else ""
    if not reference:
        raise NotApplicableError(
            f"{metric} compares the final response with a reference answer, and the case has none"
        )
    return focus, reference


def _score(spec: MetricSpec, scored: Subject, judges: Judges) -> CandidateResult:
    if spec.name in ADK_RUBRIC_CRITERIA and judges.model is not None:
        return adk_judged.score(spec, scored, judges)
    request, candidate = scored.request, scored.candidate
    subject = JudgeInput(spec.name, request, candidate, scored.case_id)
    rubrics = _rubrics(spec, request)
    verdicts: list[RubricVerdict] = []
    not_evaluated: list[dict[str, Any]] = []
    model = judges.model_for(spec.params)
    focus, reference = _focus_and_reference(spec.name, request)
    if not rubrics:
        if judges.model is None or model is None:
            raise NotEvaluatedError(
                "the request has no rubrics and no model judge is configured to write them"
            )
        try:
            verdicts = model_rubrics.decide(judges.model, model, [], subject, focus, reference)
        except JudgeError as exc:
            raise NotEvaluatedError(str(exc)) from None
    else:
        remaining = list(rubrics)
        for program in judges.programs:
            mine = [r for r in remaining if program.can_decide(r)]
            remaining = [r for r in remaining if r not in mine]
            for rubric in mine:
                try:
                    verdicts.extend(program.decide([rubric], subject))
                except JudgeError as exc:
                    not_evaluated.append({"rubricId": rubric.rubric_id, "reason": str(exc)})
        if judges.model is not None and model is not None:
            for rubric in remaining:
                try:
                    verdicts.extend(
                        model_rubrics.decide(
                            judges.model, model, [rubric], subject, reference=reference
                        )
                    )
                except JudgeError as exc:
                    not_evaluated.append({"rubricId": rubric.rubric_id, "reason": str(exc)})
            remaining = []
        for rubric in remaining:
            kind = rubric.type or "(no type)"
            not_evaluated.append(
                {
                    "rubricId": rubric.rubric_id,
                    "reason": f"no configured judge decides rubrics of type {kind}; "
                    "a judge model does (--judge-model or PLATFORM_EVAL_JUDGE_MODEL)",
                }
            )
    for verdict in verdicts:
        if verdict.verdict is None:
            evaluated = verdict.evaluated_rubric
            not_evaluated.append(
                {
                    "rubricId": evaluated.rubric_id if evaluated else None,
                    "reason": verdict.reasoning or "the judge gave no verdict",
                }
            )
    decided = [v for v in verdicts if v.verdict is not None]
    passed = sum(1 for v in decided if v.verdict)
    if not_evaluated:
        # A score over the decided rubrics alone would pass a candidate on the rubrics that
        # happened to be checkable: the metric is not evaluated, naming each rubric left.
        undecided = "; ".join(f"[{n['rubricId']}] {n['reason']}" for n in not_evaluated)
        explanation = (
            f"not evaluated: {len(not_evaluated)} of {len(decided) + len(not_evaluated)} "
            f"rubrics could not be decided: {undecided}"
        )
        if decided:
            explanation += f" ({passed} of the {len(decided)} decided passed)"
        score = None
    else:
        explanation = f"{passed} of {len(decided)} rubrics passed"
        score = passed / len(decided) if decided else None
        if not decided:
            explanation = "not evaluated: the judge returned no verdicts"
    return CandidateResult(
        candidate=candidate.candidate,
        metric=spec.name,
        score=score,
        explanation=explanation,
        rubric_verdicts=verdicts or None,
    )


_PARAMS: dict[str, tuple[Any, ...]] = {
    "rubric_group": (),
    "judge_model": (),
    "num_samples": (),
    "criterion": (),
}

RUBRIC_METRICS = (
    *(
        MetricInfo(
            name,
            description,
            reads=("rubrics", "response", "trajectory"),
            needs_judge=True,
            service_defined=service_defined,
            params=_PARAMS,
            judged_scorer=_score,
        )
        for name, description, service_defined in _METRICS
    ),
    *(
        MetricInfo(
            name,
            description,
            reads=("rubrics", "response", "trajectory", *(("golden",) if reference else ())),
            needs_judge=True,
            service_defined=True,
            params=_PARAMS,
            judged_scorer=_score,
        )
        for name, (description, _, reference) in _CATALOG.items()
    ),
)
