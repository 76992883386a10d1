"""What the loader fuzz tests run: every local-data entry point on one file, and the seeds.

``exercise(path)`` drives a file through every reader the CLI and the jobs use (validate,
load, eval set / dataset / config parsing, conversion to items, migration both ways, trace
reading and matching). Each must return, or raise our typed ``PlatformEvalError``; anything
else (KeyError, IndexError, TypeError, RecursionError, ...) is a bug the fuzz tests report.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from platform_eval import formats, traces
from platform_eval.errors import PlatformEvalError
from platform_eval.formats import Kind

ROOT = Path(__file__).resolve().parents[1]

#: Suffixes that steer the readers (JSONL and YAML parse differently; names pick legacy shapes).
SUFFIXES = (".evalset.json", ".test.json", "-dataset.json", ".json", ".jsonl", ".yaml")


def exercise(path: Path) -> None:
    """Every reader on ``path``; raises only PlatformEvalError (or AssertionError)."""
    problems = formats.validate(path)
    assert all(isinstance(p, formats.Problem) for p in problems)
    try:
        loaded = formats.load(path)
    except PlatformEvalError:
        return
    with contextlib.suppress(PlatformEvalError):
        _steps_for(loaded.kind)(path)


def _steps_for(kind: Kind) -> Callable[[Path], Any]:
    if kind in (Kind.EVAL_SET, Kind.LEGACY_TEST, Kind.LEGACY_EVAL_SET):
        return _eval_set_steps
    if kind == Kind.DATASET:
        return _dataset_steps
    if kind == Kind.EVAL_CONFIG:
        return formats.load_eval_config
    return _trace_steps


def _eval_set_steps(path: Path) -> None:
    eval_set = formats.load_eval_set(path)
    items, report = formats.eval_set_to_items(eval_set)
    for item in items:
        json.dumps(item.to_wire(), allow_nan=False)
    assert len(report.cases) == len(eval_set.eval_cases)
    dataset, _ = formats.eval_set_to_dataset(eval_set)
    back, _ = formats.dataset_to_eval_set(dataset, eval_set.eval_set_id or "fuzz")
    json.dumps(back.to_json_dict())


def _dataset_steps(path: Path) -> None:
    dataset = formats.load_dataset(path)
    eval_set, _ = formats.dataset_to_eval_set(dataset, "fuzz")
    formats.eval_set_to_items(eval_set)


def _trace_steps(path: Path) -> None:
    conversations = traces.load_conversations(path)
    for conversation in conversations:
        assert conversation.first_user_message is None or conversation.first_user_message
        assert all(isinstance(name, str) for name in conversation.tool_calls)
        json.dumps(conversation.agent_data.to_wire(), allow_nan=False)


# -- seeds: files we ship, and the public corpus when it is beside the repository -----------


def seed_files(corpus: Path) -> list[Path]:
    shipped = sorted((ROOT / "samples" / "data").glob("*.json"))
    shipped += sorted((ROOT / "tests" / "data").rglob("*.json"))
    found = sorted(p for p in corpus.rglob("*") if p.suffix in (".json", ".jsonl"))
    return shipped + [p for p in found if p.stat().st_size < 2_000_000]


def read_seed(path: Path) -> Any:
    """The parsed seed, or None when even the original is not something we read."""
    try:
        return formats.read_data(path)
    except PlatformEvalError:
        return None


# -- strategies ----------------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["", "user", "model", "REQUEST", "gen_ai.prompt", "text", "0", "-1"])
)

#: Keys the readers look for, so that random objects reach deep code, not just the first check.
_KEYS = st.sampled_from(
    [
        "eval_set_id",
        "evalSetId",
        "eval_cases",
        "evalCases",
        "eval_id",
        "conversation",
        "invocation_id",
        "user_content",
        "final_response",
        "intermediate_data",
        "tool_uses",
        "parts",
        "text",
        "role",
        "function_call",
        "name",
        "args",
        "query",
        "expected_tool_use",
        "reference",
        "criteria",
        "threshold",
        "rubrics",
        "eval_cases",
        "prompt",
        "response",
        "events",
        "author",
        "content",
        "id",
        "spans",
        "resourceSpans",
        "scopeSpans",
        "data",
        "traceID",
        "spanID",
        "operationName",
        "tags",
        "key",
        "value",
        "attributes",
        "stringValue",
        "intValue",
        "arrayValue",
        "values",
        "kvlistValue",
        "startTimeUnixNano",
        "endTimeUnixNano",
        "parentSpanId",
        "references",
        "session_id",
        "trace",
        "batches",
        "context",
        "span_id",
        "trace_id",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "openinference.span.kind",
        "input.value",
        "output.value",
        "timestamp",
        "start_time",
        "end_time",
        "parent_id",
        "state",
        "session_input",
        "app_name",
        "user_id",
        "creation_timestamp",
        "turns",
        "cases",
    ]
)

json_values = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(_KEYS | st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=40,
)


@st.composite
def mutated(draw: st.DrawFn, seed: Any) -> Any:
    """``seed`` with a few of its values replaced, deleted or retyped."""
    data = json.loads(json.dumps(seed))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        data = _mutate_once(draw, data)
    return data


def _mutate_once(draw: st.DrawFn, data: Any) -> Any:
    containers: list[tuple[Any, Any]] = []  # (container, key)
    stack = [data]
    while stack and len(containers) < 5000:
        node = stack.pop()
        if isinstance(node, dict):
            containers.extend((node, key) for key in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            containers.extend((node, index) for index in range(len(node)))
            stack.extend(node)
    if not containers:
        return draw(json_values)
    container, key = draw(st.sampled_from(containers))
    action = draw(st.sampled_from(["replace", "delete", "retype", "stringify"]))
    if action == "delete":
        del container[key]
    elif action == "replace":
        container[key] = draw(json_values)
    elif action == "retype":
        value = container[key]
        container[key] = [value] if not isinstance(value, list) else {"x": value}
    else:
        container[key] = json.dumps(container[key])
    return data
