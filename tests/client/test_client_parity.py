"""Client and AsyncClient are one API: the same public methods, with the same parameters
(names, kinds, defaults), the async ones awaitable (or async iterators, for lists), and every
method of both documented. Any drift between the two fails here."""

from __future__ import annotations

import inspect
from typing import Any

from platform_eval.client import AsyncClient, Client


def _public(cls: type) -> dict[str, Any]:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and callable(member) and not isinstance(member, type)
    }


def _parameters(method: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]


def test_both_clients_have_the_same_methods_and_parameters() -> None:
    sync, asynchronous = _public(Client), _public(AsyncClient)
    assert set(sync) - set(asynchronous) == {"to_async"}  # what the sync client becomes
    assert set(asynchronous) <= set(sync)
    for name in sorted(set(sync) & set(asynchronous)):
        assert _parameters(sync[name]) == _parameters(asynchronous[name]), name


def test_async_methods_are_awaitable_or_async_iterators() -> None:
    for name, method in _public(AsyncClient).items():
        if name in ("to_async", "with_options"):  # build a client: no I/O to await
            continue
        returns = str(inspect.signature(method).return_annotation)
        is_lister = "AsyncPager" in returns or "AsyncIterator" in returns
        assert (
            inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method) or (is_lister)
        ), name


def test_every_method_of_both_clients_is_documented() -> None:
    for cls in (Client, AsyncClient):
        undocumented = [n for n, m in _public(cls).items() if not (m.__doc__ or "").strip()]
        assert undocumented == [], f"{cls.__name__}: {undocumented}"
