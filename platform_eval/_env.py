"""Limits and switches read from the environment, the same way everywhere.

A value that is not what the variable takes is a ConfigurationError naming the variable: a typo
(``PLATFORM_EVAL_MAX_FILE_MB=64MB``) must not quietly leave the default in force.
"""

from __future__ import annotations

import math
import os

from .errors import ConfigurationError


def positive_number(name: str, default: float) -> float:
    """The positive number ``name`` holds, else ``default`` when it is unset or blank."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise ConfigurationError(f"{name} must be a positive number, got {raw!r}")
    return value


def whole_number(name: str, default: int, *, maximum: int) -> int:
    """The whole number from 1 to ``maximum`` ``name`` holds, else ``default`` when it is unset
    or blank."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= maximum:
        raise ConfigurationError(f"{name} must be a whole number from 1 to {maximum}, got {raw!r}")
    return int(raw)


def mebibytes(name: str, default: float) -> int:
    """Bytes from a size in MiB that ``name`` holds (fractions allowed), else ``default`` MiB."""
    return bytes_in(positive_number(name, default))


def bytes_in(mib: float) -> int:
    """The bytes of a positive size in MiB: at least one, however small a fraction."""
    return max(1, int(mib * 2**20))
