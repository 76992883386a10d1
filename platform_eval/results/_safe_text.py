"""User data made safe for each output: a terminal, XML, a spreadsheet.

Case ids, candidate names, explanations and rubric reasoning come from users' files and from
agents' answers. On a terminal an escape sequence in them would restyle or rewrite the screen
(and a ``[/]`` would be read as rich markup); XML 1.0 forbids most control characters, so one
of them makes a JUnit file unreadable; a spreadsheet runs a cell that starts with ``=``, ``+``,
``-`` or ``@`` as a formula (OWASP's CSV injection).
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL and the C1 controls (ESC among them): shown, not sent.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What XML 1.0 allows: tab, newline, carriage return, and the rest of Unicode but surrogates
# and U+FFFE/U+FFFF.
_NOT_XML = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _shown(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


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
