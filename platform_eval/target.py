"""Where evaluations go: the real service, a running emulator, or one embedded in this process.

``connect()`` picks the target the way the CLI does, so a script runs unchanged on a laptop with
no cloud account and in a real project:

* a project (argument or ``GOOGLE_CLOUD_PROJECT``): the real service, with Application Default
  Credentials;
* an endpoint (argument or ``PLATFORM_EVAL_EMULATOR_HOST``): an emulator already running there;
* neither: an emulator started in this process, on the SQLite file ``db``: by default the
  command line's own, ``./.platform-eval/emulator.sqlite``, so that scripts and the CLI see
  each other's runs; ``db=None`` for one in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ._config import EMULATOR_HOST_ENV, shown_url
from .client import Client

if TYPE_CHECKING:
    from .emulator import Emulator
    from .metrics import Judges

#: Where the embedded emulator keeps its data unless told otherwise: the command line's store.
EMBEDDED_DB = Path(".platform-eval") / "emulator.sqlite"


@dataclass(frozen=True)
class Target:
    """A connected client and what it talks to."""

    client: Client
    kind: str  # "service", "emulator" or "embedded"
    description: str
    emulator: Emulator | None = None

    @property
    def computes_locally(self) -> bool:
        """True where the emulator's local metric engine scores the runs."""
        return self.kind != "service"

    @property
    def poll_interval(self) -> float:
        # A local run finishes in moments, and a local poll is a millisecond's read (the waits
        # grow from this); the service's take minutes.
        return 0.05 if self.computes_locally else 2.0


@contextmanager
def connect(
    project: str | None = None,
    location: str | None = None,
    *,
    endpoint: str | None = None,
    db: str | Path | None = EMBEDDED_DB,
    judges: Judges | None = None,
) -> Iterator[Target]:
    """The target for these settings, closed (and an embedded emulator stopped) on exit.

    ``db`` is where an embedded emulator keeps its data: by default the command line's
    ``./.platform-eval/emulator.sqlite``; None (or ``":memory:"``) for memory, gone on exit;
    ``judges`` what judges its runs (default: ``PLATFORM_EVAL_JUDGE_MODEL`` and the cache
    beside ``db``, see ``platform_eval.judges.JudgeSettings``).
    """
    endpoint = endpoint or os.environ.get(EMULATOR_HOST_ENV, "").strip() or None
    project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or None
    if endpoint:
        url = endpoint if "://" in endpoint else f"http://{endpoint}"
        with Client(project, location, api_endpoint=url) as client:
            shown = shown_url(client.api_endpoint)
            yield Target(client, "emulator", f"emulator at {shown} ({client.parent})")
        return
    if project:
        with Client(project, location) as client:
            yield Target(client, "service", f"Agent Platform, {client.parent}")
        return
    from .emulator import Emulator

    if str(db) == ":memory:":
        db = None
    if db is not None:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    where = f"data in {db}" if db is not None else "data in memory"
    with (
        Emulator(db=None if db is None else str(db), log_level="error", judges=judges) as emulator,
        emulator.client() as client,
    ):
        yield Target(
            client,
            "embedded",
            f"embedded emulator, {where} (set a project for the real service)",
            emulator,
        )
