"""A walk through what a model's field holds, down to the models inside, with JSON paths."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..types import WireModel


def within(
    value: Any, path: str, visit: Callable[[WireModel, str], Iterator[str]]
) -> Iterator[str]:
    """What ``visit`` yields for each model ``value`` is or holds (through lists and maps),
    given the model and its JSON path (``a.b[0]``, ``a.c['key']``)."""
    if isinstance(value, WireModel):
        yield from visit(value, path)
    elif isinstance(value, list):
        for index, element in enumerate(value):
            yield from within(element, f"{path}[{index}]", visit)
    elif isinstance(value, dict):
        for key, element in value.items():
            yield from within(element, f"{path}[{key!r}]", visit)
