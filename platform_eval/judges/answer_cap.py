"""A judge model's answer, read no further than a judge could need.

google-genai reads an answer whole before our check of its length: a 300 MB answer cost 813 MB
for one call. The judges' google-genai client sends its requests through this transport, which
asks for the answer unencoded (a compressed answer is the same bytes in memory once decoded)
and stops reading at ``MAX_ANSWER_BYTES``, refusing an answer that announces more before any of
it is read.
"""

from __future__ import annotations

import httpx

from .._capped_transport import CappedTransport

#: The longest model answer read: a judge's text is at most MAX_ANSWER_CHARS (1 Mi characters,
#: up to 4 bytes each), with room for its JSON envelope and escapes.
MAX_ANSWER_BYTES = 8 << 20


class AnswerTooLargeError(Exception):
    """The model's answer is longer than any judge answer: not read further."""


class AnswerCap(CappedTransport):
    """An httpx transport that stops reading an answer beyond ``limit`` bytes."""

    def __init__(
        self, limit: int = MAX_ANSWER_BYTES, inner: httpx.AsyncBaseTransport | None = None
    ) -> None:
        def refused(what: str) -> AnswerTooLargeError:
            if "encoded" in what:
                return AnswerTooLargeError(f"the answer {what}: not read")
            return AnswerTooLargeError(
                f"the model's answer {what}, more than the {limit:,} a judge answer may "
                "have: not read further"
            )

        super().__init__(limit, refused, inner)
