"""Conversion and migration details, on corpus files and small hand-written cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS

from platform_eval import formats
from platform_eval.formats import adk

HOME = (
    CORPUS
    / "adk/google__adk-python__tests__integration__fixture__home_automation_agent__test_files__simple_multi_turn_conversation.test.json"
)
HELM = CORPUS / "agentevals/samples_eval_set_helm.json"
RUBRICS = (
    CORPUS
    / "adk/google__adk-samples__core__python__long-horizon-harness__tests__eval__evalsets__output_style.evalset.json"
)
SCENARIO = (
    CORPUS
    / "adk/google__adk-python__tests__integration__fixture__conversation_scenario__conversation_scenario.test.json"
)
LEGACY = (
    CORPUS
    / "adk/google__adk-samples__python__agents__data-science__eval__eval_data__simple.test.json"
)


def _case(**fields: object) -> adk.EvalCase:
    return adk.EvalCase.model_validate({"eval_id": "c1", **fields})


@pytest.mark.corpus
def test_single_turn_case_becomes_prompt_text_and_golden_agent_data() -> None:
    items, report = formats.eval_set_to_items(formats.load_eval_set(HELM))
    request = items[0].evaluation_request
    assert request.prompt.text == "list all Helm releases"  # type: ignore[union-attr]
    events = request.golden_response.agent_data.turns[0].events  # type: ignore[union-attr]
    assert next(e.author for e in events) == "user"
    assert events[1].content.parts[0].function_call.name == "helm_list_releases"  # type: ignore[union-attr,index]
    assert events[2].content.parts[0].function_response.name == "helm_list_releases"  # type: ignore[union-attr,index]
    assert events[-1].content.parts[0].text.startswith("There are two Helm releases")  # type: ignore[union-attr,index]
    assert items[0].labels == {"eval-set-id": "helm_eval_set", "eval-case-id": "helm_list_releases"}
    assert items[0].display_name == "helm_list_releases"
    assert report.not_carried == {}


@pytest.mark.corpus
def test_multi_turn_case_keeps_prior_turns_as_context_ending_with_the_user_message() -> None:
    items, _ = formats.eval_set_to_items(formats.load_eval_set(HOME))
    request = items[0].evaluation_request
    context = request.prompt.agent_data.turns  # type: ignore[union-attr]
    golden = request.golden_response.agent_data.turns  # type: ignore[union-attr]
    assert len(golden) == 2 and len(context) == 2
    assert [e.author for e in context[-1].events] == ["user"]  # type: ignore[union-attr]
    assert context[0].events == golden[0].events
    assert [t.turn_index for t in golden] == [0, 1]


@pytest.mark.corpus
def test_rubrics_are_mapped_to_rubric_groups() -> None:
    items, _ = formats.eval_set_to_items(formats.load_eval_set(RUBRICS))
    raw = json.loads(RUBRICS.read_text())
    first_case = raw["eval_cases"][0]
    invocation_rubrics = first_case["conversation"][0].get("rubrics") or []
    group = items[0].evaluation_request.rubrics["invocation_0"]  # type: ignore[union-attr,index]
    assert [r.rubric_id for r in group.rubrics] == [r["rubric_id"] for r in invocation_rubrics]  # type: ignore[union-attr]
    assert group.rubrics[0].description == invocation_rubrics[0]["rubric_content"]["text_property"]  # type: ignore[index]


@pytest.mark.corpus
def test_conversation_scenario_becomes_user_scenario() -> None:
    items, report = formats.eval_set_to_items(formats.load_eval_set(SCENARIO))
    scenario = items[0].evaluation_request.prompt.user_scenario  # type: ignore[union-attr]
    assert scenario.starting_prompt == "Hello"  # type: ignore[union-attr]
    assert "conversation_scenario as prompt.userScenario" in report.cases[0].carried


def test_what_cannot_be_carried_is_reported_and_kept_in_metadata() -> None:
    case = _case(
        conversation=[{"user_content": {"parts": [{"text": "hi"}]}}],
        session_input={"app_name": "app", "user_id": "u", "state": {"tier": "gold"}},
        final_session_state={"done": True},
        rubrics=[
            {"rubric_id": "r", "rubric_content": {"text_property": "x"}, "description": "why"}
        ],
        custom_field=1,
    )
    item, report = formats.case_to_item(case, "Set With Spaces & CAPS")
    assert item.labels == {"eval-set-id": "set-with-spaces---caps", "eval-case-id": "c1"}
    assert item.metadata["sessionInput"]["state"] == {"tier": "gold"}
    assert item.metadata["finalSessionState"] == {"done": True}
    assert item.metadata["evalSetId"] == "Set With Spaces & CAPS"
    joined = " | ".join(report.not_carried)
    for needle in ("session_input.state", "final_session_state", "description", "custom_field"):
        assert needle in joined


@pytest.mark.corpus
def test_legacy_rows_become_one_case_of_many_turns() -> None:
    eval_set = formats.load_eval_set(LEGACY)
    assert len(eval_set.eval_cases) == 1
    conversation = eval_set.eval_cases[0].conversation or []
    assert [i.user_content.parts[0].text for i in conversation] == [  # type: ignore[index]
        "what data do you have?",
        "what countries are in test?",
    ]
    assert conversation[1].tool_calls()[0].name == "call_db_agent"


@pytest.mark.corpus
def test_migration_keeps_trajectory_reference_and_ids(tmp_path: Path) -> None:
    report = formats.migrate_file(HOME, tmp_path)
    written = json.loads(Path(report.destination).read_text())  # type: ignore[arg-type]
    assert Path(report.destination).name.endswith("-dataset.json")  # type: ignore[arg-type]
    case = written["eval_cases"][0]
    turns = case["agent_data"]["turns"]
    assert all("turn_index" in t and "turn_id" in t for t in turns)
    assert (
        turns[-1]["events"]
        == [
            {
                "author": "user",
                "content": {
                    "parts": [{"text": "Turn off device_11 in the Bedroom."}],
                    "role": "user",
                },
            }
        ]
        or turns[-1]["events"][-1]["author"] == "user"
    )
    reference_parts = case["reference"]["response"]["parts"]
    assert reference_parts[0]["function_call"]["name"] == "set_device_info"
    assert "text" in reference_parts[-1]
    assert "prompt" not in case


@pytest.mark.corpus
def test_migration_output_is_a_valid_vertex_dataset(tmp_path: Path) -> None:
    vertex_types = pytest.importorskip("vertexai._genai.types")
    for source in (HOME, HELM, RUBRICS, SCENARIO, LEGACY):
        report = formats.migrate_file(source, tmp_path)
        vertex_types.EvaluationDataset.model_validate_json(Path(report.destination).read_text())  # type: ignore[arg-type]
        assert formats.validate(report.destination) == []  # type: ignore[arg-type]


@pytest.mark.corpus
def test_existing_destinations_are_skipped_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "mine-dataset.json"
    target.write_text('{"eval_cases": []}')
    skipped = formats.migrate_file(HELM, target)
    assert skipped.skipped and target.read_text() == '{"eval_cases": []}'
    assert "skipped" in skipped.summary()
    replaced = formats.migrate_file(HELM, target, overwrite=True)
    assert not replaced.skipped and "helm_list_releases" in target.read_text()


@pytest.mark.corpus
def test_directory_migration(tmp_path: Path) -> None:
    source = tmp_path / "evalsets"
    source.mkdir()
    (source / "helm.evalset.json").write_text(HELM.read_text())
    (source / "legacy.test.json").write_text(LEGACY.read_text())
    reports = formats.migrate_directory(source, tmp_path / "datasets")
    assert sorted(Path(r.destination).name for r in reports) == [
        "helm-dataset.json",
        "legacy-dataset.json",
    ]  # type: ignore[arg-type]


@pytest.mark.corpus
def test_round_trip_eval_set_dataset_eval_set_keeps_turns_and_calls(tmp_path: Path) -> None:
    for source in (HOME, HELM, LEGACY):
        original = formats.load_eval_set(source)
        forward = formats.migrate_file(source, tmp_path, overwrite=True)
        back = formats.unmigrate_file(forward.destination, tmp_path / "back", overwrite=True)  # type: ignore[arg-type]
        again = formats.load_eval_set(back.destination)  # type: ignore[arg-type]
        assert len(again.eval_cases) == len(original.eval_cases)
        for before, after in zip(original.eval_cases, again.eval_cases, strict=True):
            assert before.eval_id == after.eval_id
            assert len(after.conversation or []) == len(before.conversation or [])
            calls_before = [c.name for i in before.conversation or [] for c in i.tool_calls()]
            calls_after = [c.name for i in after.conversation or [] for c in i.tool_calls()]
            assert calls_after == calls_before


def test_dataset_rule_prompt_xor_agent_data(tmp_path: Path) -> None:
    path = tmp_path / "bad-dataset.json"
    path.write_text(
        json.dumps(
            {
                "eval_cases": [
                    {
                        "eval_case_id": "a",
                        "prompt": {"role": "user", "parts": [{"text": "x"}]},
                        "agent_data": {
                            "turns": [{"turn_index": 0, "events": [{"author": "user"}]}]
                        },
                    },
                    {"eval_case_id": "b"},
                    {
                        "eval_case_id": "c",
                        "agent_data": {
                            "turns": [
                                {
                                    "turn_index": 0,
                                    "events": [
                                        {"author": "bot", "content": {"parts": [{"text": "hi"}]}}
                                    ],
                                }
                            ]
                        },
                    },
                    {"eval_case_id": "d", "promt": {}},
                ]
            }
        )
    )
    problems = [str(p) for p in formats.validate(path)]
    assert any("eval_cases[0]" in p and "never both" in p for p in problems)
    assert any("eval_cases[1]" in p and "needs a prompt" in p for p in problems)
    assert any("eval_cases[2]" in p and "last event" in p for p in problems)
    assert any("eval_cases[3].promt" in p for p in problems)


def test_unreadable_files_name_file_and_position(tmp_path: Path) -> None:
    broken = tmp_path / "broken.evalset.json"
    broken.write_text('{"eval_set_id": "x",\n "eval_cases": [}')
    with pytest.raises(formats.FormatError) as caught:
        formats.load_eval_set(broken)
    assert str(broken) in str(caught.value) and "line 2" in str(caught.value)
    with pytest.raises(formats.FormatError, match="no such file"):
        formats.load(tmp_path / "missing.json")
    unknown = tmp_path / "what.json"
    unknown.write_text('{"hello": 1}')
    with pytest.raises(formats.FormatError, match="not a file kind"):
        formats.load(unknown)


def test_a_reference_holds_the_final_answer_not_the_texts_said_on_the_way(tmp_path: Path) -> None:
    """A last turn whose agents spoke before the answer (a sub-agent to its parent): the
    dataset's reference holds the tool calls and the final answer; the rest is reported."""
    case = {
        "eval_id": "relay",
        "conversation": [
            {
                "invocation_id": "t0",
                "user_content": {"role": "user", "parts": [{"text": "Weather and a table?"}]},
                "final_response": {"role": "model", "parts": [{"text": "Sunny; booked."}]},
                "intermediate_data": {
                    "invocation_events": [
                        {
                            "author": "weather",
                            "content": {"role": "model", "parts": [{"text": "Sunny."}]},
                        },
                        {
                            "author": "host",
                            "content": {
                                "role": "model",
                                "parts": [{"function_call": {"name": "book", "args": {}}}],
                            },
                        },
                    ]
                },
            }
        ],
    }
    source = tmp_path / "relay.evalset.json"
    source.write_text(json.dumps({"eval_set_id": "relay", "eval_cases": [case]}))
    report = formats.migrate_file(source, tmp_path)
    dataset = json.loads(Path(report.destination).read_text())
    parts = dataset["eval_cases"][0]["reference"]["response"]["parts"]
    assert [p.get("text") or p["function_call"]["name"] for p in parts] == [
        "book",
        "Sunny; booked.",
    ]
    assert any("1 intermediate agent texts" in n for n in report.cases[0].not_carried)
