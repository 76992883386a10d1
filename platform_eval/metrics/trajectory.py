"""ADK's tool_trajectory_avg_score: per invocation 1.0 or 0.0, averaged."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from enum import StrEnum

from ._invocations import ToolCall
from .arguments import ArgRules


class MatchType(StrEnum):
    EXACT = "EXACT"
    IN_ORDER = "IN_ORDER"
    ANY_ORDER = "ANY_ORDER"


SameCall = Callable[[ToolCall, ToolCall], bool]


def by_value(actual: ToolCall, expected: ToolCall) -> bool:
    # ToolCall is a (name, args) tuple: Python equality of the decoded JSON args, exactly as ADK
    # compares them: deep, key order ignored, list order kept, 1 == 1.0, "1" != 1.
    return actual == expected


def by_name(actual: ToolCall, expected: ToolCall) -> bool:
    return actual.name == expected.name


def with_rules(rules: ArgRules) -> SameCall:
    """Calls match when the names do and the arguments pass ``rules``."""

    def same(actual: ToolCall, expected: ToolCall) -> bool:
        return actual.name == expected.name and (
            rules.compare(actual.name, actual.args, expected.args) is None
        )

    return same


def exact(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> bool:
    return len(actual) == len(expected) and all(
        same(a, e) for a, e in zip(actual, expected, strict=True)
    )


def in_order(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> bool:
    position = 0
    for call in actual:
        if position < len(expected) and same(call, expected[position]):
            position += 1
    return position == len(expected)


def any_order(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> bool:
    remaining = list(actual)
    for want in expected:
        for index, call in enumerate(remaining):
            if same(call, want):
                del remaining[index]
                break
        else:
            return False
    return True


def _exact_calls(actual: Sequence[ToolCall], expected: Sequence[ToolCall]) -> bool:
    # Tuple equality is by_value on every pair, at C speed.
    return tuple(actual) == tuple(expected)


_MATCHERS = {MatchType.EXACT: exact, MatchType.IN_ORDER: in_order, MatchType.ANY_ORDER: any_order}
Matcher = Callable[[Sequence[ToolCall], Sequence[ToolCall]], bool]


@functools.cache
def matcher(match_type: str, ignore_args: bool) -> Matcher:
    """ADK's comparison for a match type (a MatchType or its name), chosen once per metric."""
    kind = MatchType(match_type)
    if kind is MatchType.EXACT and not ignore_args:
        return _exact_calls
    return functools.partial(_MATCHERS[kind], same=by_name if ignore_args else by_value)


def rule_matcher(match_type: str, rules: ArgRules) -> Matcher:
    """The comparison for a match type with per-argument rules."""
    return functools.partial(_MATCHERS[MatchType(match_type)], same=with_rules(rules))


_NO_RULES = ArgRules({})


def first_difference(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], rules: ArgRules | None
) -> str:
    """Why a turn's calls did not match, for its explanation: the first expected call not
    made, or made with an argument that breaks its rule, naming the argument and the rule."""
    for want in expected:
        made = [call for call in actual if call.name == want.name]
        if not made:
            return f"{want.name} was not called"
        if rules is None:
            # No rules: a call matches when its arguments are equal, which is what an empty
            # rule set finds, without writing out a mismatch for every call that differs.
            if any(call.args == want.args for call in made):
                continue
            return f"{want.name}.{_NO_RULES.compare(want.name, made[0].args, want.args)}"
        mismatches = [rules.compare(want.name, call.args, want.args) for call in made]
        if all(m is not None for m in mismatches):
            return f"{want.name}.{mismatches[0]}"
    return f"{len(actual)} calls made, {len(expected)} expected, in another number or order"
