"""Which target a command talks to, said once on stderr.

The choice is ``platform_eval.connect``'s; the CLI's embedded emulator keeps its data in
``./.platform-eval/emulator.sqlite``, so that ``run`` and then ``results RUN`` work across commands
with no setup.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..target import Target, connect

EMBEDDED_DB = Path(".platform-eval") / "emulator.sqlite"


@dataclass(frozen=True)
class TargetOptions:
    project: str | None
    location: str | None
    endpoint: str | None
    quiet: bool


@contextmanager
def open_target(options: TargetOptions) -> Iterator[Target]:
    with connect(
        options.project, options.location, endpoint=options.endpoint, db=EMBEDDED_DB
    ) as target:
        if not options.quiet:
            print(f"platform-eval: target: {target.description}", file=sys.stderr)
        yield target
