"""A walk through what a model's field holds, down to the models inside, with JSON paths; and,
from the models' annotations, which fields can hold the models a walk looks for."""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any

from ..types import WireModel


def within(
    value: Any, path: str, visit: Callable[[WireModel, str], Iterator[str]]
) -> Iterator[str]:
    """What ``visit`` yields for each model ``value`` is or holds (through lists and maps),
    given the model and its JSON path (``a.b[0]``, ``a.c['key']``)."""
    for model, at in models_within(value, path):
        yield from visit(model, at)


def models_within(
    value: Any, path: str, out: list[tuple[WireModel, str]] | None = None
) -> list[tuple[WireModel, str]]:
    """The models ``value`` is or holds (through lists and maps), with their JSON paths, in
    order; appended to ``out`` when given (a walk that keeps its own list)."""
    found = [] if out is None else out
    if isinstance(value, WireModel):
        found.append((value, path))
    elif isinstance(value, list):
        for index, element in enumerate(value):
            models_within(element, f"{path}[{index}]", found)
    elif isinstance(value, dict):
        for key, element in value.items():
            models_within(element, f"{path}[{key!r}]", found)
    return found


def models_in(
    annotation: Any, steps: tuple[str, ...] = ()
) -> Iterator[tuple[type[WireModel], tuple[str, ...]]]:
    """Our models an annotation holds, each with the ``*`` steps (lists, maps) down to it."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from models_in(typing.get_args(annotation)[0], steps)
    elif origin is typing.Union or origin is types.UnionType:
        for arg in typing.get_args(annotation):
            yield from models_in(arg, steps)
    elif origin in (list, dict):
        yield from models_in(typing.get_args(annotation)[-1], (*steps, "*"))
    elif isinstance(annotation, type) and issubclass(annotation, WireModel):
        yield annotation, steps


@functools.cache
def _reachable(model: type[WireModel]) -> frozenset[type[WireModel]]:
    """``model`` and every model its fields hold, however deep."""
    seen: set[type[WireModel]] = set()
    todo: list[type[WireModel]] = [model]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for field in current.model_fields.values():
            todo.extend(inner for inner, _ in models_in(field.annotation))
    return frozenset(seen)


@functools.cache
def fields_holding(model: type[WireModel], names: frozenset[str]) -> frozenset[str]:
    """The fields of ``model`` that can hold, however deep, a model whose class is named in
    ``names``: a walk looking for those need not enter the others (free text, JSON maps, the
    genai types)."""
    return frozenset(
        name
        for name, field in model.model_fields.items()
        if any(
            other.__name__ in names
            for inner, _ in models_in(field.annotation)
            for other in _reachable(inner)
        )
    )
