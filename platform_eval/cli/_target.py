"""Which target a command talks to, said once on stderr.

The choice is ``platform_eval.connect``'s; the CLI's embedded emulator keeps its data in
``./.platform-eval/emulator.sqlite``, so that ``run`` and then ``results RUN`` work across commands
with no setup.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..formats import load_eval_config
from ..judges import JudgeSettings
from ..target import EMBEDDED_DB, Target, connect
from ._common import UsageError


@dataclass(frozen=True)
class TargetOptions:
    project: str | None
    location: str | None
    endpoint: str | None
    quiet: bool
    judges: JudgeSettings | None = None


def judge_settings(args: argparse.Namespace, db: str | Path | None = EMBEDDED_DB) -> JudgeSettings:
    """The judge flags over the environment over the eval config's judge model; the cache
    beside ``db`` by default."""
    config = getattr(args, "config", None)
    if args.no_judge_cache and args.replay_only:
        raise UsageError(
            "--no-judge-cache asks the model every time and --replay-only never does: "
            "give one of them"
        )
    return JudgeSettings.resolve(
        db=db,
        model=args.judge_model,
        config_model=load_eval_config(config).judge_model() if config else None,
        cache=args.judge_cache,
        no_cache=args.no_judge_cache,
        concurrency=args.judge_concurrency,
        max_concurrency=args.max_concurrency,
        replay_only=args.replay_only,
        max_calls=args.max_judge_calls,
        call_timeout=args.judge_timeout,
        allow_code_metrics=args.allow_code_metrics,
    )


@contextmanager
def open_target(options: TargetOptions) -> Iterator[Target]:
    with connect(
        options.project,
        options.location,
        endpoint=options.endpoint,
        db=EMBEDDED_DB,
        judges=options.judges.judges() if options.judges is not None else None,
    ) as target:
        if not options.quiet:
            print(f"platform-eval: target: {target.description}", file=sys.stderr)
        yield target
