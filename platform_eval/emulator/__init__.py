"""A local emulator of the evaluation REST resources: HTTP server, SQLite store, metric engine.

Needs the ``emulator`` extra: ``pip install 'platform-eval[emulator]'``.
"""

try:
    from .server import Emulator
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the emulator needs its extra: pip install 'platform-eval[emulator]'"
    ) from exc

__all__ = ["Emulator"]
