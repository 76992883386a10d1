"""Which target a command talks to, said once on stderr.

``--project``/``--location`` (or ``GOOGLE_CLOUD_PROJECT``): the real service.
``--endpoint`` or ``PLATFORM_EVAL_EMULATOR_HOST``: a running emulator. Neither: the emulator runs
in this process on a persistent SQLite file, ``./.platform-eval/emulator.sqlite``, so that ``run``
and then ``results RUN`` work across commands with no setup.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._config import EMULATOR_HOST_ENV
from ..client import Client

EMBEDDED_DB = Path(".platform-eval") / "emulator.sqlite"


@dataclass(frozen=True)
class TargetOptions:
    project: str | None
    location: str | None
    endpoint: str | None
    quiet: bool


@dataclass(frozen=True)
class Target:
    client: Client
    kind: str  # "service", "emulator" or "embedded"
    emulator: Any = None

    @property
    def computes_locally(self) -> bool:
        return self.kind != "service"

    @property
    def poll_interval(self) -> float:
        # A local run finishes in moments; the service's take minutes.
        return 0.2 if self.computes_locally else 2.0


def _say(options: TargetOptions, text: str) -> None:
    if not options.quiet:
        print(f"platform-eval: {text}", file=sys.stderr)


@contextmanager
def open_target(options: TargetOptions) -> Iterator[Target]:
    endpoint = options.endpoint or os.environ.get(EMULATOR_HOST_ENV, "").strip() or None
    project = options.project or os.environ.get("GOOGLE_CLOUD_PROJECT")
    if endpoint:
        with Client(project, options.location, api_endpoint=_url(endpoint)) as client:
            _say(options, f"target: emulator at {client.api_endpoint} ({client.parent})")
            yield Target(client, "emulator")
        return
    if project:
        with Client(project, options.location) as client:
            _say(options, f"target: Agent Platform, {client.parent}")
            yield Target(client, "service")
        return
    from ..emulator import Emulator

    EMBEDDED_DB.parent.mkdir(parents=True, exist_ok=True)
    with (
        Emulator(db=str(EMBEDDED_DB), log_level="error") as emulator,
        emulator.client() as client,
    ):
        _say(
            options,
            f"target: embedded emulator, data in {EMBEDDED_DB} (set --project for the real "
            "service)",
        )
        yield Target(client, "embedded", emulator)


def _url(endpoint: str) -> str:
    return endpoint if "://" in endpoint else f"http://{endpoint}"
