"""AIP-160 list filters, the subset the emulator serves, compiled to SQL over the JSON body.

Grammar: ``term (AND term)*`` where a term is ``field = value``, ``field != value`` or
``field : value`` (has / contains for lists). Fields are dotted paths in snake_case or
camelCase; ``labels.<key>`` addresses a label; ``evaluation_run`` is short for
``evaluation_response.evaluation_run``. Values are quoted strings, numbers or bare words
(enum values).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic.alias_generators import to_camel

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<op>!=|=|:)
      | (?P<word>[A-Za-z0-9_.\-/]+)
    )""",
    re.VERBOSE,
)

_SHORTCUTS = {
    "evaluation_run": "evaluationResponse.evaluationRun",
    "evaluationRun": "evaluationResponse.evaluationRun",
}


class FilterError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise FilterError(f"cannot parse filter at {text[pos:]!r}")
        pos = match.end()
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
    return out


def _json_path(field: str) -> str:
    field = _SHORTCUTS.get(field, field)
    parts = field.split(".")
    path: list[str] = []
    for index, part in enumerate(parts):
        if not part:
            raise FilterError(f"bad field {field!r}")
        if index > 0 and parts[index - 1] in ("labels", "metadata"):
            path.append('"' + part.replace('"', "") + '"')
        else:
            path.append(to_camel(part) if "_" in part else part)
    return "$." + ".".join(path)


def _value(kind: str, raw: str) -> Any:
    if kind == "string":
        return bytes(raw[1:-1], "utf-8").decode("unicode_escape")
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d*", raw):
        return float(raw)
    if raw in ("true", "false"):
        return raw == "true"
    return raw


def compile_filter(text: str | None) -> tuple[str, list[Any]]:
    """SQL condition and its arguments for a filter expression (empty for no filter)."""
    if not text or not text.strip():
        return "", []
    tokens = _tokens(text)
    clauses: list[str] = []
    args: list[Any] = []
    index = 0
    while True:
        if index + 3 > len(tokens):
            raise FilterError(f"incomplete filter {text!r}: expected `field = value`")
        (fkind, field), (okind, op), (vkind, raw) = tokens[index : index + 3]
        if fkind != "word" or okind != "op" or vkind not in ("string", "word"):
            raise FilterError(f"expected `field = value` in filter {text!r}")
        path = _json_path(field)
        value = _value(vkind, raw)
        if isinstance(value, bool):
            value = 1 if value else 0
        if op == "=":
            clauses.append("json_extract(body, ?) = ?")
            args.extend([path, value])
        elif op == "!=":
            clauses.append("(json_extract(body, ?) IS NULL OR json_extract(body, ?) != ?)")
            args.extend([path, path, value])
        else:
            # `:` means "has": membership for lists, equality for scalars, presence for "*".
            if value == "*":
                clauses.append("json_extract(body, ?) IS NOT NULL")
                args.append(path)
            else:
                clauses.append(
                    "(json_extract(body, ?) = ? OR EXISTS (SELECT 1 FROM json_each(body, ?) "
                    "WHERE value = ?))"
                )
                args.extend([path, value, path, value])
        index += 3
        if index == len(tokens):
            break
        kind, word = tokens[index]
        if kind != "word" or word.upper() != "AND":
            raise FilterError(f"only AND joins terms in filter {text!r}; found {word!r}")
        index += 1
    return " AND ".join(clauses), args
