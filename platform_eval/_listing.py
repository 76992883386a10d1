"""A list method's answer kept as text, its entries decoded one at a time as they are read.

A page of RESULT items is over a megabyte of JSON and about eight times that once decoded into
Python objects, so a pull that decodes each page at once holds a page of objects (two, with the
next page prefetched) whatever its caller keeps. A ``Listing`` holds the page's text and where
each entry starts in it: the pull holds a page of text and the one entry being read.

Finding where entries start means decoding each once and dropping it (a JSON value's end is
only known by reading it); the entry is decoded again when it is read. Both are the json
module's C scanner, a few percent of a pull whose time goes to the network and the models.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_decoder = json.JSONDecoder()
_whitespace = re.compile(r"[ \t\n\r]*")


class Listing:
    """The top-level fields of a JSON object, with the list under ``key`` left undecoded."""

    def __init__(self, text: str, key: str) -> None:
        """Raises ValueError when ``text`` is not one JSON object (``json.loads``'s rules)."""
        self._text = text
        self._starts: list[int] = []
        self.fields: dict[str, Any] = {}
        try:
            self._scan(key)
        except IndexError:
            raise ValueError("the JSON ends early") from None

    def get(self, name: str, default: Any = None) -> Any:
        """A top-level field other than the listed one (``dict.get``'s contract)."""
        return self.fields.get(name, default)

    def entries(self) -> Iterator[Any]:
        """Each entry of the list, decoded as it is asked for."""
        for start in self._starts:
            yield _decoder.raw_decode(self._text, start)[0]

    def _scan(self, key: str) -> None:
        text = self._text
        at = self._expect(text, 0, "{")
        if text[at] == "}":
            self._end(text, at + 1)
            return
        while True:
            name, at = _decoder.raw_decode(text, at)
            if not isinstance(name, str):
                raise ValueError(f"an object key that is not a string at character {at}")
            at = self._expect(text, self._skip(text, at), ":")
            if name == key and text[at] == "[":
                self._starts = []
                at = self._scan_list(text, self._skip(text, at + 1))
            else:
                self.fields[name], at = _decoder.raw_decode(text, at)
            at = self._skip(text, at)
            if text[at] == "}":
                self._end(text, at + 1)
                return
            at = self._expect(text, at, ",")

    def _scan_list(self, text: str, at: int) -> int:
        """Records where each entry starts; returns the index after the closing bracket."""
        if text[at] == "]":
            return at + 1
        while True:
            self._starts.append(at)
            at = self._skip(text, _decoder.raw_decode(text, at)[1])
            if text[at] == "]":
                return at + 1
            at = self._expect(text, at, ",")

    @staticmethod
    def _skip(text: str, at: int) -> int:
        found = _whitespace.match(text, at)
        return found.end() if found else at

    @classmethod
    def _expect(cls, text: str, at: int, char: str) -> int:
        """The index of the value after ``char`` at ``at`` (whitespace skipped both sides)."""
        at = cls._skip(text, at)
        if text[at] != char:
            raise ValueError(f"expected {char!r} at character {at}")
        return cls._skip(text, at + 1)

    def _end(self, text: str, at: int) -> None:
        if self._skip(text, at) != len(text):
            raise ValueError(f"extra data after the object at character {at}")
