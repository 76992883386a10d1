"""Reading local files: JSON, JSONL and YAML, with the kind of file detected from its content."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .._json_limits import limit_problem, max_depth, size_exceeds, too_deep
from . import adk
from ._problems import FormatError, Problem, problems_from_validation
from .config import EvalConfig, parse_eval_config
from .convert import EMPTY_CASE
from .dataset import EvaluationDataset
from .dataset_items import dataset_case_to_item
from .flat_table import dataset_from_rows, looks_like_rows, read_csv
from .from_dataset import dataset_to_eval_set
from .reading import (
    MAX_FILE_MB_ENV,
    max_file_bytes,
    read_text,
)

_logger = logging.getLogger("platform_eval.formats")


class Kind(StrEnum):
    EVAL_SET = "adk-eval-set"
    LEGACY_TEST = "adk-legacy-test"  # [{query, expected_tool_use, reference}, ...]
    LEGACY_EVAL_SET = "adk-legacy-eval-set"  # [{name, data, initial_session}, ...]
    DATASET = "evaluation-dataset"
    EVAL_CONFIG = "eval-config"
    SESSION = "adk-session"
    EVAL_SET_RESULT = "adk-eval-set-result"
    CONVERSATION_SCENARIOS = "adk-conversation-scenarios"
    SESSION_INPUT = "adk-session-input"
    JAEGER_TRACES = "jaeger-traces"
    OTLP_TRACES = "otlp-traces"
    SPAN_LIST = "span-list"  # flat spans: /debug/trace, console exporter, ADOT {spans}
    ADK_EVENTS = "adk-events"  # the event list ADK's api_server /run answers with


#: The kinds that hold a recorded conversation.
TRACE_KINDS = (
    Kind.SESSION,
    Kind.JAEGER_TRACES,
    Kind.OTLP_TRACES,
    Kind.SPAN_LIST,
    Kind.ADK_EVENTS,
)


@dataclass(frozen=True)
class LoadedFile:
    path: str
    kind: Kind
    data: Any


def read_data(path: str | Path, text: str | None = None) -> Any:
    """Parses a JSON, JSONL (``.jsonl``), CSV (``.csv``, a list of rows) or YAML
    (``.yaml``/``.yml``) file (``text``: its text, when the caller read it already).

    Nesting deeper than any format has, and strings that are not valid Unicode, are refused
    here with the file and the JSON path, so that no later step trips over them.
    """
    file = str(path)
    if text is None:
        text = read_text(path)
    else:
        check_file_size(Path(path))  # read already, but not yet held to the limit
    try:
        suffix = Path(path).suffix.lower()
        data = _parse(text, suffix, file)
        problem = limit_problem(data, text, json_text=suffix not in (*_YAML, ".csv"))
    except RecursionError:
        problem = "$", too_deep(max_depth())
    if problem is not None:
        raise FormatError([Problem(file, *problem)])
    if looks_like_rows(data):
        # The SDK's flat table (a CSV, JSON Lines of cases): the dataset it holds.
        data, not_carried = dataset_from_rows(data, file)
        for case, whats in not_carried.items():
            for what in whats:
                _logger.warning("%s: eval case %s: not carried: %s", file, case, what)
    return data


def check_file_size(path: Path) -> None:
    """FormatError for a file above ``max_file_bytes()``; OSError when it cannot be read."""
    file = str(path)
    size, limit = path.stat().st_size, max_file_bytes()
    if size > limit:
        raise FormatError(
            [
                Problem(
                    file,
                    "$",
                    f"{size / 2**20:.1f} MiB is more than the {limit / 2**20:g} MiB platform-eval "
                    f"reads at once (it would take about {25 * size / 2**30:.1f} GiB of memory): "
                    f"split the file, or set {MAX_FILE_MB_ENV} to raise the limit",
                )
            ]
        )


#: The suffixes of YAML files (nested by indentation, not by brackets).
_YAML = (".yaml", ".yml")


def _parse(text: str, suffix: str, file: str) -> Any:
    if suffix in _YAML:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise FormatError([_yaml_problem(file, exc)]) from None
        # Aliases can make a small file expand to billions of values.
        if size_exceeds(data, 100 * len(text) + 1000):
            raise FormatError([Problem(file, "$", "its aliases expand to far more than the file")])
        return data
    if suffix == ".csv":
        return read_csv(text, file)
    if suffix == ".jsonl":
        rows = []
        for line in text.splitlines():
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    # Not one object per line: pretty-printed objects one after another (the
                    # OpenTelemetry console exporter writes them so).
                    return _json_stream(text, file)
        return rows
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return _json_stream(text, file)
        raise FormatError(
            [Problem(file, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}")]
        ) from None


def _yaml_problem(file: str, exc: Any) -> Problem:
    """One line: where the YAML broke, what the parser expected there, and what it was in."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else "$"
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context, started = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and started is not None:
        what += f" ({context} from line {started.line + 1})"
    return Problem(file, where, f"invalid YAML: {what}")


def _json_stream(text: str, file: str) -> list[Any]:
    """JSON values one after another, separated by whitespace only."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return values
        try:
            value, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            raise FormatError(
                [
                    Problem(
                        file,
                        f"line {exc.lineno} column {exc.colno}",
                        f"invalid JSON: {exc.msg} (after {len(values)} complete values)",
                    )
                ]
            ) from None
        values.append(value)


def _has(data: dict[str, Any], *keys: str) -> bool:
    return any(k in data for k in keys)


#: Keys of an OTLP export: spans (OTLP JSON, Tempo's batches) or log records, which carry the
#: message content of instrumentations that record it as events (ADK 2.x by default).
_OTLP_KEYS = ("resourceSpans", "resource_spans", "batches", "resourceLogs", "resource_logs")


def is_flat_span(row: Any) -> bool:
    """A span as one dict with plain attributes (not inside a resource or a Jaeger trace)."""
    if not isinstance(row, dict):
        return False
    context = row.get("context")
    return ("name" in row or "SpanName" in row) and (
        _has(row, "span_id", "spanId", "spanID", "SpanId")
        or (isinstance(context, dict) and "span_id" in context)
    )


def detect(data: Any) -> Kind | None:
    """The kind of a parsed file, or None when it is none of the kinds we read."""
    if isinstance(data, list):
        first = next((row for row in data if isinstance(row, dict)), None)
        if first is None:
            return None
        if _has(first, *_OTLP_KEYS):
            return Kind.OTLP_TRACES
        if is_flat_span(first):
            return Kind.SPAN_LIST
        if "author" in first and _has(first, "invocationId", "invocation_id", "content"):
            return Kind.ADK_EVENTS
        if "name" in first and "data" in first:
            return Kind.LEGACY_EVAL_SET
        if "query" in first:
            return Kind.LEGACY_TEST
        return None
    if not isinstance(data, dict):
        return None
    if _has(data, "eval_set_result_id", "evalSetResultId"):
        return Kind.EVAL_SET_RESULT
    if _has(data, "eval_cases", "evalCases"):
        if _has(data, "eval_set_id", "evalSetId"):
            return Kind.EVAL_SET
        cases = data.get("eval_cases") or data.get("evalCases")
        first = cases[0] if isinstance(cases, list) and cases else None
        first = first if isinstance(first, dict) else {}
        if _has(first, "eval_id", "evalId", "conversation", "conversation_scenario"):
            return Kind.EVAL_SET
        return Kind.DATASET
    if _has(data, "criteria", "metrics_to_run"):
        return Kind.EVAL_CONFIG
    if _has(data, *_OTLP_KEYS):
        return Kind.OTLP_TRACES
    if isinstance(data.get("trace"), dict) and _has(
        data["trace"], "resourceSpans", "resource_spans", "batches"
    ):
        return Kind.OTLP_TRACES  # Tempo's /api/traces/<id> answer
    spans = data.get("spans")
    if isinstance(spans, list) and any(is_flat_span(s) for s in spans):
        return Kind.SPAN_LIST  # AWS ADOT {session_id, spans}
    if isinstance(data.get("data"), list) and any(
        isinstance(t, dict) and "spans" in t for t in data["data"]
    ):
        return Kind.JAEGER_TRACES
    if "events" in data and _has(data, "id", "app_name", "appName"):
        return Kind.SESSION
    if "scenarios" in data:
        return Kind.CONVERSATION_SCENARIOS
    if _has(data, "app_name", "appName") and _has(data, "user_id", "userId"):
        return Kind.SESSION_INPUT
    return None


def load(path: str | Path, text: str | None = None) -> LoadedFile:
    data = read_data(path, text)
    kind = detect(data)
    if kind is None:
        raise FormatError(
            [
                Problem(
                    str(path),
                    "$",
                    "not a file kind platform-eval reads: expected an ADK eval set, an old "
                    ".test.json list, an EvaluationDataset, an eval config, an ADK session or "
                    "OpenTelemetry traces (Jaeger or OTLP JSON)",
                )
            ]
        )
    return LoadedFile(str(path), kind, data)


_LEGACY_ROWS = TypeAdapter(list[adk.LegacyRow])
_LEGACY_CASES = TypeAdapter(list[adk.LegacyCase])


def _eval_set_problems(loaded: LoadedFile) -> tuple[adk.EvalSet | None, list[Problem]]:
    eval_set, problems = _read_eval_set(loaded)
    if eval_set is None:
        return None, problems
    problems = _whole_set_problems([case.eval_id for case in eval_set.eval_cases], loaded)
    return (None, problems) if problems else (eval_set, [])


def _whole_set_problems(ids: Sequence[str], loaded: LoadedFile) -> list[Problem]:
    """What no single case shows: a set with no case (nothing to evaluate), and two cases of
    one id (their results could not be told apart)."""
    data = loaded.data if isinstance(loaded.data, dict) else {}
    key = "evalCases" if "evalCases" in data else "eval_cases"
    if not ids:
        return [Problem(loaded.path, f"$.{key}", "has no cases: there is nothing to evaluate")]
    field = "eval_case_id" if loaded.kind == Kind.DATASET else "eval_id"
    return repeated_ids(ids, loaded.path, f"$.{key}", field)


def repeated_ids(ids: Sequence[str | None], path: str, cases: str, field: str) -> list[Problem]:
    """A problem for each case whose id an earlier case has (``ids`` in the file's order, None
    for a case that could not be read; ``cases``: the JSON path of the cases' array, ``field``:
    the id's name there)."""
    first: dict[str, int] = {}
    problems = []
    for index, eval_id in enumerate(ids):
        if eval_id is None:
            continue
        earlier = first.setdefault(eval_id, index)
        if earlier != index:
            problems.append(
                Problem(
                    path,
                    f"{cases}[{index}].{field}",
                    f"{eval_id!r} is the id of {cases}[{earlier}] too: each case needs an id "
                    "of its own (results are kept by it)",
                )
            )
    return problems


def _read_eval_set(loaded: LoadedFile) -> tuple[adk.EvalSet | None, list[Problem]]:
    try:
        if loaded.kind == Kind.EVAL_SET:
            eval_set = adk.EvalSet.model_validate(loaded.data)
            key = "evalCases" if "evalCases" in loaded.data else "eval_cases"
            empty = [
                Problem(loaded.path, f"$.{key}[{index}].conversation", EMPTY_CASE)
                for index, case in enumerate(eval_set.eval_cases)
                if not case.conversation and case.conversation_scenario is None
            ]
            problems = empty + _rubric_id_problems(eval_set, loaded.path, key)
            return (None, problems) if problems else (eval_set, [])
        if loaded.kind == Kind.LEGACY_TEST:
            rows = _LEGACY_ROWS.validate_python(loaded.data)
            name = Path(loaded.path).name.split(".")[0]
            return adk.eval_set_from_legacy([adk.LegacyCase(name=name, data=rows)], name), []
        if loaded.kind == Kind.LEGACY_EVAL_SET:
            cases = _LEGACY_CASES.validate_python(loaded.data)
            return adk.eval_set_from_legacy(cases, Path(loaded.path).name.split(".")[0]), []
        if loaded.kind == Kind.DATASET:
            return _dataset_eval_set(loaded), []
    except ValidationError as error:
        return None, problems_from_validation(error, loaded.path)
    return None, [Problem(loaded.path, "$", f"expected an ADK eval set, found {loaded.kind}")]


def _rubric_id_problems(eval_set: adk.EvalSet, path: str, key: str) -> list[Problem]:
    problems = []
    for index, case in enumerate(eval_set.eval_cases):
        problems += rubric_id_problems(case, path, f"$.{key}[{index}]")
    return problems


def rubric_id_problems(case: adk.EvalCase, path: str, where: str) -> list[Problem]:
    """A rubric id twice in what one turn is judged by (the case's rubrics and the turn's):
    adk eval refuses such a case ("Rubric with rubric_id ... already exists"), and so do we,
    rather than judge one of the two. ``where``: the case's JSON path."""
    problems = []
    case_ids: dict[str, str] = {}
    for number, rubric in enumerate(case.rubrics or []):
        here = f"{where}.rubrics[{number}].rubric_id"
        if rubric.rubric_id in case_ids:
            problems.append(_twice(path, here, rubric.rubric_id, case_ids[rubric.rubric_id]))
        case_ids.setdefault(rubric.rubric_id, here)
    for turn, invocation in enumerate(case.conversation or []):
        seen = dict(case_ids)
        for number, rubric in enumerate(invocation.rubrics or []):
            here = f"{where}.conversation[{turn}].rubrics[{number}].rubric_id"
            if rubric.rubric_id in seen:
                problems.append(_twice(path, here, rubric.rubric_id, seen[rubric.rubric_id]))
            seen.setdefault(rubric.rubric_id, here)
    return problems


def _twice(path: str, where: str, rubric_id: str, first: str) -> Problem:
    return Problem(
        path,
        where,
        f"rubric_id {rubric_id!r} is already the id of {first}: a turn is judged by its case's "
        "rubrics and its own, and each needs an id of its own (adk eval refuses the run too)",
    )


def dataset_set_id(path: str) -> str:
    """An EvaluationDataset file's eval set id: its name without ``-dataset.json``."""
    name = Path(path).name
    for suffix in ("-dataset.json", "_dataset.json", ".dataset.json", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def checked_dataset(loaded: LoadedFile) -> tuple[EvaluationDataset, str]:
    """The dataset a file holds and its eval set id, checked as an eval set file is checked
    (its cases, no case twice, at least one): FormatError naming the file and JSON path."""
    try:
        dataset = EvaluationDataset.model_validate(loaded.data)
    except ValidationError as error:
        raise FormatError(problems_from_validation(error, loaded.path)) from None
    eval_set_id = dataset_set_id(loaded.path)
    ids = [case.eval_case_id or f"case-{n}" for n, case in enumerate(dataset.eval_cases)]
    problems = _whole_set_problems(ids, loaded)
    if problems:
        raise FormatError(problems)
    return dataset, eval_set_id


def _dataset_eval_set(loaded: LoadedFile) -> adk.EvalSet:
    """An EvaluationDataset read as the eval set it holds (for what runs an agent on its cases);
    what its stored items cannot hold is reported, case by case, never dropped in silence."""
    dataset = EvaluationDataset.model_validate(loaded.data)
    eval_set_id = dataset_set_id(loaded.path)
    eval_set, _ = dataset_to_eval_set(dataset, eval_set_id)
    for index, case in enumerate(dataset.eval_cases):
        numbered = (
            case if case.eval_case_id else case.model_copy(update={"eval_case_id": f"case-{index}"})
        )
        _, report = dataset_case_to_item(numbered, eval_set_id)
        for what in report.not_carried:
            _logger.warning("%s: eval case %s: not carried: %s", loaded.path, report.eval_id, what)
    return eval_set


def is_table(source: Any) -> bool:
    """A pandas DataFrame (or anything with its ``to_dict("records")``): the SDK's flat form."""
    return callable(getattr(source, "to_dict", None)) and hasattr(source, "columns")


def table_dataset(table: Any, name: str = "table") -> LoadedFile:
    """A DataFrame of the SDK's flat form (``prompt``, ``response``, ``reference``, ...) read as
    the EvaluationDataset it holds, as a file of it would be (``name`` stands for the file)."""
    rows = table.to_dict("records")
    # A DataFrame's missing cell is NaN (or None): no value, as an empty CSV cell.
    cleaned = [{str(k): v for k, v in row.items() if v is not None and v == v} for row in rows]
    data, not_carried = dataset_from_rows(cleaned, name)
    for case, whats in not_carried.items():
        for what in whats:
            _logger.warning("%s: eval case %s: not carried: %s", name, case, what)
    return LoadedFile(name, Kind.DATASET, data)


def holds_answers(loaded: LoadedFile) -> bool:
    """An EvaluationDataset some of whose cases hold the agent's answers (``responses``): an
    agents-cli trace file, graded as it is."""
    if loaded.kind != Kind.DATASET:
        return False
    try:
        dataset = EvaluationDataset.model_validate(loaded.data)
    except ValidationError:
        return False  # eval_set_from says what is wrong with it
    return any(case.graded for case in dataset.eval_cases)


def eval_set_from(loaded: LoadedFile) -> adk.EvalSet:
    """``load_eval_set`` for a file already read (``load``)."""
    eval_set, problems = _eval_set_problems(loaded)
    if problems or eval_set is None:
        raise FormatError(problems)
    return eval_set


def load_eval_set(path: str | Path, text: str | None = None) -> adk.EvalSet:
    """An ADK eval set from an ``.evalset.json``, either older ``.test.json`` shape, or an
    Agent Platform EvaluationDataset (``*-dataset.json``), read as the eval set it holds
    (``text``: the file's text, when the caller read it already)."""
    return eval_set_from(load(path, text))


def load_dataset(path: str | Path) -> EvaluationDataset:
    loaded = load(path)
    if loaded.kind != Kind.DATASET:
        raise FormatError(
            [Problem(loaded.path, "$", f"expected an EvaluationDataset, found {loaded.kind}")]
        )
    try:
        return EvaluationDataset.model_validate(loaded.data)
    except ValidationError as error:
        raise FormatError(problems_from_validation(error, loaded.path)) from None


def load_eval_config(path: str | Path) -> EvalConfig:
    loaded = load(path)
    if loaded.kind != Kind.EVAL_CONFIG:
        raise FormatError(
            [Problem(loaded.path, "$", f"expected an eval config, found {loaded.kind}")]
        )
    config, problems = parse_eval_config(loaded.data, loaded.path)
    if problems:
        raise FormatError(problems)
    return config


def validate(path: str | Path) -> list[Problem]:
    """Every problem in a file in one pass, like a linter (empty when the file is fine)."""
    try:
        loaded = load(path)
    except FormatError as error:
        return error.problems
    return validate_loaded(loaded)


def validate_loaded(loaded: LoadedFile) -> list[Problem]:
    """``validate`` for a file already read (``load``)."""
    if loaded.kind in (Kind.EVAL_SET, Kind.LEGACY_TEST, Kind.LEGACY_EVAL_SET):
        return _eval_set_problems(loaded)[1]
    if loaded.kind == Kind.DATASET:
        # The reader run and upload use: what validate passes, they take.
        return _eval_set_problems(loaded)[1]
    if loaded.kind == Kind.EVAL_CONFIG:
        return parse_eval_config(loaded.data, loaded.path)[1]
    return []
