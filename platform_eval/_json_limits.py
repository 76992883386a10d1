"""Checks that keep untrusted JSON from reaching code that cannot take it.

Python's json module accepts what other layers choke on: nesting deep enough to exhaust the
stack later (in validation or re-encoding), and ``\\ud800``-style escapes that decode to lone
UTF-16 surrogates, which cannot be written back as UTF-8. The emulator and the file loaders
both refuse them up front, with a message, instead of failing somewhere downstream.
"""

from __future__ import annotations

import math
import re
from typing import Any

from . import _env

#: Deeper than any format we read (an AgentData event is about 12 levels); protobuf's JSON
#: parser, and so the service, stops at 100 as well.
MAX_DEPTH = 100
#: Raises (or lowers) the nesting files and the emulator's bodies may have.
MAX_DEPTH_ENV = "PLATFORM_EVAL_MAX_JSON_DEPTH"
#: Beyond this, Python's own recursion limit (json, pydantic, re-encoding) is the one hit.
DEEPEST_ALLOWED = 500

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # high (d800-dbff) or low (dc00-dfff)


def max_depth() -> int:
    """The nesting allowed: ``PLATFORM_EVAL_MAX_JSON_DEPTH``, else 100."""
    return _env.whole_number(MAX_DEPTH_ENV, MAX_DEPTH, maximum=DEEPEST_ALLOWED)


def too_deep(limit: int) -> str:
    return (
        f"nested more than {limit} levels deep; no format or resource is ({MAX_DEPTH_ENV}, "
        "or the emulator's --max-json-depth, raises the limit)"
    )


LONE_SURROGATE = "holds an unpaired UTF-16 surrogate (a \\ud800-\\udfff escape): not valid Unicode"


def limit_problem(
    value: Any, text: str, depth: int | None = None, *, json_text: bool = True
) -> tuple[str, str] | None:
    """(JSON path, what is wrong) when parsed data breaks a limit, else None.

    ``text`` is what ``value`` was parsed from: surrogates are only looked for when it has an
    escape that could make one. ``depth`` is the nesting allowed (``max_depth()`` if None).
    ``json_text=False``: the text is not JSON (YAML nests by indentation, with no bracket).
    """
    limit = max_depth() if depth is None else depth
    # Each level of JSON nesting opens a bracket: JSON with few of them cannot nest too deep,
    # and counting them in C is much cheaper than walking the parsed value (every request body).
    few_brackets = json_text and text.count("{") + text.count("[") <= limit
    if not few_brackets and depth_exceeds(value, limit):
        return "$", too_deep(limit)
    where = lone_surrogate_path(value) if may_hold_surrogates(text) else None
    return (where, LONE_SURROGATE) if where is not None else None


def depth_exceeds(value: Any, limit: int) -> bool:
    """True when lists and objects nest more than ``limit`` levels (iterative: never recurses).

    Walked a level at a time, keeping only containers: every file load pays for this walk, and
    this is about twice as fast as tracking a depth per node.
    """
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            below += [child for child in children if type(child) is dict or type(child) is list]
        level = below
    return False


def may_hold_surrogates(text: str) -> bool:
    """A cheap pre-check on the JSON text: only escapes can produce lone surrogates."""
    return _SURROGATE_ESCAPE.search(text) is not None


def lone_surrogate_path(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first string (or key) holding an unpaired surrogate, else None."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if not _encodable(node):
                return where
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and not _encodable(key):
                    return where
                stack.append((child, f"{where}.{key}"))
        elif isinstance(node, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(node))
    return None


def non_finite_path(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first number that is not finite (NaN, or infinity from an
    overflowing literal such as ``1e999``), else None."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, float):
            if not math.isfinite(node):
                return where
        elif isinstance(node, dict):
            stack.extend((child, f"{where}.{key}") for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(
                (child, f"{where}[{index}]") for index, child in reversed(list(enumerate(node)))
            )
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def size_exceeds(value: Any, limit: int) -> bool:
    """True when ``value`` holds more than ``limit`` values once shared references (YAML
    aliases) are expanded; stops counting at the limit, so it is cheap on a "billion laughs"."""
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
