"""What every command shares: exit codes, errors as one line, output files and formats."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .._env import positive_number

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

FORMATS = ("table", "json", "csv", "junit", "html", "markdown")
_BY_SUFFIX = {
    ".json": "json",
    ".csv": "csv",
    ".xml": "junit",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
}


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def error(message: str) -> None:
    print(f"platform-eval: error: {message}", file=sys.stderr)


def note(message: str, *, quiet: bool = False) -> None:
    if not quiet:
        print(f"platform-eval: {message}", file=sys.stderr)


def output_format(requested: str | None, output: str | None) -> str:
    """The format asked for, or the one the output file's suffix names, or a table."""
    if requested:
        return requested
    if output:
        return _BY_SUFFIX.get(Path(output).suffix.lower(), "table")
    return "table"


def emit(text: str, output: str | None) -> None:
    if output:
        path = Path(output)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


#: Without a terminal (a CI log), a progress line at most this often, in seconds.
PROGRESS_EVERY_ENV = "PLATFORM_EVAL_PROGRESS_SECONDS"
DEFAULT_PROGRESS_EVERY = 30.0


class Every:
    """True once per interval: a log's progress lines, not one per item."""

    def __init__(self) -> None:
        self.seconds = positive_number(PROGRESS_EVERY_ENV, DEFAULT_PROGRESS_EVERY)
        self.last = time.monotonic()

    def due(self) -> bool:
        now = time.monotonic()
        if now - self.last < self.seconds:
            return False
        self.last = now
        return True
