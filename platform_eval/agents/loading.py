"""Finding the agent to run: what ``adk eval`` takes (a folder), or ``module:attribute``.

A folder is imported as ``adk eval`` imports it (its ``__init__.py`` as the package ``agent``,
or a lone ``agent.py``), and the agent found as ``adk eval`` finds it: the module's ``app``
when it is an ADK ``App`` (its plugins and caching take part), else ``root_agent``, else
``get_agent_async()``. ``module:attribute`` names an ``App``, an agent, or a function
returning one of them.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import PlatformEvalError


class AgentLoadError(PlatformEvalError):
    """The agent named could not be found or imported; the message says which and why."""


class AdkMissingError(AgentLoadError):
    """google-adk is not installed, and running an agent is google-adk's Runner."""


ADK_MISSING = (
    "running an agent needs google-adk (its Runner runs the agent as `adk eval` does): "
    "pip install 'platform-eval[adk]'"
)


@dataclass
class LoadedAgent:
    """An agent ready to run, with what identifies its code for resuming."""

    root_agent: Any
    app: Any | None
    name: str
    spec: str
    #: A hash of the agent's source files: a resumed run reuses sessions only of the same code.
    fingerprint: str
    reset: Callable[[], object] | None = None
    #: The longest one turn may take (None: the run's own timeout only, as adk eval has
    #: none); a peer over the network has one (``a2a``).
    turn_timeout: float | None = None
    #: Why a finished session holds no answer of the agent (a peer that failed: ``a2a``),
    #: or None when it answered; its case is then NOT_EVALUATED, never scored.
    unanswered: Callable[[dict[str, Any]], str | None] | None = None


def _require_adk() -> None:
    try:
        import google.adk  # noqa: F401
    except ImportError:
        raise AdkMissingError(ADK_MISSING) from None


def _import_file(module_name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise AgentLoadError(f"{path}: cannot be imported as a Python module")
    # A folder loaded before under the same name must not lend this one its submodules.
    for loaded in [m for m in sys.modules if m == module_name or m.startswith(module_name + ".")]:
        del sys.modules[loaded]
    module = importlib.util.module_from_spec(spec)
    # As adk eval does: the folder's package is `agent`, so `from . import agent` inside it
    # makes `agent.agent`, and `agent.root_agent` is found either way.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the agent's own code: say where, with its error
        raise AgentLoadError(
            f"{path}: importing the agent raised {type(exc).__name__}: {exc}"
        ) from exc
    return module


def _fingerprint(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(str(path.name).encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            continue
    return digest.hexdigest()[:16]


def _source_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.py") if "__pycache__" not in p.parts]


async def _from_module(module: Any, where: str) -> tuple[Any | None, Any]:
    """(app, root agent) of an imported agent module, as adk eval picks them."""
    from google.adk.apps.app import App

    inner = getattr(module, "agent", module)
    if not isinstance(inner, ModuleType):
        inner = module
    for holder in (inner, module):
        app = getattr(holder, "app", None)
        if isinstance(app, App):
            return app, app.root_agent
    for holder in (inner, module):
        if getattr(holder, "root_agent", None) is not None:
            return None, holder.root_agent
    for holder in (inner, module):
        factory = getattr(holder, "get_agent_async", None)
        if callable(factory):
            root_agent, _ = await factory()
            return None, root_agent
    raise AgentLoadError(
        f"{where}: defines no `root_agent` (nor an ADK `app`, nor `get_agent_async`); "
        "adk eval needs one of them in the agent module"
    )


async def _from_attribute(value: Any, where: str) -> tuple[Any | None, Any]:
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.apps.app import App

    if callable(value) and not isinstance(value, BaseAgent | App):
        value = value()
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, tuple):  # get_agent_async's (agent, exit stack)
            value = value[0]
    if isinstance(value, App):
        return value, value.root_agent
    if isinstance(value, BaseAgent):
        return None, value
    raise AgentLoadError(
        f"{where}: is a {type(value).__name__}, expected an ADK agent or App (or a function "
        "returning one)"
    )


def _load_dotenv(folder: Path) -> None:
    """The agent folder's `.env`, as adk eval loads it (explicit variables win)."""
    try:
        from google.adk.cli.utils import envs
    except ImportError:
        return
    envs.load_dotenv_for_agent(folder.name, str(folder.parent))


async def load_local_agent(spec: str | Path) -> LoadedAgent:
    """The agent of this machine ``spec`` names: an agent folder, an ``agent.py`` file or
    ``module:attr`` (``agents.load_agent`` also takes an A2A peer's card)."""
    _require_adk()
    spec = str(spec)
    path = Path(spec)
    if path.is_dir():
        folder = path.resolve()
        _load_dotenv(folder)
        init, agent_py = folder / "__init__.py", folder / "agent.py"
        if init.is_file():
            module = _import_file("agent", init)
        elif agent_py.is_file():
            module = _import_file("agent", agent_py)
        else:
            raise AgentLoadError(
                f"{spec}: an agent folder holds an __init__.py (as adk eval expects) or an "
                "agent.py that defines root_agent; this one has neither"
            )
        app, root = await _from_module(module, spec)
        fingerprint = _fingerprint(_source_files(folder))
        reset = _reset_function(module, spec)
    elif path.suffix == ".py" and path.is_file():
        module = _import_file("agent", path.resolve())
        app, root = await _from_module(module, spec)
        fingerprint, reset = _fingerprint([path.resolve()]), _reset_function(module, spec)
    elif ":" in spec and not path.exists():
        module_name, _, attribute = spec.partition(":")
        if str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the agent's own code: say where, with its error
            raise AgentLoadError(
                f"--agent {spec}: importing {module_name} raised {type(exc).__name__}: {exc}"
            ) from exc
        if not hasattr(module, attribute):
            raise AgentLoadError(f"--agent {spec}: module {module_name} has no {attribute!r}")
        app, root = await _from_attribute(getattr(module, attribute), spec)
        origin = Path(getattr(module, "__file__", "") or "")
        files = _source_files(origin.parent) if origin.name == "__init__.py" else [origin]
        fingerprint, reset = _fingerprint(files), _reset_function(module, spec)
    elif not path.exists() and ":" not in spec:
        near = (
            difflib.get_close_matches(
                path.name, [p.name for p in path.resolve().parent.glob("*") if p.is_dir()], n=1
            )
            if path.resolve().parent.is_dir()
            else []
        )
        hint = f" (did you mean {str(path.parent / near[0])!r}?)" if near else ""
        raise AgentLoadError(f"--agent {spec}: no such folder or file{hint}")
    else:
        raise AgentLoadError(
            f"--agent {spec}: expected an agent folder (what `adk eval` takes), an agent.py "
            "file, or module:attribute"
        )
    name = getattr(root, "name", None) or path.name
    return LoadedAgent(
        root_agent=root, app=app, name=str(name), spec=spec, fingerprint=fingerprint, reset=reset
    )


def _reset_function(module: Any, where: str) -> Callable[[], object] | None:
    """The agent module's ``reset_data``, which adk eval calls before every case."""
    inner = getattr(module, "agent", module)
    reset = getattr(inner, "reset_data", None) or getattr(module, "reset_data", None)
    if reset is not None and not callable(reset):
        raise AgentLoadError(f"{where}: reset_data must be a function")
    return reset
