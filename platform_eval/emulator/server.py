"""``Emulator``: the whole emulator (store, backend, run executor, HTTP server) in one object.

In-process use (tests, scripts)::

    with Emulator() as emu:
        client = emu.client()

It listens on a free loopback port; ``emu.url`` is its base URL.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from .._auth import bearer_credentials
from .._config import EMULATOR_PROJECT
from ..judges import JudgeSettings
from ..judges.code_runner import SubprocessCodeRunner
from ..metrics import Judges
from ..metrics.computable import why_not_computable
from .access import exposure_warning
from .app import EmulatorApp
from .backend import Backend
from .connections import protocol_options
from .faults import DroppedConnectionError, Fault, FaultRegistry
from .gcs import ObjectStore
from .http_server import PromptServer
from .limits import Limits
from .runner import RunExecutor
from .store import Store

if TYPE_CHECKING:
    from ..client import AsyncClient, Client


class _QuietDroppedConnections(logging.Filter):
    # An injected dropped connection is intended; it should not print a traceback.
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DroppedConnectionError)


def _install_log_filter() -> None:
    for name in ("uvicorn.error", "uvicorn"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietDroppedConnections) for f in logger.filters):
            logger.addFilter(_QuietDroppedConnections())


class Emulator:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        db: str | None = None,
        log_level: str = "warning",
        judges: Judges | None = None,
        max_body_bytes: int | None = None,
        max_json_values: int | None = None,
        max_json_depth: int | None = None,
        first_request_seconds: float | None = None,
        max_connections: int | None = None,
        max_telemetry_bytes: int | None = None,
        auth_token: str | None = None,
        allow_code_metrics: bool = False,
    ) -> None:
        """Each ``max_*`` and ``first_request_seconds`` bounds what one request or connection may
        ask (see ``Limits``); None keeps the default. ``allow_code_metrics``: run the custom
        code metrics runs send (``customCodeExecutionSpec``), each call in a subprocess with a
        time and a memory limit; off, such a run is refused."""
        given: dict[str, Any] = {
            "body_bytes": max_body_bytes,
            "json_values": max_json_values,
            "json_depth": max_json_depth,
            "first_request_seconds": first_request_seconds,
            "connections": max_connections,
            "telemetry_bytes": max_telemetry_bytes,
        }
        self.limits = Limits(**{key: value for key, value in given.items() if value is not None})
        self.host = host
        self.auth_token = auth_token or None
        self.port = port
        self.store = Store(db)
        self.backend = Backend(self.store)
        self.faults = FaultRegistry()
        self.objects = ObjectStore(self.store, self.limits)
        if judges is None:
            # Flags of `platform-eval` reach here as judges; the environment otherwise.
            judges = JudgeSettings.resolve(db=db).judges()
        if allow_code_metrics and judges.code is None:
            judges = dataclasses.replace(judges, code=SubprocessCodeRunner())
        self.judges = judges
        self.backend.why_not_computable = functools.partial(why_not_computable, judges=judges)
        self.backend.has_judge_model = judges.model is not None
        self.executor = RunExecutor(self.backend, self.objects, self.judges)
        self.app = EmulatorApp(
            self.backend,
            self.faults,
            self.objects,
            auth_token=self.auth_token,
            executor_health=self.executor.health,
            judges=self.judges,
        )
        self._log_level = log_level
        self._server: PromptServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def _config(self) -> uvicorn.Config:
        _install_log_filter()
        return uvicorn.Config(
            self.app.asgi,
            log_level=self._log_level,
            lifespan="off",
            access_log=False,
            **protocol_options(self.limits),
        )

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose proto
        # says TCP, and without it every response waits ~40 ms for a delayed ACK.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        return sock

    def start(self) -> Emulator:
        """Starts serving in a background thread and returns once it accepts connections."""
        if self._thread is not None:
            return self
        warning = exposure_warning(self.host, self.auth_token)
        if warning:
            logging.getLogger("platform_eval.emulator").warning("%s", warning)
        sock = self._bind()
        self.executor.start()
        self._server = PromptServer(self._config())
        server = self._server
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=[sock]), name="platform-eval-emulator", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the emulator did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        return self

    def serve_forever(self, listening: Callable[[str], None] | None = None) -> None:
        """Serves in the calling thread until interrupted (``platform-eval emulator start``);
        ``listening`` is told the address (``host:port``) once it is bound: the port the
        system chose, for port 0.

        Raises OSError when the address cannot be bound.
        """
        sock = self._bind()
        if listening is not None:
            listening(self.host_port)
        self.executor.start()
        try:
            PromptServer(self._config()).run(sockets=[sock])
        finally:
            self.close()

    def stop(self) -> None:
        if self._server is not None:
            self._server.tell_to_stop()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.executor.stop()
        self._server = None
        self._thread = None

    def close(self) -> None:
        self.stop()
        self.store.close()
        self.judges.close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- conveniences ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def host_port(self) -> str:
        """The value for ``PLATFORM_EVAL_EMULATOR_HOST``."""
        return self.url.removeprefix("http://")

    def client(
        self, project: str = EMULATOR_PROJECT, location: str = "us-central1", **kwargs: Any
    ) -> Client:
        # Imported here: the emulator itself never depends on the client (DESIGN §2).
        from ..client import Client

        client = Client(project, location, api_endpoint=self.url, **self._auth(kwargs))
        client._identity = self._identity()
        return client

    def _identity(self) -> str | None:
        """The database file, which names this emulator's data whatever port it listens on."""
        if self.store.path == ":memory:":
            return None
        return f"emulator-db:{Path(self.store.path).resolve()}"

    def async_client(
        self, project: str = EMULATOR_PROJECT, location: str = "us-central1", **kwargs: Any
    ) -> AsyncClient:
        from ..client import AsyncClient

        client = AsyncClient(project, location, api_endpoint=self.url, **self._auth(kwargs))
        client._identity = self._identity()
        return client

    def _auth(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        if self.auth_token and "credentials" not in kwargs:
            kwargs = {**kwargs, "credentials": bearer_credentials(self.auth_token)}
        return kwargs

    def inject_fault(self, **fault: Any) -> None:
        """Registers a fault, e.g. ``inject_fault(path="evaluationItems", status=503, times=2)``."""
        self.faults.add(Fault.from_json(fault))

    def pending_faults(self) -> list[dict[str, Any]]:
        return self.faults.pending()

    def reset(self) -> None:
        self.store.reset()
        self.faults.clear()
