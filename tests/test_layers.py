"""The package's layers point down (docs/development.md, "Layers"): no module imports, when it
is imported, one that imports it back, and no layer imports one above it, when it is imported
or later (an import inside a function is an arrow too). Read from the source (under
TYPE_CHECKING only types are imported), so that a circle or an upward import fails here before
it fails someone's import order."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "platform_eval"

#: What each layer may import of ours at import time (besides itself, the package's private
#: top-level helpers, ``platform_eval._*``, and its errors, ``platform_eval.errors``).
ALLOWED = {
    "types": set(),
    "formats": {"types"},
    "traces": {"types", "formats"},
    "metrics": {"types", "formats", "traces"},
    "client": {"types"},
    "judges": {"types", "metrics"},
    "agents": {"types", "formats", "traces", "metrics"},
    "emulator": {"types", "formats", "traces", "metrics", "judges", "errors", "target", "lro"},
    "results": {"types", "formats", "metrics", "client"},
    "jobs": {"types", "formats", "traces", "metrics", "client", "agents", "results", "judges"},
    "lro": {"types"},
    "target": {"client", "emulator"},
}

#: Arrows up that run only when called, each for its reason (docs/development.md, "Layers").
CALLED_ONLY = {
    # The emulator's client() and async_client() conveniences, for tests and notebooks.
    "platform_eval.emulator.server -> platform_eval.client",
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _type_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``: imported for annotations, never run."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _imports(name: str, anywhere: bool = False) -> set[str]:
    """The modules of ours ``name`` imports when it is imported (``anywhere``: or later,
    inside a function)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_only(tree)
    for node in ast.walk(tree) if anywhere else tree.body:
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            found.update(subs if len(subs) == len(node.names) else [target, *subs])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: _imports(name) for name in MODULES}
CALLS = {name: _imports(name, anywhere=True) for name in MODULES}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_the_import_graph_is_read() -> None:
    assert GRAPH["platform_eval.jobs.plan"] and len(MODULES) > 150


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert _circles(GRAPH) == []


def test_no_module_imports_one_that_imports_it_back_even_later() -> None:
    # A lazy import that closes a circle hides an order the modules depend on: the base of
    # the clients once made an AsyncClient, the api_server's connection the Agent Runtime's app.
    assert _circles(CALLS) == []


def test_every_package_and_module_of_ours_has_a_layer() -> None:
    layers = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    unplaced = layers - set(ALLOWED) - {"cli", "pytest_plugin", "errors", "client"}
    assert sorted(u for u in unplaced if not u.startswith("_")) == []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
@pytest.mark.parametrize("when", ["imported", "called"])
def test_a_layer_imports_only_the_layers_below_it(layer: str, when: str) -> None:
    graph = GRAPH if when == "imported" else CALLS
    upward = sorted(
        f"{name} -> {other}"
        for name, imported in graph.items()
        if name.startswith(f"platform_eval.{layer}")
        for other in imported
        if not other.startswith(
            (f"platform_eval.{layer}", "platform_eval._", "platform_eval.errors")
        )
        and other.split(".")[1] not in ALLOWED[layer]
        and f"{name} -> {other}" not in CALLED_ONLY
    )
    assert upward == []
