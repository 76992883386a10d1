"""AIP-160 list filters, as far as the service documents them, compiled to SQL over the
JSON body.

Grammar, with AIP-160's precedence (OR binds tighter than AND)::

    expression := sequence (AND sequence)*
    sequence   := factor factor*            (terms side by side: AND)
    factor     := term (OR term)*
    term       := [NOT | -] (comparison | "(" expression ")")
    comparison := field (= | != | < | <= | > | >= | :) value

Fields are dotted paths in snake_case or camelCase; ``labels.<key>`` addresses a label;
``evaluation_response.evaluation_run`` (or ``evaluation_run`` for short) matches a RESULT
item's run wherever its payload is kept. Values are quoted strings, numbers, booleans or bare
words (enum values); a timestamp (RFC 3339) compares as a time, whatever its offset. ``:`` is
"has": presence for ``*``, membership for lists, equality for scalars. Anything else is an
error that says what was expected.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic.alias_generators import to_camel

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<op><=|>=|!=|=|<|>|:)
      | (?P<paren>[()])
      | (?P<word>[A-Za-z0-9_.\-/+*]+)
    )""",
    re.VERBOSE,
)

# A RESULT item names its run inside an inline evaluationResponse; one whose payload is in
# Cloud Storage does not, and the emulator keeps its run beside it (``annotations``, never
# part of the resource): `evaluation_run` looks at both.
_RUN_SQL = (
    "COALESCE(json_extract(body, '$.evaluationResponse.evaluationRun'), "
    "json_extract(annotations, '$.evaluationRun'))"
)
_SHORTCUTS = {
    name: _RUN_SQL
    for name in (
        "evaluation_run",
        "evaluationRun",
        "evaluation_response.evaluation_run",
        "evaluationResponse.evaluationRun",
    )
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


def _value_sql(field: str) -> tuple[str, list[Any]]:
    """SQL for a field's value in the JSON body, and its arguments."""
    if field in _SHORTCUTS:
        return _SHORTCUTS[field], []
    return "json_extract(body, ?)", [_json_path(field)]


def _json_path(field: str) -> str:
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


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "*": "*"}
#: SQLite's integers are 64-bit signed.
_INT64 = range(-(2**63), 2**63)


def _unescape(body: str) -> str:
    def replace(match: re.Match[str]) -> str:
        hex4, hex2, char = match.groups()
        if hex4 or hex2:
            code = int(hex4 or hex2, 16)
            if 0xD800 <= code <= 0xDFFF:
                raise FilterError(f"\\u{hex4} is a lone UTF-16 surrogate")
            return chr(code)
        if char in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[char]
        if char in "ux":
            digits = 4 if char == "u" else 2
            raise FilterError(f"\\{char} in a filter string needs {digits} hex digits")
        raise FilterError(f"unknown escape \\{char} in a filter string")

    return _ESCAPE.sub(replace, body)


def _value(kind: str, raw: str) -> Any:
    if kind == "string":
        return _unescape(raw[1:-1])
    if re.fullmatch(r"-?\d+", raw):
        number = int(raw)
        if number not in _INT64:
            raise FilterError(f"integer {raw} is out of the 64-bit range")
        return number
    if re.fullmatch(r"-?\d+\.\d*", raw):
        return float(raw)
    if raw in ("true", "false"):
        return raw == "true"
    return raw


def _check_field(field: str, known: frozenset[str] | None, where: str = "the filter") -> None:
    # AIP-160: a filter on a field the resource does not have is an error, not an empty list.
    if known is None or field in _SHORTCUTS:
        return
    head = field.split(".", 1)[0]
    if to_camel(head) not in known:
        raise FilterError(
            f"unknown field {head!r} in {where}; fields of this resource: {sorted(known)}"
        )


_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
_SQL_OPS = {"=": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Parser:
    """Recursive descent over the tokens, writing SQL as it goes."""

    def __init__(self, text: str, known: frozenset[str] | None) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.position = 0
        self.known = known
        self.args: list[Any] = []
        self.depth = 0
        self.comparisons = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise FilterError(f"incomplete filter {self.text!r}: expected `field = value`")
        self.position += 1
        return token

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token is not None and token[0] == "word" and token[1] == word:
            self.position += 1
            return True
        return False

    def expression(self) -> str:
        parts = [self.sequence()]
        while self.keyword("AND"):
            parts.append(self.sequence())
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def sequence(self) -> str:
        parts = [self.factor()]
        while (token := self.peek()) is not None and not (
            token == ("paren", ")") or token in (("word", "AND"), ("word", "OR"))
        ):
            parts.append(self.factor())
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def factor(self) -> str:
        parts = [self.term()]
        while self.keyword("OR"):
            parts.append(self.term())
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def term(self) -> str:
        negated = self.keyword("NOT")
        token = self.peek()
        if token is not None and token[0] == "word" and token[1].startswith("-") and not negated:
            # `-field = x` negates, as NOT does; `-1` alone is a value, never a field here.
            self.tokens[self.position] = ("word", token[1][1:])
            negated = True
        if self.peek() == ("paren", "("):
            self.position += 1
            self.depth += 1
            if self.depth > MAX_FILTER_DEPTH:
                raise FilterError(f"the filter nests parentheses more than {MAX_FILTER_DEPTH} deep")
            inner = self.expression()
            self.depth -= 1
            if self.peek() != ("paren", ")"):
                raise FilterError(f"expected `)` in filter {self.text!r}")
            self.position += 1
        else:
            inner = self.comparison()
        return f"(NOT COALESCE({inner}, 0))" if negated else inner

    def comparison(self) -> str:
        self.comparisons += 1
        if self.comparisons > MAX_FILTER_COMPARISONS:
            raise FilterError(
                f"the filter has more than {MAX_FILTER_COMPARISONS} comparisons: split it"
            )
        fkind, field = self.take()
        if fkind != "word" or field in ("AND", "OR", "NOT"):
            raise FilterError(f"expected a field name in filter {self.text!r}, found {field!r}")
        okind, op = self.take()
        if okind != "op":
            raise FilterError(
                f"expected a comparator (=, !=, <, <=, >, >=, :) after {field!r} in filter "
                f"{self.text!r}"
            )
        vkind, raw = self.take()
        if vkind not in ("string", "word"):
            raise FilterError(f"expected a value after `{field} {op}` in filter {self.text!r}")
        _check_field(field, self.known)
        return self._sql(field, op, _value(vkind, raw))

    def _sql(self, field: str, op: str, value: Any) -> str:
        expr, expr_args = _value_sql(field)
        if isinstance(value, bool):
            value = 1 if value else 0
        if op == ":":
            if value == "*":
                self.args.extend(expr_args)
                return f"({expr} IS NOT NULL)"
            if not expr_args:
                # A field the emulator reads from more than one place (the run of a result):
                # one value, never a list, so "has" is equality.
                self.args.append(value)
                return f"({expr} = ?)"
            path = expr_args[-1]
            self.args.extend([*expr_args, value, path, value])
            return f"({expr} = ? OR EXISTS (SELECT 1 FROM json_each(body, ?) WHERE value = ?))"
        if isinstance(value, str) and _TIMESTAMP.fullmatch(value):
            # A time, whatever its offset or its number of fractional digits.
            self.args.extend([*expr_args, value])
            return f"(julianday({expr}) {_SQL_OPS[op]} julianday(?))"
        if op == "!=":
            self.args.extend([*expr_args, *expr_args, value])
            return f"({expr} IS NULL OR {expr} != ?)"
        self.args.extend([*expr_args, value])
        return f"({expr} {_SQL_OPS[op]} ?)"


#: How deep a filter's parentheses may nest, and how many comparisons it may hold: bounds that
#: keep a hostile filter a 400 (not the parser's recursion, or SQLite's expression depth).
MAX_FILTER_DEPTH = 32
MAX_FILTER_COMPARISONS = 200


def compile_filter(text: str | None, known: frozenset[str] | None = None) -> tuple[str, list[Any]]:
    """SQL condition and its arguments for a filter expression (empty for no filter).

    ``known``: the resource's fields (camelCase); a filter on another one is refused."""
    if not text or not text.strip():
        return "", []
    parser = _Parser(text, known)
    sql = parser.expression()
    if parser.peek() is not None:
        _, word = parser.peek() or ("", "")
        raise FilterError(f"unexpected {word!r} in filter {text!r}")
    return sql, parser.args


_ORDER_TERM = re.compile(r"\s*([A-Za-z0-9_.]+)(?:\s+(asc|desc))?\s*", re.IGNORECASE)


def compile_order(text: str | None, known: frozenset[str] | None = None) -> tuple[str, list[Any]]:
    """SQL ``ORDER BY`` terms and their arguments for an AIP-132 ``orderBy`` (empty for none).

    ``field [asc|desc]`` joined by commas; fields as in filters. Ties keep creation order.
    """
    if not text or not text.strip():
        return "", []
    terms: list[str] = []
    args: list[Any] = []
    for raw in text.split(","):
        match = _ORDER_TERM.fullmatch(raw)
        if not match:
            raise FilterError(f"cannot parse orderBy term {raw.strip()!r}: expected `field [desc]`")
        field, direction = match.groups()
        _check_field(field, known, "orderBy")
        expr, expr_args = _value_sql(field)
        terms.append(f"{expr} {'DESC' if (direction or '').lower() == 'desc' else 'ASC'}")
        args.extend(expr_args)
    return ", ".join(terms), args
