"""ADK's LLM-judged criteria, computed by google-adk's own evaluators.

``final_response_match_v2``, ``rubric_based_final_response_quality_v1``,
``rubric_based_tool_use_quality_v1`` and ``hallucinations_v1`` are scored by the evaluator
classes of the installed google-adk, so that the prompt templates, the parsing of the judge's
answer, the sampling (``num_samples``), the majority vote and the aggregation per invocation
are ADK's own, never a copy. Two things are ours:

- the invocations: a candidate's AgentData turns are turned into ADK events and read by ADK's
  own ``EvaluationGenerator.convert_events_to_eval_invocations``, as a saved session would be;
  the golden turns likewise; rubrics are attached as ADK's local eval service attaches them
  (the case's to every turn, a turn's to its own);
- the model: the evaluator's judge is a small ``BaseLlm`` that hands each request to the
  ``ModelJudge`` it was given (the replay cache, the accounting, the concurrency), unchanged.

``safety_v1`` calls the Vertex AI evaluation service: the emulator does not imitate it, so on
the emulator it is NOT_EVALUATED, saying so; against a project the run names it and the service
computes it (it is one of the service's predefined metrics).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from ..types import (
    CANDIDATE_GROUNDING_KEY,
    CANDIDATE_TURN_AGENTS_KEY,
    USER_PERSONA_KEY,
    AgentConfig,
    AgentData,
    CandidateResult,
    EvaluationRequest,
    Rubric,
    RubricContent,
    RubricContentProperty,
    RubricVerdict,
)
from ..types.predefined_metrics import SDK_2_7_PREDEFINED
from ._invocations import Subject
from ._spec import MetricInfo, MetricSpec, NotApplicableError, NotEvaluatedError
from .adk_reasons import KeepsReasons
from .judges import Judges
from .model_judge import CallLabel, JudgeUnavailableError, ModelJudge, ModelReply

#: metric -> (module of google.adk.evaluation, evaluator class, reads)
_EVALUATORS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "final_response_match_v2": (
        "final_response_match_v2",
        "FinalResponseMatchV2Evaluator",
        ("golden", "response"),
    ),
    "rubric_based_final_response_quality_v1": (
        "rubric_based_final_response_quality_v1",
        "RubricBasedFinalResponseQualityV1Evaluator",
        ("rubrics", "response", "trajectory"),
    ),
    "rubric_based_tool_use_quality_v1": (
        "rubric_based_tool_use_quality_v1",
        "RubricBasedToolUseV1Evaluator",
        ("rubrics", "trajectory"),
    ),
    "hallucinations_v1": ("hallucinations_v1", "HallucinationsV1Evaluator", ("response",)),
    # A conversation_scenario case: did the simulated user keep to the scenario?
    "per_turn_user_simulator_quality_v1": (
        "simulation.per_turn_user_simulator_quality_v1",
        "PerTurnUserSimulatorQualityV1",
        ("scenario", "conversation"),
    ),
}

#: The criteria google-adk's own evaluators compute here.
ADK_CRITERIA = frozenset(_EVALUATORS)

#: Evaluators that build their judge in ``_setup_llm`` (the others: ``_setup_auto_rater``).
_SETUP_LLM = ("per_turn_user_simulator_quality_v1",)

#: ADK's criterion fields a run metric may carry (computationBasedMetricSpec.parameters).
CRITERION_PARAMS = (
    "threshold",
    "judge_model_options",
    "include_intermediate_responses_in_final",
    "evaluate_intermediate_nl_responses",
    "rubrics",
    "stop_signal",
)

NEEDS_ADK = (
    "google-adk is not installed: ADK's judged criteria run its own evaluators and prompt "
    "templates (pip install 'platform-eval[adk]')"
)


def adk_available() -> bool:
    try:
        importlib.import_module("google.adk.evaluation.llm_as_judge")
    except ImportError:
        return False
    return True


def _evaluation(name: str) -> Any:
    return importlib.import_module(f"google.adk.evaluation.{name}")


# -- the criterion --------------------------------------------------------------------------


def criterion(spec: MetricSpec, model: str) -> dict[str, Any]:
    """ADK's criterion for the metric, as its eval_config.json would give it: the fields the
    run metric carries, the inline rubrics, the judge model (``Judges.model_for``)."""
    given = dict(spec.params.get("criterion") or {})
    options = dict(given.get("judge_model_options") or {})
    if spec.params.get("num_samples") is not None:
        options.setdefault("num_samples", spec.params["num_samples"])
    options["judge_model"] = model
    given["judge_model_options"] = options
    given.setdefault("threshold", 0.0)  # decides ADK's per-turn status only, never a score
    if spec.rubrics and "rubrics" not in given:
        given["rubrics"] = [_adk_rubric(r) for r in spec.rubrics]
    if spec.name.startswith("rubric_based_"):
        given.setdefault("rubrics", [])
    return given


def _adk_rubric(rubric: Rubric) -> dict[str, Any]:
    return {
        "rubric_id": rubric.rubric_id or "",
        "rubric_content": {"text_property": rubric.description or ""},
        "type": rubric.type,
    }


# -- the invocations ------------------------------------------------------------------------


def _events(
    agent_data: AgentData,
    grounding: Mapping[str, Any] | None = None,
    turn_agents: Mapping[str, Any] | None = None,
) -> tuple[list[Any], dict[str, Any]]:
    """ADK events of AgentData turns (one invocation per turn), and each turn's app details;
    ``grounding`` (turn id -> event index -> metadata) is put back on the events that had it;
    ``turn_agents`` (turn id -> agent id -> AgentConfig) is what an agent was given in a turn
    where that differs from ``agents``."""
    from google.adk.events import Event
    from google.genai import types as genai_types

    turns = sorted(agent_data.turns or [], key=lambda t: t.turn_index or 0)
    known = _known_agents(agent_data)
    events: list[Any] = []
    details: dict[str, Any] = {}
    for position, turn in enumerate(turns):
        invocation_id = turn.turn_id or f"turn-{turn.turn_index or position}"
        given = (turn_agents or {}).get(turn.turn_id or "")
        turn_known = {**known, **_configs(given)} if isinstance(given, dict) else known
        turn_details = _app_details(turn_known, [event.author for event in turn.events or []])
        if turn_details is not None:
            details[invocation_id] = turn_details
        turn_events = list(turn.events or [])
        # An expected turn with intermediate responses and no final one ends with an empty
        # answer (formats.convert): its texts are then not final, as ADK reads that turn.
        no_final = bool(turn_events) and _empty_answer(turn_events[-1])
        grounded = (grounding or {}).get(turn.turn_id or "") or {}
        for index, event in enumerate(turn_events[:-1] if no_final else turn_events):
            stamp = event.event_time.timestamp() if event.event_time else 0.0
            found = grounded.get(str(index))
            content = event.content
            if content is not None and not content.parts:
                content = None  # a state change or grounding alone, as the session had it
            events.append(
                Event(
                    author=event.author or ("user" if _is_user(event) else "agent"),
                    content=content,
                    invocation_id=invocation_id,
                    timestamp=stamp,
                    partial=no_final and not _is_user(event) and event.author != "user",
                    grounding_metadata=genai_types.GroundingMetadata.model_validate(found)
                    if isinstance(found, dict)
                    else None,
                )
            )
    return events, details


def _configs(given: Mapping[str, Any]) -> dict[str, AgentConfig]:
    """The AgentConfigs a turn's record holds; one that is not (an edited file) is left out,
    and the agent's first turn's stands."""
    configs: dict[str, AgentConfig] = {}
    for agent_id, config in given.items():
        try:
            configs[agent_id] = AgentConfig.model_validate(config)
        except ValueError:
            continue
    return configs


def _is_user(event: Any) -> bool:
    return event.content is not None and event.content.role == "user"


def _empty_answer(event: Any) -> bool:
    parts = (event.content.parts if event.content is not None else None) or []
    return (
        event.author != "user"
        and bool(parts)
        and all(p.text == "" and not p.function_call and not p.function_response for p in parts)
    )


def _known_agents(agent_data: AgentData) -> dict[str, Any]:
    """The agents that say something (an instruction or tools): what ADK knows of an agent it
    ran. Agents known by name only (a saved session names its authors, nothing more) are not
    known, as ADK reading that session knows nothing of them."""
    return {
        agent_id: config
        for agent_id, config in (agent_data.agents or {}).items()
        if config.instruction or config.tools
    }


def _app_details(known: dict[str, Any], authors: list[str | None]) -> Any:
    """ADK's AppDetails of one invocation: as ADK's EvaluationGenerator records them, the known
    agents that took part in it (authored its events), in the order they first did."""
    present = [a for a in dict.fromkeys(authors) if a is not None and a in known]
    if not present:
        return None
    from google.adk.evaluation.app_details import AgentDetails, AppDetails

    return AppDetails(
        agent_details={
            agent_id: AgentDetails(
                name=known[agent_id].agent_id or agent_id,
                instructions=known[agent_id].instruction or "",
                tool_declarations=list(known[agent_id].tools or []),
            )
            for agent_id in present
        }
    )


def invocations(
    agent_data: AgentData,
    grounding: Mapping[str, Any] | None = None,
    turn_agents: Mapping[str, Any] | None = None,
) -> list[Any]:
    """AgentData turns as ADK reads a session: one Invocation per turn, by ADK's own code."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    events, details = _events(agent_data, grounding, turn_agents)
    return list(EvaluationGenerator.convert_events_to_eval_invocations(events, details or None))


def _with_rubrics(request: EvaluationRequest, actual: list[Any]) -> None:
    """The request's rubrics on the actual invocations, as ADK's local eval service puts them:
    the case's (group ``eval_case``, and any group not of one turn) on every invocation, a
    turn's (group ``invocation_<n>``) on that invocation."""
    from google.adk.evaluation.eval_rubrics import Rubric as AdkRubric

    for key, group in (request.rubrics or {}).items():
        rubrics = [AdkRubric.model_validate(_adk_rubric(r)) for r in group.rubrics or []]
        if not rubrics:
            continue
        turn = key.removeprefix("invocation_")
        targets = (
            [actual[int(turn)]]
            if key.startswith("invocation_") and turn.isdigit() and int(turn) < len(actual)
            else actual
        )
        for invocation in targets:
            existing = {r.rubric_id for r in invocation.rubrics or []}
            invocation.rubrics = [
                *(invocation.rubrics or []),
                *(r for r in rubrics if r.rubric_id not in existing),
            ]


# -- the judge ------------------------------------------------------------------------------


class _Call:
    """What one evaluation's judge calls share: the judge, who asks, the samples so far, and
    the calls the judge could not answer."""

    def __init__(self, judge: ModelJudge, label: CallLabel, model: str) -> None:
        self.judge = judge
        self.label = label
        self.model = model
        self.samples: dict[str, int] = {}
        self.failures: list[str] = []
        #: The judge's reply behind each answer given to ADK, until ADK has read it.
        self._replies: dict[int, ModelReply] = {}

    async def ask(self, llm_request: Any) -> Any:
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types as genai_types

        # Repeated samples of one prompt are told apart by their order, so that each has its
        # own recorded answer in the cache.
        fingerprint = repr((llm_request.model, llm_request.contents))
        sample = self.samples.get(fingerprint, 0)
        self.samples[fingerprint] = sample + 1
        try:
            reply = await self.judge.generate(
                llm_request.model or self.model,
                list(llm_request.contents),
                llm_request.config,
                sample=sample,
                label=self.label,
            )
        except JudgeUnavailableError as exc:
            self.failures.append(str(exc))
            raise
        text = genai_types.Part(text=reply.text)
        response = LlmResponse(content=genai_types.Content(role="model", parts=[text]))
        self._replies[id(response)] = reply
        return response

    def read(self, llm_response: Any, *, usable: bool) -> None:
        """ADK read an answer: one it could take no score from is not given again (the judge
        forgets it, and a next run asks the model)."""
        reply = self._replies.pop(id(llm_response), None)
        if reply is not None and not usable:
            self.judge.unusable(reply)


@functools.cache
def _judge_llm_class() -> Any:
    """An ADK BaseLlm whose every request goes to its ``_Call`` as it is (built once: a
    pydantic model class costs milliseconds to build)."""
    from google.adk.models.base_llm import BaseLlm
    from pydantic import PrivateAttr

    class JudgeLlm(BaseLlm):
        _call: Any = PrivateAttr(default=None)

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[Any, None]:
            yield await self._call.ask(llm_request)

    return JudgeLlm


def _judge_llm(call: _Call) -> Any:
    llm = _judge_llm_class()(model=call.model)
    llm._call = call
    return llm


@functools.cache
def _judged_class(name: str) -> Any:
    """ADK's evaluator class for the metric, with the judge handed in instead of built from
    ADK's model registry (``_setup_auto_rater``); built once per metric."""
    module, class_name, _ = _EVALUATORS[name]
    adk_class = getattr(_evaluation(module), class_name)

    def setup(self: Any) -> Any:
        return _judge_llm(self._platform_eval_call)

    hook = "_setup_llm" if name in _SETUP_LLM else "_setup_auto_rater"
    return adk_class, type(class_name, (KeepsReasons, adk_class), {hook: setup})


def _evaluator(name: str, criterion_fields: dict[str, Any], call: _Call) -> Any:
    from google.adk.evaluation.eval_metrics import EvalMetric

    adk_class, judged = _judged_class(name)
    metric = EvalMetric(
        metric_name=name,
        threshold=criterion_fields.get("threshold"),
        criterion=adk_class.criterion_type.model_validate(criterion_fields),
    )
    evaluator = judged.__new__(judged)
    evaluator._platform_eval_call = call
    evaluator._platform_eval_start()
    evaluator.__init__(metric)
    return evaluator


def score(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    """ADK's evaluator's score of one candidate, or NotEvaluatedError saying why not."""
    if not adk_available():
        raise NotEvaluatedError(NEEDS_ADK)
    judge = judges.model
    if judge is None:
        raise NotEvaluatedError(
            f"{spec.name} is judged by a model, and none is configured: set "
            "PLATFORM_EVAL_JUDGE_MODEL (or pass --judge-model) to a Gemini or LiteLLM model"
        )
    request, candidate = subject.request, subject.candidate
    if candidate.agent_data is None or not candidate.agent_data.turns:
        raise NotEvaluatedError("ADK's judged criteria read a candidate's AgentData turns")
    fields = criterion(spec, judges.model_for(spec.params) or judge.model)
    model = fields["judge_model_options"]["judge_model"]
    label = CallLabel(spec.name, subject.case_id, candidate.candidate or "")
    call = _Call(judge, label, model)
    try:
        evaluator = _evaluator(spec.name, fields, call)
    except ValueError as exc:
        raise NotEvaluatedError(f"ADK refuses the criterion: {exc}") from None
    by_candidate = subject.metadata.get(CANDIDATE_GROUNDING_KEY)
    grounding = (
        by_candidate.get(candidate.candidate or "") if isinstance(by_candidate, dict) else None
    )
    by_candidate = subject.metadata.get(CANDIDATE_TURN_AGENTS_KEY)
    turn_agents = (
        by_candidate.get(candidate.candidate or "") if isinstance(by_candidate, dict) else None
    )
    actual = invocations(candidate.agent_data, grounding, turn_agents)
    golden = request.golden_response
    expected = (
        invocations(golden.agent_data)
        if golden is not None and golden.agent_data is not None
        else None
    )
    if expected is None and golden is not None and golden.text and _reads_golden(spec.name):
        # A reference answer alone (a dataset's `reference` column): the conversation's final
        # answer is judged against it, as the reference is the final answer expected.
        actual, expected = _against_reference(actual, golden.text)
    if expected is not None and len(expected) != len(actual) and spec.name not in _SETUP_LLM:
        raise NotEvaluatedError(
            f"the candidate has {len(actual)} turns and the golden response {len(expected)}"
        )
    _with_rubrics(request, actual)
    extra = {}
    if spec.name in _SETUP_LLM:
        extra["conversation_scenario"] = _scenario(subject)
        expected = None  # ADK's simulator check reads the scenario, not a golden conversation
    try:
        result = judge.run(evaluator.evaluate_invocations(actual, expected, **extra))
    except JudgeUnavailableError as exc:
        raise NotEvaluatedError(str(exc)) from None
    except ValueError as exc:  # ADK's own refusal: no rubrics, no expected turns
        raise NotEvaluatedError(f"{spec.name}: {exc}") from None
    if call.failures:
        # ADK scores the turns that were judged; a score over some turns is not the case's.
        more = f" ({len(call.failures)} calls in all)" if len(call.failures) > 1 else ""
        raise NotEvaluatedError(f"{call.failures[0]}{more}")
    reasons = evaluator.platform_eval_reasons(result.per_invocation_results or [])
    return _candidate_result(spec.name, candidate.candidate, result, reasons, fields)


def _reads_golden(name: str) -> bool:
    return "golden" in _EVALUATORS[name][2] if name in _EVALUATORS else False


def _against_reference(actual: list[Any], reference: str) -> tuple[list[Any], list[Any]]:
    """The last of ``actual``'s invocations, and the same turn expected to answer
    ``reference``: what ADK compares when the golden response is a text."""
    from google.genai import types as genai_types

    last = actual[-1]
    answer = genai_types.Content(role="model", parts=[genai_types.Part(text=reference)])
    expected = last.model_copy(update={"final_response": answer, "intermediate_data": None})
    return [last], [expected]


def _scenario(subject: Subject) -> Any:
    """The item's user scenario (an eval case's ``conversation_scenario``, its persona from
    the item's metadata) as ADK's own."""
    from google.adk.evaluation.conversation_scenarios import ConversationScenario

    request = subject.request
    scenario = request.prompt.user_scenario if request.prompt is not None else None
    if scenario is None:
        raise NotApplicableError(
            "per_turn_user_simulator_quality_v1 checks a simulated user against the case's "
            "conversation_scenario, and this case has none (a recorded conversation)"
        )
    persona = subject.metadata.get(USER_PERSONA_KEY)
    try:
        # A persona written out, or the id of one of ADK's own ("NOVICE"), which its
        # ConversationScenario resolves as adk eval does.
        return ConversationScenario.model_validate(
            {
                "starting_prompt": scenario.starting_prompt or "",
                "conversation_plan": scenario.conversation_plan or "",
                **({"user_persona": persona} if isinstance(persona, dict | str) else {}),
            }
        )
    except Exception as exc:
        raise NotApplicableError(
            f"conversation_scenario.user_persona {persona!r} is not a persona google-adk "
            f"knows: {exc}"
        ) from None


def _candidate_result(
    name: str,
    candidate: str | None,
    result: Any,
    reasons: list[str] | None = None,
    fields: Mapping[str, Any] | None = None,
) -> CandidateResult:
    """``reasons``: what the judge said of each turn (``adk_reasons``); ``fields``: the
    criterion, whose rubrics give a verdict its text."""
    per_turn = result.per_invocation_results or []
    scores = ", ".join("-" if r.score is None else f"{r.score:g}" for r in per_turn)
    given = {
        str(r.get("rubric_id")): str((r.get("rubric_content") or {}).get("text_property") or "")
        for r in (fields or {}).get("rubrics") or []
        if isinstance(r, dict)
    }
    verdicts = [
        RubricVerdict(
            evaluated_rubric=Rubric(
                rubric_id=score.rubric_id,
                content=RubricContent(property=RubricContentProperty(description=text)),
            ),
            verdict=None if score.score is None else score.score >= 1.0,
            reasoning=(f"turn {index}: " if len(per_turn) > 1 else "") + (score.rationale or ""),
        )
        for index, turn in enumerate(per_turn)
        for score, text in _rubric_texts(turn, given)
    ]
    # A rubric's reasons are its verdicts'; another criterion's are the judge's per turn.
    said = "" if verdicts else _per_turn(reasons or [], len(per_turn))
    if result.overall_score is None:
        return CandidateResult(
            candidate=candidate,
            metric=name,
            explanation=(
                f"not evaluated: the judge's answers could not be read for any turn "
                f"(per-turn scores {scores or 'none'}){said}"
            ),
            rubric_verdicts=verdicts or None,
        )
    return CandidateResult(
        candidate=candidate,
        metric=name,
        score=float(result.overall_score),
        explanation=f"{name} as google-adk computes it; per-turn scores {scores}{said}",
        rubric_verdicts=verdicts or None,
    )


def _rubric_texts(turn: Any, given: Mapping[str, str]) -> list[tuple[Any, str]]:
    """Each rubric score of ``turn`` with its rubric's text: the turn's own rubrics (the
    case's), else the criterion's (``given``, an eval config's)."""
    texts = {
        **given,
        **{
            r.rubric_id: r.rubric_content.text_property
            for r in turn.actual_invocation.rubrics or []
        },
    }
    return [(score, texts.get(score.rubric_id) or "") for score in turn.rubric_scores or []]


def _per_turn(reasons: list[str], turns: int) -> str:
    """``; the judge: turn 0: ...; turn 1: ...`` (without turn numbers for one turn)."""
    kept = [(index, reason) for index, reason in enumerate(reasons[:turns]) if reason]
    if not kept:
        return ""
    if turns == 1:
        return f"; the judge: {kept[0][1]}"
    return "; the judge: " + "; ".join(f"turn {index}: {reason}" for index, reason in kept)


def _safety(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    raise NotEvaluatedError(
        "safety_v1 is computed by the Vertex AI evaluation service (ADK calls it); the "
        "emulator does not imitate it: run against a project (--project) for this metric"
    )


ADK_JUDGED_METRICS = (
    *(
        MetricInfo(
            name,
            f"ADK: {name} by google-adk's own evaluator and prompt, judged by a model",
            reads=reads,
            needs_judge=True,
            # final_response_match_v2 is the service's too: sent there by name. The names
            # known to every SDK (not the installed one's): the CLI does not import the SDK
            # (seconds) to start.
            service_defined=name in SDK_2_7_PREDEFINED,
            params={"criterion": (), "judge_model": (), "num_samples": (), "rubric_group": ()},
            judged_scorer=score,
        )
        for name, (_, _, reads) in _EVALUATORS.items()
        # The rubric criteria are registered with the other rubric metrics, which hand them
        # here when a model judge is configured (a local judge decides typed rubrics).
        if not name.startswith("rubric_based_")
    ),
    MetricInfo(
        "safety_v1",
        "safety of the response: the Vertex AI evaluation service computes it (ADK calls it)",
        reads=("response",),
        needs_judge=True,
        # Sent to the service by name (a predefined metric of its own); never scored here.
        service_defined=True,
        params={"criterion": (), "judge_model": (), "num_samples": ()},
        judged_scorer=_safety,
    ),
)
