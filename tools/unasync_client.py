"""Generates ``platform_eval/_client_sync.py`` (``Client``) from ``_client_async.py``
(``AsyncClient``), as httpcore's unasync does: the two clients have the same methods, arguments
and documentation, so one is written and the other derived by replacing async words with sync
ones. ``tests/client/test_generated_client.py`` fails when the file is not what this makes.

    python tools/unasync_client.py          # rewrites the sync client
    python tools/unasync_client.py --check  # exit 1 when it is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "platform_eval"
SOURCE = PACKAGE / "_client_async.py"
TARGET = PACKAGE / "_client_sync.py"

HEADER = '''"""``Client``: flat methods over the evaluation resources.

Generated from ``_client_async.py`` by ``tools/unasync_client.py``: edit that file, then run
the tool. Each method is ``AsyncClient``'s, not awaited.
"""
'''

#: Whole-word replacements, in order (longer names first where one holds another).
WORDS = (
    ("AsyncResultReading", "SyncResultReading"),
    ("AsyncOperationFuture", "OperationFuture"),
    ("AsyncTransport", "SyncTransport"),
    ("AsyncIterator", "Iterator"),
    ("AsyncPager", "Pager"),
    ("AsyncClient", "Client"),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("aclose", "close"),
)
#: Plain text replacements: the async keywords, and what each client says of itself.
TEXT = (
    (
        "Asynchronous client. Use as an async context manager, or await ``close()``.",
        "Synchronous client. Use as a context manager, or call ``close()``.",
    ),
    ("async def ", "def "),
    ("async with ", "with "),
    ("async for ", "for "),
    ("await ", ""),
    ("asyncio.sleep(", "time.sleep("),
    ("import asyncio\n", "import time\n"),
)


#: What only the sync client has: the async client it becomes. Written here, not in the shared
#: base, so that the base never imports a client built on it (tests/test_layers.py).
SYNC_ONLY_IMPORT = ("from ._client_base import (", "from ._client_async import AsyncClient\n")
SYNC_ONLY_METHOD = (
    "    def __enter__(self) -> Client:",
    '''    def to_async(self) -> AsyncClient:
        """A new AsyncClient with this client's project, endpoint, credentials and retries.

        Jobs use it to run bulk work concurrently from a sync client; close it when done.
        """
        clone = AsyncClient(**self._options())
        clone._identity = self._identity
        return clone

''',
)


def generate(source: str) -> str:
    """The sync client's source for the async client's ``source``."""
    docstring_end = source.index('"""', 3) + 3
    body = source[docstring_end:].lstrip("\n")
    for old, new in TEXT:
        body = body.replace(old, new)
    for old, new in WORDS:
        body = re.sub(rf"\b{re.escape(old)}\b", new, body)
    for anchor, added in (SYNC_ONLY_IMPORT, SYNC_ONLY_METHOD):
        if body.count(anchor) != 1:
            raise SystemExit(f"tools/unasync_client.py: {anchor!r} is not once in the client")
        body = body.replace(anchor, added + anchor)
    return HEADER + "\n" + body


def main(argv: list[str]) -> int:
    made = generate(SOURCE.read_text(encoding="utf-8"))
    if "--check" in argv:
        if TARGET.read_text(encoding="utf-8") != made:
            print(f"{TARGET} is out of date: run python tools/unasync_client.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(made, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
