"""The GenAI Eval SDK's flat table form of an EvaluationDataset: one row a case, as a CSV file,
a JSON Lines file, or a pandas DataFrame, read as the official SDK's flatten converter reads
them.

Columns: ``prompt`` (or ``source``), ``response``, ``reference``, ``instruction`` (the system
instruction), ``conversation_history`` (or ``history``), ``rubric_groups``,
``intermediate_events``, ``agent_data``, ``eval_case_id``; text, or JSON in the cell. A row's
other columns are kept by the SDK for custom metric templates; here they are reported, per
case, as not carried. A row of a JSON Lines file may also be a dataset case as it is (``prompt``
as a Content, ``responses``, ...).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._problems import FormatError, Problem
from .dataset import DatasetCase

#: Columns the flat form has, under every name the SDK takes, -> the dataset case's field.
_COLUMNS = {
    "prompt": "prompt",
    "source": "prompt",
    "response": "responses",
    "reference": "reference",
    "instruction": "system_instruction",
    "system_instruction": "system_instruction",
    "conversation_history": "conversation_history",
    "history": "conversation_history",
    "rubric_groups": "rubric_groups",
    "intermediate_events": "intermediate_events",
    "agent_data": "agent_data",
    "eval_case_id": "eval_case_id",
}
#: A case's own fields, as a JSON Lines row of whole cases writes them (either spelling).
_CASE_FIELDS = frozenset(
    spelling
    for name, field in DatasetCase.model_fields.items()
    for spelling in (name, field.alias or name)
)
#: Cells holding JSON, not text.
_JSON_CELLS = ("conversation_history", "rubric_groups", "intermediate_events", "agent_data")


def looks_like_rows(data: Any) -> bool:
    """A list of case rows (a flat table, or JSON Lines of cases)."""
    if not isinstance(data, list) or not data:
        return False
    first = next((row for row in data if isinstance(row, dict)), None)
    return first is not None and bool(
        set(first) & {"prompt", "source", "response", "responses", "agent_data", "user_scenario"}
    )


def read_csv(text: str, file: str) -> list[dict[str, Any]]:
    """The rows of a CSV file, an empty cell as no value."""
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        return [{k: v for k, v in row.items() if k and v not in (None, "")} for row in reader]
    except csv.Error as exc:
        raise FormatError([Problem(file, "$", f"invalid CSV: {exc}")]) from None


def dataset_from_rows(
    rows: Iterable[Mapping[str, Any]], file: str
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The EvaluationDataset JSON (``{"eval_cases": [...]}``) of a flat table's rows, and the
    columns no case field holds (eval case id -> what was not carried)."""
    cases: list[dict[str, Any]] = []
    not_carried: dict[str, list[str]] = {}
    problems: list[Problem] = []
    for index, row in enumerate(rows):
        where = f"$[{index}]"
        if not isinstance(row, Mapping):
            problems.append(Problem(file, where, "expected a row of columns (an object)"))
            continue
        case, extra = _case(dict(row), index, file, where, problems)
        cases.append(case)
        if extra:
            not_carried[str(case.get("eval_case_id") or case.get("evalCaseId"))] = extra
    if problems:
        raise FormatError(problems)
    return {"eval_cases": cases}, not_carried


def _case(
    row: dict[str, Any], index: int, file: str, where: str, problems: list[Problem]
) -> tuple[dict[str, Any], list[str]]:
    whole = not _is_flat(row)
    case: dict[str, Any] = {}
    extra: list[str] = []
    for column, value in row.items():
        field = column if whole and column in _CASE_FIELDS else _COLUMNS.get(column)
        if field is None:
            extra.append(f"column {column!r} (no eval case field holds it)")
            continue
        if field in case:
            problems.append(
                Problem(file, f"{where}.{column}", f"a second column for the case's {field}")
            )
            continue
        if whole:
            case[field] = value
            continue
        case[field] = _cell(field, value, file, f"{where}.{column}", problems)
    if "eval_case_id" not in case and "evalCaseId" not in case:
        case["eval_case_id"] = f"eval_case_{index}"
    return case, extra


def _is_flat(row: Mapping[str, Any]) -> bool:
    """A row of the flat form (a column only it has, or text where a case has a Content),
    not a whole dataset case as a JSON Lines row writes it."""
    if {"response", "source", "instruction", "history"} & set(row):
        return True
    return any(isinstance(row.get(field), str) for field in ("prompt", "reference"))


def _content(value: Any, role: str) -> Any:
    if isinstance(value, str):
        return {"role": role, "parts": [{"text": value}]}
    return value


def _cell(field: str, value: Any, file: str, where: str, problems: list[Problem]) -> Any:
    if field in _JSON_CELLS and isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            problems.append(Problem(file, where, f"expected JSON in the cell: {exc}"))
            return None
    if field == "prompt":
        return _content(value, "user")
    if field == "responses":
        return [{"response": _content(value, "model")}]
    if field == "reference":
        return {"response": _content(value, "model")}
    if field == "system_instruction":
        return _content(value, "system")
    if field == "rubric_groups" and isinstance(value, dict):
        # The SDK's cell: group name -> a list of rubrics (or the group itself).
        return {
            key: {"group_id": key, "rubrics": group} if isinstance(group, list) else group
            for key, group in value.items()
        }
    return value
