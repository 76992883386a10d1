"""A stored request's JSON scores as its model does: the emulator's run reads the store's JSON.

``metrics.evaluate_stored_request`` walks the camelCase JSON the store keeps; it must give the
same turns, and so the same results, as ``evaluate_request`` on the parsed model, for every
shape a response takes (agent data with turns out of order, several parts, thoughts, calls
in user events, events, text, value) and for the requests users have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from corpus_files import EVAL_SETS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from platform_eval import formats, metrics, traces
from platform_eval import types as t
from platform_eval.formats.convert import expected_agent_data
from platform_eval.metrics import _invocations

TRACES = Path(__file__).parents[1] / "data" / "traces"

#: Every computed metric that reads turns, with the options that change how.
SPECS = [
    metrics.resolve(t.EvaluationRunMetric.model_validate(m))
    for m in (
        {"metric": "tool_trajectory_avg_score"},
        *(
            {
                "metric": "tool_trajectory_avg_score",
                "metricConfig": {
                    "computationBasedMetricSpec": {"parameters": {"match_type": kind}}
                },
            }
            for kind in ("IN_ORDER", "ANY_ORDER")
        ),
        {"metric": "response_match_score"},
        {"metric": "exact_match"},
        {"metric": "rouge_l_sum"},
        {"metric": "bleu"},
        {"metric": "trajectory_exact_match"},
        {"metric": "trajectory_precision"},
        {"metric": "tool_name_match"},
        {"metric": "tool_parameter_kv_match"},
    )
]

_texts = st.one_of(st.none(), st.sampled_from(["", "book it", "done", "Paris\nLondon"]))
_calls = st.fixed_dictionaries(
    {"name": st.sampled_from(["search", "book", ""])},
    optional={"args": st.dictionaries(st.sampled_from("ab"), st.integers(0, 2), max_size=2)},
)


@st.composite
def _parts(draw: st.DrawFn) -> dict[str, Any]:
    part: dict[str, Any] = {}
    if draw(st.booleans()):
        part["functionCall"] = draw(_calls)
    elif (text := draw(_texts)) is not None:
        part["text"] = text
    if "text" in part and draw(st.booleans()):
        part["thought"] = draw(st.booleans())
    return part


_contents = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "model"]),
        "parts": st.lists(_parts(), max_size=3),
    },
)
_events = st.fixed_dictionaries(
    {},
    optional={"author": st.sampled_from(["user", "agent", "helper"]), "content": _contents},
)
_turns = st.lists(
    st.fixed_dictionaries(
        {"events": st.lists(_events, max_size=5)},
        optional={"turnIndex": st.integers(0, 3)},
    ),
    max_size=4,
)
_responses = st.one_of(
    st.fixed_dictionaries({"agentData": st.fixed_dictionaries({"turns": _turns})}),
    st.fixed_dictionaries(
        {"events": st.lists(_contents, min_size=1, max_size=4)},
        optional={"text": st.sampled_from(["", "final"])},
    ),
    st.fixed_dictionaries({"text": st.sampled_from(["", "done", "book it"])}),
    st.fixed_dictionaries({"value": st.dictionaries(st.sampled_from("xy"), st.integers(0, 3))}),
)


def _agree(stored: dict[str, Any]) -> None:
    """Both walks give the same turns, and every metric the same results."""
    request = t.EvaluationRequest.from_wire(stored)
    wire = request.to_wire()
    golden = request.golden_response
    assert golden is not None
    assert _invocations.stored_response_invocations(wire["goldenResponse"]) == (
        _invocations.response_invocations(golden)
    )
    for model, json in zip(
        request.candidate_responses or [], wire["candidateResponses"], strict=True
    ):
        assert _invocations.stored_response_invocations(json) == (
            _invocations.response_invocations(model)
        )
    assert _invocations.stored_context_turn_count(wire) == _invocations.context_turn_count(request)
    assert metrics.evaluate_stored_request(SPECS, wire) == metrics.evaluate_request(SPECS, request)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    golden=_responses,
    candidate=_responses,
    context=st.one_of(st.none(), st.fixed_dictionaries({"turns": _turns})),
)
def test_every_response_shape_reads_the_same(
    golden: dict[str, Any], candidate: dict[str, Any], context: dict[str, Any] | None
) -> None:
    prompt: dict[str, Any] = {"text": "q"} if context is None else {"agentData": context}
    _agree(
        {
            "prompt": prompt,
            "goldenResponse": golden,
            "candidateResponses": [{"candidate": "a", **candidate}],
        }
    )


def test_the_shipped_traces_score_the_same() -> None:
    """Recorded traces of three frameworks, each against itself and against the next."""
    conversations = traces.load_traces(sorted(TRACES.iterdir()))
    assert len(conversations) >= 3
    for one, other in zip(conversations, conversations[1:] + conversations[:1], strict=True):
        _agree(
            {
                "prompt": {"text": "q"},
                "goldenResponse": {"agentData": one.agent_data.to_wire()},
                "candidateResponses": [
                    {"candidate": "same", "agentData": one.agent_data.to_wire()},
                    {"candidate": "other", "agentData": other.agent_data.to_wire()},
                ],
            }
        )


@pytest.mark.corpus
@pytest.mark.parametrize("name", EVAL_SETS)
def test_the_corpus_eval_sets_score_the_same(name: str) -> None:
    cases = formats.load_eval_set(CORPUS / name).eval_cases
    for case, other in zip(cases, cases[1:] + cases[:1], strict=True):
        _agree(
            {
                "prompt": {"text": "q"},
                "goldenResponse": {"agentData": expected_agent_data(case, "agent").to_wire()},
                "candidateResponses": [
                    {"candidate": "a", "agentData": expected_agent_data(other, "agent").to_wire()}
                ],
            }
        )


def test_a_metric_that_reads_the_model_gets_it() -> None:
    """final_session_state_match reads the candidate's model: it is built from the JSON then,
    and scores as the model's path does."""
    spec = metrics.resolve(t.EvaluationRunMetric(metric="final_session_state_match"))
    stored = {
        "prompt": {"text": "q"},
        "candidateResponses": [
            {
                "candidate": "a",
                "agentData": {
                    "turns": [{"turnIndex": 0, "events": [{"author": "agent"}]}],
                    "agents": {"agent": {"name": "agent"}},
                },
            }
        ],
    }
    metadata = {"finalSessionState": {"booked": True}, "sessionInput": {"state": {}}}
    request = t.EvaluationRequest.from_wire(stored)
    ours = metrics.evaluate_stored_request([spec], stored, metadata=metadata)
    assert ours == metrics.evaluate_request([spec], request, metadata=metadata)
    assert ours[0].candidate == "a"
    turns = _invocations.RequestTurns(stored=stored)
    subject = _invocations.Subject(turns, stored["candidateResponses"][0])
    assert subject.candidate == request.candidate_responses[0]  # type: ignore[index]
    assert turns.request == request
