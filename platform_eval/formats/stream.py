"""An ADK eval set read one case at a time, for uploads whose memory must not grow with the file.

Parsed whole, an eval set takes 20-30 times its file's size (a dict per JSON object, then a
model per dict). Here the file's text is kept (once its size) with where each case starts and
ends; a case is parsed when it is asked for, and dropped after. Only the current ADK shape
(an object with ``eval_set_id`` and ``eval_cases``) is read so: the older shapes are small
lists and go through ``load_eval_set``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from .._json_limits import limit_problem
from . import adk
from ._problems import FormatError, Problem, problems_from_validation
from .convert import EMPTY_CASE
from .dataset_items import DatasetCases, FileCase
from .load import (
    Kind,
    LoadedFile,
    checked_dataset,
    eval_set_from,
    load,
    repeated_ids,
    rubric_id_problems,
)
from .reading import read_text

#: The eval set text up to which an upload keeps every case it has read (see keeps_parsed_cases).
KEEP_PARSED_BYTES = 8 * 2**20

_DECODER = json.JSONDecoder()
_SET_ID_KEYS = ("eval_set_id", "evalSetId")
_CASES_KEYS = ("eval_cases", "evalCases")


@runtime_checkable
class EvalCases(Protocol):
    """The cases of an eval set, by position: in memory, or read from a file as asked for."""

    @property
    def eval_set_id(self) -> str: ...

    @property
    def name(self) -> str | None: ...

    @property
    def path(self) -> str | None:
        """The file the cases were read from (None: given in memory), for messages."""
        ...

    def __len__(self) -> int: ...

    @property
    def keeps_parsed_cases(self) -> bool:
        """True when a caller may keep every case it has read (they are held already, or the
        file is small enough that holding them costs little); otherwise it reads a case again
        when it needs it, and holds a few at a time."""
        ...

    def case(self, index: int) -> adk.EvalCase:
        """The case at ``index`` as an ADK eval case (what an agent is run on); FormatError
        naming the file and JSON path when it is bad."""
        ...

    def file_case(self, index: int) -> FileCase:
        """The case at ``index`` as its file holds it (what is uploaded), checked as ``case``."""
        ...


def cases_json_path(cases: EvalCases) -> str:
    """The JSON path of the cases' array in their file, for messages."""
    return f"$.{getattr(cases, 'cases_key', 'eval_cases')}"


@dataclass(frozen=True)
class InMemoryCases:
    eval_set: adk.EvalSet
    #: The file the cases were read from, for messages.
    path: str | None = None

    @property
    def eval_set_id(self) -> str:
        return self.eval_set.eval_set_id

    @property
    def name(self) -> str | None:
        return self.eval_set.name

    def __len__(self) -> int:
        return len(self.eval_set.eval_cases)

    @property
    def keeps_parsed_cases(self) -> bool:
        return True  # they are all held already

    def case(self, index: int) -> adk.EvalCase:
        return self.eval_set.eval_cases[index]

    def file_case(self, index: int) -> FileCase:
        return self.case(index)


class _NotStreamableError(Exception):
    """The file is not an eval set object this reader takes; the whole-file loader decides."""


@dataclass(frozen=True)
class EvalSetFile:
    """An eval set file's text and the span of each case in it."""

    path: str
    eval_set_id: str
    name: str | None
    cases_key: str
    text: str = field(repr=False)
    spans: tuple[tuple[int, int], ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.spans)

    @property
    def keeps_parsed_cases(self) -> bool:
        # Parsed cases take some six times their JSON: kept, a 26 MB file of 20,000 cases
        # peaked at 5.6x the data an upload touches (bench_memory.py; the goal is 2x). Below
        # this size the memory is small in any case, and reading each case once saves its
        # second parse (an upload of 3,000 cases, 3.9 MB, is bench_upload's goal row).
        return len(self.text) <= KEEP_PARSED_BYTES

    def case(self, index: int) -> adk.EvalCase:
        start, end = self.spans[index]
        where = f"$.{self.cases_key}[{index}]"
        chunk = self.text[start:end]
        data = json.loads(chunk)
        problem = limit_problem(data, chunk)
        if problem is not None:
            path, message = problem
            raise FormatError([Problem(self.path, where + path.removeprefix("$"), message)])
        try:
            case = adk.EvalCase.model_validate(data)
        except ValidationError as error:
            raise FormatError(problems_from_validation(error, self.path, where)) from None
        if not case.conversation and case.conversation_scenario is None:
            raise FormatError([Problem(self.path, f"{where}.conversation", EMPTY_CASE)])
        problems = rubric_id_problems(case, self.path, where)
        if problems:
            raise FormatError(problems)
        return case

    def file_case(self, index: int) -> FileCase:
        return self.case(index)

    def __iter__(self) -> Iterator[adk.EvalCase]:
        return (self.case(index) for index in range(len(self)))


def open_eval_set(path: str | Path) -> EvalSetFile | None:
    """The eval set at ``path`` read lazily, or None when it is not a JSON eval set object (an
    older shape, YAML, invalid JSON, or not an eval set at all: ``load_eval_set`` reads those,
    or says what is wrong with them)."""
    if _parsed_whole(path):
        return None
    return _from_text(str(path), read_text(path, limit_size=False))


def read_eval_cases(path: str | Path) -> EvalCases:
    """The cases of the eval set file at ``path``, read from disk once: a case at a time where
    this reader takes the file, parsed whole (``load``) otherwise."""
    if _parsed_whole(path):
        return cases_from(load(path))
    # Not held to the size limit of whole-file reads: the streamed file keeps its text and a
    # case; the whole-file loader checks the limit itself.
    text = read_text(path, limit_size=False)
    streamed = _from_text(str(path), text)
    return streamed if streamed is not None else cases_from(load(path, text))


def as_eval_set(cases: EvalCases) -> adk.EvalSet:
    """The cases as an ADK eval set, for what needs ADK's cases (running an agent on them,
    pairing recordings with them by their first message)."""
    if isinstance(cases, InMemoryCases):
        return cases.eval_set
    read = [cases.case(index) for index in range(len(cases))]
    # Two cases of one id, refused before an agent runs on them (a streamed file is checked
    # case by case; its whole-set check is this one).
    field = "eval_id" if isinstance(cases, EvalSetFile) else "eval_case_id"
    problems = repeated_ids(
        [case.eval_id for case in read],
        cases.path or cases.eval_set_id,
        cases_json_path(cases),
        field,
    )
    if problems:
        raise FormatError(problems)
    return adk.EvalSet(
        eval_set_id=cases.eval_set_id, name=cases.name or cases.eval_set_id, eval_cases=read
    )


def cases_from(loaded: LoadedFile) -> EvalCases:
    """The cases of a file read whole: a dataset's in its own shape, the others as ADK's."""
    if loaded.kind == Kind.DATASET:
        dataset, eval_set_id = checked_dataset(loaded)
        return DatasetCases(dataset, eval_set_id, loaded.path)
    return InMemoryCases(eval_set_from(loaded), loaded.path)


def _parsed_whole(path: str | Path) -> bool:
    return Path(path).suffix.lower() in (".yaml", ".yml", ".jsonl", ".csv")


def _from_text(file: str, text: str) -> EvalSetFile | None:
    try:
        return _scan(file, text)
    except (_NotStreamableError, json.JSONDecodeError, RecursionError):
        # Not JSON as this reader takes it (or nested deeper than the decoder goes): the
        # whole-file loader reads it, or says why not.
        return None


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _expect(text: str, index: int, char: str) -> int:
    index = _skip(text, index)
    if not text.startswith(char, index):
        raise json.JSONDecodeError(f"Expecting {char!r}", text, index)
    return index + 1


def _scan(file: str, text: str) -> EvalSetFile:
    """The top-level object's keys, and the spans of the cases' array elements; every other
    value is decoded (the set's id, name and description are small)."""
    index = _skip(text, 0)
    if not text.startswith("{", index):
        raise _NotStreamableError
    index += 1
    scalars: dict[str, Any] = {}
    spans: list[tuple[int, int]] = []
    cases_key: str | None = None
    index = _skip(text, index)
    if text.startswith("}", index):
        raise _NotStreamableError
    while True:
        key, index = _DECODER.raw_decode(text, _skip(text, index))
        if not isinstance(key, str):
            raise json.JSONDecodeError("Expecting property name", text, index)
        index = _skip(text, _expect(text, index, ":"))
        if key in _CASES_KEYS and text.startswith("[", index):
            spans.clear()
            cases_key, index = key, _elements(text, index + 1, spans)
        else:
            scalars[key], index = _DECODER.raw_decode(text, index)
        index = _skip(text, index)
        if text.startswith("}", index):
            break
        index = _expect(text, index, ",")
    if _skip(text, index + 1) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, index + 1))
    if (
        cases_key is None
        or not any(k in scalars for k in _SET_ID_KEYS)
        or any(k in scalars for k in _CASES_KEYS)
    ):
        raise _NotStreamableError
    try:
        # The set's own fields, checked as the whole-file loader checks them.
        shell = adk.EvalSet.model_validate({**scalars, cases_key: []})
    except ValidationError as error:
        raise FormatError(problems_from_validation(error, file)) from None
    return EvalSetFile(
        path=file,
        eval_set_id=shell.eval_set_id,
        name=shell.name,
        cases_key=cases_key,
        text=text,
        spans=tuple(spans),
    )


def _elements(text: str, index: int, spans: list[tuple[int, int]]) -> int:
    """Records the span of each element of the array whose ``[`` is before ``index``; returns
    the index after its ``]``. Each element is decoded to find its end, then dropped."""
    index = _skip(text, index)
    if text.startswith("]", index):
        return index + 1
    while True:
        start = _skip(text, index)
        _, end = _DECODER.raw_decode(text, start)
        spans.append((start, end))
        index = _skip(text, end)
        if text.startswith("]", index):
            return index + 1
        index = _expect(text, index, ",")
