"""EvaluationItem and its payloads: EvaluationRequest (REQUEST), EvaluationResult (RESULT)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationInfo, model_validator

from ._base import Content, Timestamp, WireModel, is_from_server, oneof, output_only
from .agent_data import AgentData
from .enums import OpenEvaluationItemType
from .rubrics import RubricGroup, RubricVerdict
from .status import Status


class PromptTemplateData(WireModel):
    values: dict[str, Content] | None = None


class UserScenario(WireModel):
    starting_prompt: str | None = None
    conversation_plan: str | None = None
    #: A short title for the eval case (3 to 5 words), as scenario generation writes it.
    test_case_title: str | None = None


class EvaluationPrompt(WireModel):
    """The prompt of a request: text, a value, template data, or prior turns as AgentData."""

    text: str | None = None
    value: dict[str, Any] | None = None
    prompt_template_data: PromptTemplateData | None = None
    user_scenario: UserScenario | None = None
    agent_data: AgentData | None = None

    _one_prompt = oneof("text", "value", "prompt_template_data")


class CandidateResponse(WireModel):
    """One response under evaluation (or the golden response): text, value, events or AgentData."""

    candidate: str | None = None
    text: str | None = None
    value: dict[str, Any] | None = None
    events: list[Content] | None = None
    agent_data: AgentData | None = None
    error: Status | None = output_only()

    _one_response = oneof("text", "value", "agent_data")


class EvaluationRequest(WireModel):
    """What to evaluate.

    Inference mode has a ``prompt``; offline mode has no prompt and at least one candidate
    response carrying ``agent_data`` (a completed trace). One of the two must hold.
    """

    prompt: EvaluationPrompt | None = None
    golden_response: CandidateResponse | None = None
    rubrics: dict[str, RubricGroup] | None = None
    candidate_responses: list[CandidateResponse] | None = None

    @model_validator(mode="after")
    def _check_mode(self, info: ValidationInfo) -> EvaluationRequest:
        if is_from_server(info):
            return self
        problem = request_mode_problem(self)
        if problem:
            raise ValueError(problem)
        return self


def request_mode_problem(request: EvaluationRequest) -> str | None:
    """Why a request is neither in inference nor offline mode, or None when it is valid."""
    if request.prompt is not None:
        return None
    if any(c.agent_data is not None for c in request.candidate_responses or ()):
        return None
    return (
        "an EvaluationRequest needs a prompt (inference mode) or at least one candidate "
        "response with agentData (offline mode); it has neither"
    )


class CandidateResult(WireModel):
    candidate: str | None = None
    metric: str | None = None
    score: float | None = None
    explanation: str | None = None
    rubric_verdicts: list[RubricVerdict] | None = None
    additional_results: Any = None
    #: Output only: why this candidate could not be scored for this metric.
    error: Status | None = output_only()


class EvaluationResult(WireModel):
    """The ``evaluationResponse`` payload of a RESULT item."""

    evaluation_request: str | None = None
    #: Output only: the item revision scored, when the run read a set revision.
    evaluation_request_revision: str | None = output_only()
    evaluation_run: str | None = None
    request: EvaluationRequest | None = None
    metric: str | None = None
    candidate_results: list[CandidateResult] | None = None
    metadata: Any = None


class HarborTask(WireModel):
    """Output only: a Harbor task, the payload of a HARBOR_TASK item."""

    dataset: str | None = None
    gcs_uri: str | None = None
    task: str | None = None


#: Where an item's metadata keeps an ADK eval case's session input and golden final state
#: (the API has no field for either): written by formats, read by final_session_state_match.
SESSION_INPUT_KEY = "sessionInput"
FINAL_SESSION_STATE_KEY = "finalSessionState"
#: A conversation scenario's user persona (the API's UserScenario has no field for it), which
#: ADK's simulator-quality criterion reads.
USER_PERSONA_KEY = "userPersona"
#: Each candidate's grounding metadata (a model's search grounding, which AgentEvent has no field
#: for), by candidate name, turn id and the event's index in its turn: ADK's judged criteria
#: read it (the rubric prompt's <grounding_metadata>, the hallucination check's context).
CANDIDATE_GROUNDING_KEY = "candidateGrounding"
#: Each candidate's final session state where its recording holds one (an ADK session's
#: ``state``; AgentData has no field for it), by candidate name: final_session_state_match
#: reads it as the candidate's state, an empty one included.
CANDIDATE_STATE_KEY = "candidateState"
#: What an agent was given in a turn where it differs from what AgentData's ``agents`` holds
#: (its first turn's): a system instruction that changes with the session's state, tools added
#: on the way. By candidate name, turn id and agent id, as an AgentConfig in wire form: ADK's
#: judged criteria read each turn's app details as adk eval records them.
CANDIDATE_TURN_AGENTS_KEY = "candidateTurnAgents"


class EvaluationItem(WireModel):
    name: str | None = None
    display_name: str | None = None
    metadata: Any = None
    labels: dict[str, str] | None = None
    evaluation_item_type: OpenEvaluationItemType | None = None
    evaluation_request: EvaluationRequest | None = None
    evaluation_response: EvaluationResult | None = output_only()
    gcs_uri: str | None = None
    harbor_task: HarborTask | None = output_only()
    create_time: Timestamp | None = output_only()
    error: Status | None = output_only()

    @model_validator(mode="after")
    def _one_payload(self, info: ValidationInfo) -> EvaluationItem:
        if is_from_server(info):
            return self
        payloads = [
            field
            for field in ("evaluation_request", "evaluation_response", "gcs_uri")
            if getattr(self, field) is not None
        ]
        if len(payloads) > 1:
            raise ValueError(
                "an EvaluationItem carries one payload of evaluationRequest, "
                f"evaluationResponse or gcsUri; got {', '.join(payloads)}"
            )
        return self

    @property
    def id(self) -> str | None:
        """The last segment of the resource name."""
        return self.name.rsplit("/", 1)[-1] if self.name else None
