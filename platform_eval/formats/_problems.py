"""Problems found in a local file: where (file and JSON path) and what was expected."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import ValidationError
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


def problems_from_validation(
    error: ValidationError, file: str | None, prefix: str = "$"
) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for err in error.errors():
        loc = [
            step
            for step in err["loc"]
            if not (isinstance(step, str) and step.startswith(_NOT_KEYS))
            and step not in ("IntermediateData", "InvocationEvents")
        ]
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            # Files are snake_case: name the missing field as the file would spell it.
            if loc and isinstance(loc[-1], str):
                loc[-1] = to_snake(loc[-1])
            message = "required field is missing"
        elif err["type"] == "extra_forbidden":
            hint = _HINTS.get(str(loc[-1])) if loc else None
            message = f"unknown field (did you mean {hint!r}?)" if hint else "unknown field"
        where = json_path(loc, prefix)
        if (where, message) not in seen:
            seen.add((where, message))
            problems.append(Problem(file, where, message))
    return problems
