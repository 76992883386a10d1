"""User data made safe for each output: a terminal, XML, a spreadsheet.

Case ids, candidate names, explanations and rubric reasoning come from users' files and from
agents' answers. On a terminal an escape sequence in them would restyle or rewrite the screen
(and a ``[/]`` would be read as rich markup); XML 1.0 forbids most control characters, so one
of them makes a JUnit file unreadable; a spreadsheet runs a cell that starts with ``=``, ``+``,
``-`` or ``@`` as a formula (OWASP's CSV injection).
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL and the C1 controls (ESC among them), and the bidi
# overrides and isolates that make text read in another order than it is stored (a right-to-left
# override reverses what follows it on screen): shown, not sent.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
# Markdown's and HTML's own characters: in a report they are text, never a link, an image, a
# tag or emphasis (a case id of `<img src=x>` or `[click](https://...)` stays what it says).
# Inside a table cell only inline syntax acts: code spans, emphasis, links and images, strike,
# the cell separator (block markers such as `#` or `-` do not, and snake_case stays readable).
_MARKDOWN = re.compile(r"[\\`*\[\]!|~]")
_HTML = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
# What XML 1.0 allows: tab, newline, carriage return, and the rest of Unicode but surrogates
# and U+FFFE/U+FFFF.
_NOT_XML = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters written out (``\\x1b``), never sent to the terminal."""
    return _CONTROL.sub(_shown, text)


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 forbids written out, so the document parses."""
    return _NOT_XML.sub(_shown, text)


def spreadsheet_cell(value: object) -> object:
    """A text cell that a spreadsheet would run as a formula, quoted to be read as text; and
    every line of it, since a reader that takes a carriage return for the end of a row would
    start a new cell there (line breaks are written as newlines, never a bare carriage
    return)."""
    if not isinstance(value, str):
        return value
    text = value.replace("\r\n", "\n").replace("\r", "\n")
    if text is value and not text.startswith(_FORMULA_START) and "\n" not in text:
        return value
    return "\n".join(
        "'" + line if line.startswith(_FORMULA_START) else line for line in text.split("\n")
    )


def no_bidi(text: str) -> str:
    """``text`` with bidi overrides and isolates written out: for a whole HTML document, where
    an entity would still be obeyed by the browser."""
    return _BIDI.sub(_shown, text)


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown table-cell text: controls written out, one line, and every
    character Markdown or HTML would act on escaped."""
    flat = printable(text).replace("\r", " ").replace("\n", " ")
    escaped = "".join(_HTML.get(char, char) for char in flat)
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), escaped)
