"""The service's tool-call and trajectory computation metrics.

Tool-call metrics score one response (a turn) 1 or 0:

* ``tool_call_valid``: the response makes at least one tool call, and every call has a name
  and an object of arguments;
* ``tool_name_match``: the calls have the reference's names, in order;
* ``tool_parameter_key_match``: ... and each call has the reference's argument names;
* ``tool_parameter_kv_match``: ... and each call has the reference's arguments and values.

Trajectory metrics compare every tool call of a response with the reference's:
``trajectory_exact_match``, ``trajectory_in_order_match`` and ``trajectory_any_order_match``
(1 or 0, extra calls allowed by the last two), ``trajectory_precision`` (share of the calls
made that the reference has) and ``trajectory_recall`` (share of the reference's calls that
were made); ``trajectory_single_tool_use`` is 1 when the tool named by the ``tool_name`` option
was called at least once.

Precision and recall are the service's: "average precision [recall] of individual tool calls"
(its TrajectoryPrecisionSpec and TrajectoryRecallSpec), "the proportion of tool calls in the
predicted trajectory that are also in the reference trajectory" (its agent evaluation guide).
Each call is asked whether the other trajectory has it, on its own: ``[a, a]`` made against
``[a]`` is precision 1.0 (both calls are in the reference), ``[a]`` against ``[a, a]`` recall
1.0. A call is not used up by the first that matches it, as a one-to-one count would have it.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import trajectory
from ._invocations import ToolCall
from .trajectory import SameCall, by_value


def tool_call_valid(actual: Sequence[ToolCall]) -> float:
    return 1.0 if actual and all(c.name and isinstance(c.args, dict) for c in actual) else 0.0


def _paired(actual: Sequence[ToolCall], expected: Sequence[ToolCall]) -> bool:
    return len(actual) == len(expected)


def tool_name_match(actual: Sequence[ToolCall], expected: Sequence[ToolCall]) -> float:
    ok = _paired(actual, expected) and all(
        a.name == e.name for a, e in zip(actual, expected, strict=False)
    )
    return 1.0 if ok else 0.0


def tool_parameter_key_match(actual: Sequence[ToolCall], expected: Sequence[ToolCall]) -> float:
    ok = _paired(actual, expected) and all(
        a.name == e.name and set(a.args) == set(e.args)
        for a, e in zip(actual, expected, strict=False)
    )
    return 1.0 if ok else 0.0


def tool_parameter_kv_match(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> float:
    ok = _paired(actual, expected) and all(
        same(a, e) for a, e in zip(actual, expected, strict=False)
    )
    return 1.0 if ok else 0.0


def _found(calls: Sequence[ToolCall], among: Sequence[ToolCall], same: SameCall) -> int:
    """How many of ``calls`` the trajectory ``among`` has (each asked on its own)."""
    return sum(1 for call in calls if any(same(call, other) for other in among))


def trajectory_exact_match(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> float:
    return 1.0 if trajectory.exact(actual, expected, same) else 0.0


def trajectory_in_order_match(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> float:
    return 1.0 if trajectory.in_order(actual, expected, same) else 0.0


def trajectory_any_order_match(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> float:
    return 1.0 if trajectory.any_order(actual, expected, same) else 0.0


def trajectory_precision(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> float:
    if not actual:
        return 1.0 if not expected else 0.0
    return _found(actual, expected, same) / len(actual)


def trajectory_recall(
    actual: Sequence[ToolCall], expected: Sequence[ToolCall], same: SameCall = by_value
) -> float:
    if not expected:
        return 1.0
    return _found(expected, actual, lambda want, call: same(call, want)) / len(expected)


def trajectory_single_tool_use(actual: Sequence[ToolCall], tool_name: str) -> float:
    return 1.0 if any(c.name == tool_name for c in actual) else 0.0
