"""Problems found in a local file: where (file and JSON path) and what was expected."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_snake

from ..errors import PlatformEvalError


@dataclass(frozen=True)
class Problem:
    file: str | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.path}: {self.message}"


class FormatError(PlatformEvalError, ValueError):
    """A local file is not what it should be; ``problems`` lists every problem found."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:50]]
        if len(self.problems) > 50:
            lines.append(f"... and {len(self.problems) - 50} more")
        count = len(self.problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''}:\n  " + "\n  ".join(lines))


def json_path(loc: Iterable[int | str], prefix: str = "$") -> str:
    path = prefix
    for step in loc:
        if isinstance(step, int):
            path += f"[{step}]"
        elif step.isidentifier():
            path += f".{step}"
        else:
            path += f"[{step!r}]"
    return path


# Pydantic adds the union member or validator name to a location; they are not JSON keys.
_NOT_KEYS = ("function-after[", "function-before[", "function-wrap[", "tagged-union[")


# Keys other tools write where ADK expects another name.
_HINTS = {
    "agent_content": "final_response",
    "case_id": "eval_id",
    "expected_response": "final_response",
}


#: The two shapes of an invocation's ``intermediate_data`` (a union: pydantic names the member).
_UNION_MEMBERS = ("IntermediateData", "InvocationEvents")


def problems_from_validation(
    error: ValidationError, file: str | None, prefix: str = "$"
) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for err in _closest_member(error.errors()):
        loc = [
            step
            for step in err["loc"]
            if not (isinstance(step, str) and step.startswith(_NOT_KEYS))
            and step not in _UNION_MEMBERS
        ]
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            # Files are snake_case: name the missing field as the file would spell it.
            if loc and isinstance(loc[-1], str):
                loc[-1] = to_snake(loc[-1])
            message = "required field is missing"
        elif err["type"] == "extra_forbidden":
            hint = _field_like(str(loc[-1])) if loc else None
            message = f"unknown field (did you mean {hint!r}?)" if hint else "unknown field"
        where = json_path(loc, prefix)
        if (where, message) not in seen:
            seen.add((where, message))
            problems.append(Problem(file, where, message))
    return problems


def _closest_member(errors: list[Any]) -> list[Any]:
    """The errors with, at each union no member of which matched, only the errors of the member
    the value is closest to (the fewest errors; the first member on a tie). Pydantic reports
    every member's: a valid ``tool_uses`` was called an unknown field of the other shape."""
    by_place: dict[tuple[Any, ...], dict[str, list[int]]] = {}
    for index, err in enumerate(errors):
        loc = err["loc"]
        at = next((i for i, step in enumerate(loc) if step in _UNION_MEMBERS), None)
        if at is not None:
            by_place.setdefault(tuple(loc[:at]), {}).setdefault(loc[at], []).append(index)
    dropped: set[int] = set()
    for members in by_place.values():
        closest = min(members, key=lambda member: len(members[member]))
        for member, indices in members.items():
            if member != closest:
                dropped.update(indices)
    return [err for index, err in enumerate(errors) if index not in dropped]


def _field_like(key: str) -> str | None:
    """The field a misspelled or misnamed ``key`` most likely meant, or None."""
    if key in _HINTS:
        return _HINTS[key]
    close = difflib.get_close_matches(key, _field_names(), n=1, cutoff=0.8)
    return close[0] if close else None


@functools.cache
def _field_names() -> tuple[str, ...]:
    """Every field name (and alias) of the eval set and dataset files' models."""
    from . import adk, dataset

    names: set[str] = set()
    for module in (adk, dataset):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                for name, info in value.model_fields.items():
                    names.add(name)
                    if info.alias:
                        names.add(info.alias)
    return tuple(sorted(names))
