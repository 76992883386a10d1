"""Reading a local file safely: a regular file only (a FIFO, a device or a socket would hang
or never end), at most a bounded size (parsed JSON takes many times its bytes in memory), as
UTF-8 text; every refusal a FormatError naming the file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from .._env import mebibytes
from ._problems import FormatError, Problem


def read_text(path: str | Path, *, limit_size: bool = True) -> str:
    """A file's text (UTF-8, a BOM dropped). FormatError naming the file when it cannot be
    read, is not a regular file, or is above ``max_file_bytes()`` (with ``limit_size``; the
    larger ``max_stream_bytes()`` otherwise: a file read a case at a time)."""
    data = read_bytes(path, max_file_bytes() if limit_size else max_stream_bytes())
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError([Problem(str(path), "$", f"cannot read: {exc}")]) from None


def read_bytes(path: str | Path, limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them; FormatError naming the file for a
    FIFO, a device or a socket (reading one would hang, or never end), or a file above it."""
    file = str(path)
    try:
        # Non-blocking: opening a FIFO with no writer would otherwise wait forever.
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise FormatError([Problem(file, "$", "no such file")]) from None
    except OSError as exc:
        raise FormatError([Problem(file, "$", f"cannot read: {exc}")]) from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a folder"
                if stat.S_ISDIR(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "not a regular file"
            )
            raise FormatError(
                [Problem(file, "$", f"is {kind}: platform-eval reads only regular files")]
            )
        if os.fstat(fd).st_size > limit:
            raise FormatError([Problem(file, "$", _too_big(limit))])
        try:
            data = _read_at_most(handle, os.fstat(fd).st_size, limit)
        except OSError as exc:
            raise FormatError([Problem(file, "$", f"cannot read: {exc}")]) from None
    if len(data) > limit:
        raise FormatError([Problem(file, "$", _too_big(limit))])
    return data


def _read_at_most(handle: BinaryIO, size: int, limit: int) -> bytes:
    """The file's bytes, and one more than ``limit`` if it has them. Read by its size, not
    the limit: ``read(n)`` makes room for ``n`` bytes first, half a gigabyte for every small
    file; read on, a piece at a time, if the file grew since."""
    first = handle.read(size + 1)
    if len(first) <= size:
        return first
    pieces, total = [first], len(first)
    while total <= limit:
        piece = handle.read(min(_PIECE, limit + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
    return b"".join(pieces)


_PIECE = 2**22


def _too_big(limit: int) -> str:
    return (
        f"more than the {limit / 2**20:g} MiB platform-eval reads at once (parsed, it would take "
        f"about {25 * limit / 2**30:.1f} GiB of memory or more): split the file, or set "
        f"{MAX_FILE_MB_ENV} ({MAX_STREAM_MB_ENV} for an eval set an upload reads a case at a "
        "time) to raise the limit"
    )


#: Parsed JSON takes 10-25 times the file's size in memory (and converting it as much again):
#: files above this are refused with a message rather than exhausting the machine.
MAX_FILE_MB_ENV = "PLATFORM_EVAL_MAX_FILE_MB"
DEFAULT_MAX_FILE_MB = 32
#: An eval set an upload reads a case at a time holds only its text and a few cases in memory.
MAX_STREAM_MB_ENV = "PLATFORM_EVAL_MAX_STREAM_MB"
DEFAULT_MAX_STREAM_MB = 512


def max_file_bytes() -> int:
    return mebibytes(MAX_FILE_MB_ENV, DEFAULT_MAX_FILE_MB)


def max_stream_bytes() -> int:
    return mebibytes(MAX_STREAM_MB_ENV, DEFAULT_MAX_STREAM_MB)
