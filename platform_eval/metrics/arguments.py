"""Per-argument rules for comparing values: tool call arguments (``args_match`` on the
trajectory criteria) and session state (``keys_match`` on ``final_session_state_match``).

A rule is ``"exact"`` (JSON equality as ADK compares: deep, ``1 == 1.0``, ``"1" != 1``; the
default), ``"ignore"``, ``"contains"`` (the golden string within the actual one, ignoring case),
``"case_insensitive"``, ``{"regex": P}`` (the actual value matches P whole, within
``REGEX_SECONDS``: a pattern that backtracks for ever on a value is an error naming it, not a
hung case) or ``{"tolerance": X}`` (numbers within X). Rules are keyed by dotted paths into
nested objects; a rule on an object applies to all of it. Beyond ADK, and off unless
configured: without rules a comparison is ADK's exactly.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The ``re`` syntax, with a time limit on a match (``re`` has none: a nested quantifier such as
# ``(a+)+$`` on a long value ran until the case was killed).
import regex

from ._spec import MetricError

#: The longest one regex rule may take on one value.
REGEX_SECONDS = 1.0

RULE_NAMES = ("exact", "ignore", "contains", "case_insensitive", "regex", "tolerance")


@dataclass(frozen=True)
class Rule:
    kind: str
    #: The compiled pattern of a regex rule, the bound of a tolerance rule.
    pattern: Any = None
    tolerance: float = 0.0

    def describe(self) -> str:
        if self.kind == "regex":
            assert self.pattern is not None
            return f"regex {self.pattern.pattern}"
        if self.kind == "tolerance":
            return f"tolerance {self.tolerance:g}"
        return self.kind

    def matches(self, actual: Any, expected: Any) -> bool:
        kind = self.kind
        if kind == "ignore":
            return True
        if kind == "exact":
            return bool(actual == expected)
        if kind in ("contains", "case_insensitive"):
            if not isinstance(actual, str) or not isinstance(expected, str):
                return False
            if kind == "contains":
                return expected.casefold() in actual.casefold()
            return actual.casefold() == expected.casefold()
        if kind == "regex":
            assert self.pattern is not None
            text = actual if isinstance(actual, str) else json.dumps(actual)
            try:
                return self.pattern.fullmatch(text, timeout=REGEX_SECONDS) is not None
            except TimeoutError:
                raise MetricError(
                    f"regex {self.pattern.pattern!r} took over {REGEX_SECONDS:g} s on a value "
                    f"of {len(text)} characters (it backtracks without end on it): simplify "
                    "the pattern"
                ) from None
        # tolerance
        if not _number(actual) or not _number(expected):
            return False
        return math.isfinite(actual) and abs(actual - expected) <= self.tolerance


_NAMED_RULES = ("exact", "ignore", "contains", "case_insensitive")
EXACT = Rule("exact")
IGNORE = Rule("ignore")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_rule(raw: Any, where: str) -> Rule:
    """One rule as a config gives it; MetricError naming ``where`` for anything else."""
    if isinstance(raw, str):
        if raw in _NAMED_RULES:
            return Rule(raw)
        close = difflib.get_close_matches(raw, _NAMED_RULES, n=1, cutoff=0.6)
        raise MetricError(
            f"{where}: unknown rule {raw!r}"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + "; rules: exact, ignore, contains, case_insensitive, "
            '{"regex": PATTERN}, {"tolerance": NUMBER}'
        )
    if isinstance(raw, dict) and len(raw) == 1:
        ((kind, value),) = raw.items()
        if kind == "regex":
            if not isinstance(value, str):
                raise MetricError(f"{where}: a regex rule takes a pattern string")
            try:
                return Rule("regex", pattern=regex.compile(value, flags=regex.VERSION0))
            except regex.error as exc:
                raise MetricError(f"{where}: regex {value!r} does not compile: {exc}") from None
        if kind == "tolerance":
            if not _number(value) or not math.isfinite(value) or value < 0:
                raise MetricError(f"{where}: a tolerance is a number 0 or more, got {value!r}")
            return Rule("tolerance", tolerance=float(value))
    raise MetricError(
        f"{where}: unknown rule {raw!r}; rules: exact, ignore, contains, case_insensitive, "
        '{"regex": PATTERN}, {"tolerance": NUMBER}'
    )


def parse_rules(raw: Any, where: str) -> dict[str, Rule]:
    """``{dotted.path: rule}``."""
    if not isinstance(raw, dict):
        raise MetricError(f"{where}: expected an object of argument path -> rule")
    return {str(path): parse_rule(rule, f"{where}.{path}") for path, rule in raw.items()}


@dataclass(frozen=True)
class Mismatch:
    """The first value that did not match: its dotted path, the rule, and how."""

    path: str
    rule: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why} ({self.rule})"


@dataclass(frozen=True)
class ValueRules:
    """Rules by dotted path, and what to do with values the golden one does not have."""

    rules: Mapping[str, Rule] = field(default_factory=dict)
    extra: str = "fail"

    def compare(self, actual: Any, expected: Any, prefix: str = "") -> Mismatch | None:
        """The first mismatch of ``actual`` against ``expected`` (objects compared key by key,
        in the golden object's order, then its extra keys), or None when they match."""
        return self._compare(actual, expected, prefix)

    def _rule(self, path: str) -> Rule | None:
        return self.rules.get(path)

    def _compare(self, actual: Any, expected: Any, path: str) -> Mismatch | None:
        rule = self._rule(path) if path else None
        if rule is not None:
            if rule.matches(actual, expected):
                return None
            return Mismatch(path, rule.describe(), f"{_show(actual)} vs {_show(expected)}")
        if isinstance(expected, dict) and isinstance(actual, dict):
            for key, want in expected.items():
                child = f"{path}.{key}" if path else str(key)
                if key not in actual:
                    if (self._rule(child) or EXACT).kind == "ignore":
                        continue
                    return Mismatch(child, (self._rule(child) or EXACT).describe(), "missing")
                found = self._compare(actual[key], want, child)
                if found is not None:
                    return found
            if self.extra == "fail":
                for key in actual:
                    child = f"{path}.{key}" if path else str(key)
                    if key not in expected and (self._rule(child) or EXACT).kind != "ignore":
                        return Mismatch(child, "extra_args fail", "not expected")
            return None
        if actual == expected:
            return None
        return Mismatch(path or "$", "exact", f"{_show(actual)} vs {_show(expected)}")

    def leaves(self, expected: Any, path: str = "") -> list[str]:
        """The golden object's leaf paths that count: those under no ``ignore`` rule (a path
        with a rule of its own is one leaf)."""
        rule = self._rule(path) if path else None
        if rule is not None:
            return [] if rule.kind == "ignore" else [path]
        if isinstance(expected, dict) and expected:
            out: list[str] = []
            for key, value in expected.items():
                out += self.leaves(value, f"{path}.{key}" if path else str(key))
            return out
        return [path] if path else []

    def leaf_value(self, data: Any, path: str) -> tuple[bool, Any]:
        node = data
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return False, None
            node = node[part]
        return True, node

    def matches_at(self, actual: Any, expected: Any, path: str) -> Mismatch | None:
        """One golden leaf against the same path of ``actual``."""
        found, value = self.leaf_value(actual, path)
        _, want = self.leaf_value(expected, path)
        rule = self._rule(path) or EXACT
        if not found:
            return Mismatch(path, rule.describe(), "missing")
        if isinstance(want, dict) and isinstance(value, dict) and self._rule(path) is None:
            return ValueRules(self.rules, "ignore").compare(value, want, path)
        if rule.matches(value, want):
            return None
        return Mismatch(path, rule.describe(), f"{_show(value)} vs {_show(want)}")


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class ArgRules:
    """``args_match`` and ``extra_args`` of a trajectory criterion: per tool (``"*"`` for every
    tool, a tool's own rule winning for the same argument)."""

    by_tool: Mapping[str, Mapping[str, Rule]]
    extra: str = "fail"

    @classmethod
    def parse(cls, args_match: Any, extra_args: Any, where: str = "args_match") -> ArgRules | None:
        """None when neither is given: the comparison is then ADK's, exactly."""
        if args_match is None and extra_args in (None, "fail"):
            return None
        if extra_args not in (None, "fail", "ignore"):
            raise MetricError(f"extra_args: expected 'fail' or 'ignore', got {extra_args!r}")
        by_tool: dict[str, dict[str, Rule]] = {}
        if args_match is not None:
            if not isinstance(args_match, dict):
                raise MetricError(f"{where}: expected an object of tool name (or '*') -> rules")
            for tool, rules in args_match.items():
                by_tool[str(tool)] = parse_rules(rules, f"{where}.{tool}")
        return cls(by_tool, extra_args or "fail")

    def for_tool(self, name: str) -> ValueRules:
        merged = {**self.by_tool.get("*", {}), **self.by_tool.get(name, {})}
        return ValueRules(merged, self.extra)

    def compare(self, name: str, actual: Any, expected: Any) -> Mismatch | None:
        return self.for_tool(name).compare(actual or {}, expected or {})
