"""ADK's tool_trajectory_avg_score: per invocation 1.0 or 0.0, averaged."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from enum import StrEnum

from ._invocations import ToolCall


class MatchType(StrEnum):
    EXACT = "EXACT"
    IN_ORDER = "IN_ORDER"
    ANY_ORDER = "ANY_ORDER"


def _same(actual: ToolCall, expected: ToolCall, ignore_args: bool) -> bool:
    # Python equality of the decoded JSON args, exactly as ADK compares them: deep, key order
    # ignored, list order kept, 1 == 1.0, "1" != 1.
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def exact(actual: Sequence[ToolCall], expected: Sequence[ToolCall], ignore_args: bool) -> bool:
    return len(actual) == len(expected) and all(
        _same(a, e, ignore_args) for a, e in zip(actual, expected, strict=True)
    )


def in_order(actual: Sequence[ToolCall], expected: Sequence[ToolCall], ignore_args: bool) -> bool:
    position = 0
    for call in actual:
        if position < len(expected) and _same(call, expected[position], ignore_args):
            position += 1
    return position == len(expected)


def any_order(actual: Sequence[ToolCall], expected: Sequence[ToolCall], ignore_args: bool) -> bool:
    remaining = list(actual)
    for want in expected:
        for index, call in enumerate(remaining):
            if _same(call, want, ignore_args):
                del remaining[index]
                break
        else:
            return False
    return True


def _exact_calls(actual: Sequence[ToolCall], expected: Sequence[ToolCall], _: bool) -> bool:
    # ToolCall is a (name, args) tuple: tuple equality is _same with the arguments compared.
    return tuple(actual) == tuple(expected)


_MATCHERS = {MatchType.EXACT: exact, MatchType.IN_ORDER: in_order, MatchType.ANY_ORDER: any_order}
Matcher = Callable[[Sequence[ToolCall], Sequence[ToolCall], bool], bool]


@functools.cache
def matcher(match_type: str, ignore_args: bool) -> Matcher:
    """The comparison for a match type (a MatchType or its name), chosen once per metric."""
    kind = MatchType(match_type)
    if kind is MatchType.EXACT and not ignore_args:
        return _exact_calls
    return _MATCHERS[kind]
