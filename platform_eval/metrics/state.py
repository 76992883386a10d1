"""``final_session_state_match`` (beyond ADK, whose EvalCase has ``final_session_state`` and
no metric reading it): the case's golden final state against the candidate's.

The candidate's final state is the state its recording holds (an ADK session's ``state``, kept
in the item's metadata by candidate: an empty one is empty), else the case's initial state
(``session_input.state``, kept in the item's metadata) with the state deltas of its events
applied in order, as ADK's session service applies them (``temp:`` keys are not kept). The
score is the share of the golden state's leaf values the candidate matched, each compared by
its ``keys_match`` rule (the argument rules, on dotted paths); ignored leaves are left out. The
explanation lists the keys that differ.
"""

from __future__ import annotations

from typing import Any

from ..types import (
    CANDIDATE_STATE_KEY,
    FINAL_SESSION_STATE_KEY,
    SESSION_INPUT_KEY,
    CandidateResult,
)
from ._invocations import Subject
from ._spec import MetricSpec, NotApplicableError, NotEvaluatedError
from .arguments import ValueRules, parse_rules


def recorded_state(subject: Subject) -> dict[str, Any] | None:
    """The candidate's final state as its recording holds it, or None."""
    by_candidate = subject.metadata.get(CANDIDATE_STATE_KEY)
    if not isinstance(by_candidate, dict):
        return None
    state = by_candidate.get(subject.candidate.candidate or "")
    return dict(state) if isinstance(state, dict) else None


def final_state(subject: Subject) -> dict[str, Any]:
    """The candidate's final state: as recorded, else the case's initial state, then its
    events' deltas."""
    recorded = recorded_state(subject)
    if recorded is not None:
        return recorded
    given = subject.metadata.get(SESSION_INPUT_KEY)
    state: dict[str, Any] = dict(given.get("state") or {}) if isinstance(given, dict) else {}
    data = subject.candidate.agent_data
    for turn in (data.turns if data else None) or []:
        for event in turn.events or []:
            for key, value in (event.state_delta or {}).items():
                if key.startswith("temp:"):
                    continue
                state[key] = value
    return state


def _records_state(subject: Subject) -> bool:
    data = subject.candidate.agent_data
    return any(
        event.state_delta
        for turn in (data.turns if data else None) or []
        for event in turn.events or []
    )


def parse_keys_match(raw: Any) -> ValueRules:
    """``keys_match`` as rules (MetricError naming a bad one); extra keys never count."""
    return ValueRules(parse_rules(raw, "keys_match") if raw is not None else {}, extra="ignore")


def final_session_state_match(spec: MetricSpec, subject: Subject) -> CandidateResult:
    golden = subject.metadata.get(FINAL_SESSION_STATE_KEY)
    if not isinstance(golden, dict) or not golden:
        raise NotApplicableError(
            "the eval case has no final_session_state: nothing to compare the final state with"
        )
    if subject.candidate.agent_data is None:
        raise NotEvaluatedError("the final state is read from a candidate's AgentData events")
    rules = spec.rules if isinstance(spec.rules, ValueRules) else parse_keys_match(None)
    actual = final_state(subject)
    leaves = rules.leaves(golden)
    if not leaves:
        raise NotEvaluatedError("every key of the final_session_state is ignored by keys_match")
    differ = [m for m in (rules.matches_at(actual, golden, leaf) for leaf in leaves) if m]
    if differ and recorded_state(subject) is None and not _records_state(subject):
        # No event says how the state changed: an agent that changed none, or a recording
        # that does not keep state (OpenTelemetry spans never do). A score would be a guess.
        raise NotEvaluatedError(
            f"{len(differ)} of {len(leaves)} state values differ from the initial state, and no "
            "event of the candidate records a state change: OpenTelemetry traces do not carry "
            "session state (score saved sessions, --save-sessions, for this metric)"
        )
    score = (len(leaves) - len(differ)) / len(leaves)
    explanation = f"{len(leaves) - len(differ)} of {len(leaves)} state values match"
    if differ:
        shown = "; ".join(str(m) for m in differ[:5])
        more = f" (and {len(differ) - 5} more)" if len(differ) > 5 else ""
        explanation += f"; differ: {shown}{more}"
    return CandidateResult(
        candidate=subject.candidate.candidate,
        metric=spec.name,
        score=score,
        explanation=explanation,
    )
