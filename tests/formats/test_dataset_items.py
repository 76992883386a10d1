"""EvaluationDataset files are read in their own shape, straight into the items the service
stores: nothing a file carries is dropped on the way through ADK's eval case.

Both ways, field by field: every ADK eval set (ours and the corpus's) migrated to a dataset
makes the items the eval set makes, apart from what a dataset cannot say; and a dataset's own
rubric group keys, system instruction and agents reach the stored request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from corpus_files import EVAL_SETS, KINDS
from paths import SAMPLE_AGENTS, SAMPLE_DATA

from platform_eval import Client, jobs
from platform_eval.formats import Kind, adk
from platform_eval.formats.convert import case_to_item
from platform_eval.formats.dataset import EvaluationDataset
from platform_eval.formats.dataset_items import DatasetCases, dataset_case_to_item
from platform_eval.formats.load import load, load_eval_set
from platform_eval.formats.migrate import eval_set_to_dataset
from platform_eval.formats.stream import cases_from
from platform_eval.types import EvaluationItem

OWN_EVAL_SETS = sorted(SAMPLE_AGENTS.glob("*.evalset.json")) + sorted(
    SAMPLE_DATA.glob("*.evalset.json")
)


def _comparable(item: EvaluationItem, single_turn: bool = False) -> dict[str, Any]:
    """An item's wire JSON without what a dataset cannot say of a case: its rubric groups'
    titles (a dataset's groups have none), a single turn's id (a ``prompt`` has none), and
    what ADK's case keeps in metadata only."""
    wire = item.to_wire()
    if single_turn:
        for turn in wire["evaluationRequest"]["goldenResponse"]["agentData"]["turns"]:
            turn.pop("turnId")
    for group in (wire.get("evaluationRequest", {}).get("rubrics") or {}).values():
        group.pop("displayName", None)
    wire["metadata"] = {k: v for k, v in wire["metadata"].items() if k in ("evalCaseId",)}
    return wire


def _migrated_items_equal(path: Path) -> int:
    """How many cases of the eval set at ``path`` made equal items both ways."""
    eval_set = load_eval_set(path)
    dataset, reports = eval_set_to_dataset(eval_set)
    compared = 0
    for case, dataset_case, report in zip(
        eval_set.eval_cases, dataset.eval_cases, reports, strict=True
    ):
        said_less = ("intermediate agent texts", "tool responses", "session_input")
        if any(phrase in what for what in report.not_carried for phrase in said_less):
            continue  # the dataset says less than the case, and says so
        expected, _ = case_to_item(case, eval_set.eval_set_id)
        made, _ = dataset_case_to_item(dataset_case, eval_set.eval_set_id)
        single = dataset_case.prompt is not None
        assert _comparable(made, single) == _comparable(expected, single), (
            path.name,
            case.eval_id,
        )
        compared += 1
    return compared


@pytest.mark.parametrize("path", OWN_EVAL_SETS, ids=lambda p: p.name)
def test_our_eval_sets_migrated_to_datasets_make_the_same_items(path: Path) -> None:
    assert _migrated_items_equal(path) > 0


@pytest.mark.corpus
@pytest.mark.parametrize("name", EVAL_SETS)
def test_the_corpus_eval_sets_migrated_to_datasets_make_the_same_items(name: str) -> None:
    _migrated_items_equal(CORPUS / name)


def _dataset(**case: Any) -> dict[str, Any]:
    return {
        "eval_cases": [
            {
                "eval_case_id": "capital",
                "prompt": {"role": "user", "parts": [{"text": "What is the capital of France?"}]},
                **case,
            }
        ]
    }


QUALITY = {
    "quality": {
        "rubrics": [
            {
                "rubric_id": "names_paris",
                "type": "TEXT_CONTAINS",
                "content": {"property": {"description": "Paris"}},
            }
        ]
    }
}


def test_a_datasets_rubric_groups_system_instruction_and_agents_reach_the_request(
    tmp_path: Path,
) -> None:
    path = tmp_path / "capital-dataset.json"
    agents = {"agents": {"geo": {"agent_id": "geo", "description": "Knows capitals."}}}
    path.write_text(
        json.dumps(
            _dataset(
                rubric_groups=QUALITY,
                system_instruction={"parts": [{"text": "Answer in one sentence."}]},
                agent_info={**agents, "root_agent_id": "geo"},
            )
        )
    )
    cases = cases_from(load(path))
    assert isinstance(cases, DatasetCases)
    item, report = dataset_case_to_item(cases.file_case(0), cases.eval_set_id)
    request = item.to_wire()["evaluationRequest"]
    assert list(request["rubrics"]) == ["quality"]
    assert request["rubrics"]["quality"]["rubrics"][0]["rubricId"] == "names_paris"
    assert request["prompt"]["agentData"]["agents"]["geo"] == {
        "agentId": "geo",
        "description": "Knows capitals.",
        "instruction": "Answer in one sentence.",
    }
    user = request["prompt"]["agentData"]["turns"][0]["events"][0]
    assert user["content"]["parts"] == [{"text": "What is the capital of France?"}]
    assert report.not_carried == []
    # An agent run on the case is given ADK's case, made where it is needed.
    assert cases.case(0).eval_id == "capital"


def test_what_a_request_cannot_hold_is_reported(tmp_path: Path) -> None:
    dataset = EvaluationDataset.model_validate(
        _dataset(
            conversation_history=[{"role": "user", "parts": [{"text": "earlier"}]}],
            agent_info={"name": "geo", "deployment": "us"},
        )
    )
    _, report = dataset_case_to_item(dataset.eval_cases[0], "capital")
    said = " | ".join(report.not_carried)
    assert "conversation_history" in said and "agent_info fields ['deployment']" in said


def _graded(rubric_groups: dict[str, Any]) -> dict[str, Any]:
    answer = {"response": {"role": "model", "parts": [{"text": "It is Paris."}]}}
    return _dataset(rubric_groups=rubric_groups, responses=[answer])


GROUP_METRIC = {
    "metric": "general_quality_v1",
    "rubricBasedMetricSpec": {"rubricGroupKey": "quality"},
}


def test_a_metric_naming_a_datasets_rubric_group_scores_it_as_the_same_eval_set_case(
    sync_client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "capital-dataset.json"
    path.write_text(json.dumps(_graded(QUALITY)))
    evaluation = jobs.evaluate(sync_client, path, metrics=[GROUP_METRIC])
    (result,) = [r for r in evaluation.results if r.evaluation_response]
    metric = result.to_wire()["evaluationResponse"]["candidateResults"][0]
    assert metric["score"] == 1.0, metric
    assert metric["rubricVerdicts"][0]["evaluatedRubric"]["rubricId"] == "names_paris"

    # The same case written as an ADK eval set (its rubrics are the group ``eval_case``),
    # graded on the same answer, read from the dataset as a recording.
    eval_set = {
        "eval_set_id": "capital",
        "eval_cases": [
            {
                "eval_id": "capital",
                "rubrics": [
                    {
                        "rubric_id": "names_paris",
                        "type": "TEXT_CONTAINS",
                        "rubric_content": {"text_property": "Paris"},
                    }
                ],
                "conversation": [
                    {
                        "invocation_id": "turn-0",
                        "user_content": {
                            "role": "user",
                            "parts": [{"text": "What is the capital of France?"}],
                        },
                    }
                ],
            }
        ],
    }
    adk_path = tmp_path / "capital.evalset.json"
    adk_path.write_text(json.dumps(eval_set))
    by_adk_key = {**GROUP_METRIC, "rubricBasedMetricSpec": {"rubricGroupKey": "eval_case"}}
    again = jobs.evaluate(sync_client, adk_path, traces=[path], metrics=[by_adk_key])
    (other,) = [r for r in again.results if r.evaluation_response]
    same = other.to_wire()["evaluationResponse"]["candidateResults"][0]
    assert (same["score"], same["rubricVerdicts"]) == (metric["score"], metric["rubricVerdicts"])


def test_a_continued_conversation_keeps_the_files_turns_and_asks_the_last_message() -> None:
    turn0 = {
        "turn_index": 0,
        "events": [
            {"author": "user", "content": {"role": "user", "parts": [{"text": "Hi"}]}},
            {"author": "helper", "content": {"role": "model", "parts": [{"text": "Hello!"}]}},
        ],
    }
    turn1 = {
        "turn_index": 1,
        "events": [{"author": "user", "content": {"role": "user", "parts": [{"text": "Bye"}]}}],
    }
    reference = {"response": {"role": "model", "parts": [{"text": "Goodbye."}]}}
    dataset = EvaluationDataset.model_validate(
        {
            "eval_cases": [
                {
                    "eval_case_id": "chat",
                    "agent_data": {"turns": [turn0, turn1]},
                    "reference": reference,
                }
            ]
        }
    )
    item, _ = dataset_case_to_item(dataset.eval_cases[0], "chat")
    request = item.to_wire()["evaluationRequest"]
    prompt_turns = request["prompt"]["agentData"]["turns"]
    # The sub-agent that answered turn 0 stays its author (ADK's case made it "the agent").
    assert prompt_turns[0]["events"][1]["author"] == "helper"
    assert [e["author"] for e in prompt_turns[1]["events"]] == ["user"]
    golden = request["goldenResponse"]["agentData"]["turns"]
    assert golden[1]["events"][-1] == {
        "author": "helper",
        "content": {"role": "model", "parts": [{"text": "Goodbye."}]},
    }


@pytest.mark.corpus
@pytest.mark.parametrize("name", [n for n, kind in sorted(KINDS.items()) if kind == Kind.DATASET])
def test_the_corpus_datasets_read_in_their_own_shape_ask_what_adks_case_asked(name: str) -> None:
    loaded = load(CORPUS / name)
    cases = cases_from(loaded)
    eval_set = load_eval_set(CORPUS / name)
    assert isinstance(eval_set, adk.EvalSet) and len(cases) == len(eval_set.eval_cases)
    for index, case in enumerate(eval_set.eval_cases):
        made, _ = dataset_case_to_item(cases.file_case(index), cases.eval_set_id)
        expected, _ = case_to_item(case, cases.eval_set_id)
        assert _comparable(made) == _comparable(expected)
