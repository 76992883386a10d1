"""The GenAI Eval SDK's flat table form (CSV, JSON Lines, a pandas DataFrame with prompt,
response, reference, ... columns) read as the official SDK's flatten converter reads it, and
graded as it is when it holds responses."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from platform_eval import jobs
from platform_eval.cli import main
from platform_eval.emulator import Emulator
from platform_eval.formats.dataset import EvaluationDataset
from platform_eval.formats.load import load, table_dataset
from platform_eval.results import fetch_results

CSV = """\
prompt,response,reference,instruction,topic
What is the capital of France?,Paris is the capital.,Paris is the capital.,Be brief.,geo
How many legs has a spider?,Six.,A spider has eight legs.,,zoo
"""

ROWS: list[dict[str, Any]] = [
    {
        "prompt": "What is the capital of France?",
        "response": "Paris is the capital.",
        "reference": "Paris is the capital.",
        "instruction": "Be brief.",
    },
    {
        "prompt": "How many legs has a spider?",
        "response": "Six.",
        "reference": "A spider has eight legs.",
    },
]


def _texts(case: Any) -> tuple[str, str, str]:
    return (
        case.prompt.parts[0].text,
        case.responses[0].response.parts[0].text,
        case.reference.response.parts[0].text,
    )


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_rows_read_as_the_official_sdks_flatten_converter_reads_them(tmp_path: Path) -> None:
    converters = pytest.importorskip("vertexai._genai._evals_data_converters")
    theirs = converters._FlattenEvalDataConverter().convert([dict(r) for r in ROWS])
    path = tmp_path / "flat.csv"
    path.write_text(CSV)
    ours = EvaluationDataset.model_validate(load(path).data)
    assert [_texts(c) for c in ours.eval_cases] == [_texts(c) for c in theirs.eval_cases]
    assert [c.eval_case_id for c in ours.eval_cases] == [c.eval_case_id for c in theirs.eval_cases]
    first = ours.eval_cases[0]
    assert first.system_instruction is not None
    assert (
        first.system_instruction.parts[0].text
        == theirs.eval_cases[0].system_instruction.parts[0].text
    )


def test_a_csv_with_responses_is_graded_as_it_is_and_an_extra_column_is_reported(
    work: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    Path("flat.csv").write_text(CSV)
    with caplog.at_level(logging.WARNING, logger="platform_eval"):
        code = main(["-q", "run", "flat.csv", "--metrics", "exact_match", "--format", "json"])
    rows = {r["evalCaseId"]: r["score"] for r in json.loads(capsys.readouterr().out)["rows"]}
    assert code == 0
    assert rows == {"eval_case_0": 1.0, "eval_case_1": 0.0}
    assert "eval case eval_case_0: not carried: column 'topic'" in caplog.text


def test_json_lines_of_whole_cases_are_a_dataset(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        {
            "eval_case_id": "capital",
            "prompt": {"role": "user", "parts": [{"text": "Capital of France?"}]},
            "reference": {"response": {"role": "model", "parts": [{"text": "Paris."}]}},
            "responses": [{"response": {"role": "model", "parts": [{"text": "Paris."}]}}],
        }
    ]
    Path("cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    assert main(["-q", "validate", "cases.jsonl"]) == 0
    code = main(["-q", "run", "cases.jsonl", "--metrics", "exact_match", "--format", "json"])
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert (code, row["evalCaseId"], row["score"]) == (0, "capital", 1.0)


def test_a_bad_json_cell_names_the_row_and_column(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("flat.csv").write_text('prompt,agent_data\nhi,"{not json"\n')
    assert main(["-q", "validate", "flat.csv"]) == 2
    said = "".join(capsys.readouterr())
    assert "flat.csv: $[0].agent_data: expected JSON in the cell" in said


def test_a_dataframe_is_an_eval_set_for_jobs_evaluate(emulator: Emulator, project: str) -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(ROWS)  # the second row's missing instruction is NaN
    assert len(table_dataset(frame).data["eval_cases"]) == 2
    with emulator.client(project) as client:
        evaluation = jobs.evaluate(client, frame, metrics=["exact_match"], poll_interval=0.02)
        results = fetch_results(client, evaluation.run, items=evaluation.results)
    scores = {r.eval_case_id: r.score for r in results.rows}
    assert scores == {"eval_case_0": 1.0, "eval_case_1": 0.0}


def test_a_whole_case_in_camel_case_is_read_whole(work: Path) -> None:
    case = {
        "evalCaseId": "capital",
        "prompt": {"role": "user", "parts": [{"text": "Capital of France?"}]},
        "responses": [{"response": {"role": "model", "parts": [{"text": "Paris."}]}}],
    }
    Path("cases.jsonl").write_text(json.dumps(case) + "\n")
    (read,) = EvaluationDataset.model_validate(load("cases.jsonl").data).eval_cases
    assert read.eval_case_id == "capital" and read.graded
