"""``platform-eval optimize``: a better root instruction, accepted only beyond noise."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from .. import jobs
from ..formats import load_eval_config, load_eval_set
from ..jobs.optimize import OptimizeProgress, optimize, write_report
from ._common import EXIT_OK, Every, UsageError, note
from ._target import judge_settings


def optimize_command(args: argparse.Namespace) -> int:
    config = load_eval_config(args.config)
    try:
        chosen, _ = jobs.choose_metrics(None, config)
    except ValueError:
        raise UsageError(f"{args.config}: it names no metric to optimize for") from None
    if not chosen:
        raise UsageError(f"{args.config}: its metrics are code metrics only; optimize needs one "
                         "the engine computes")  # fmt: skip
    cases = load_eval_set(args.evalset).eval_cases
    validation = load_eval_set(args.validation).eval_cases if args.validation else None
    judges = judge_settings(args, db=None).judges()
    if not args.debug:
        logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    try:
        report = asyncio.run(
            optimize(
                args.agent,
                cases,
                chosen,
                validation=validation,
                judges=judges,
                budget=args.budget,
                reflection_model=args.reflection_model,
                num_runs=args.num_runs,
                seed=args.seed,
                engine=args.engine,
                target=args.target,
                on_progress=_progress(args.quiet),
                # GEPA's state: an interrupted optimization, run again, goes on from it.
                run_dir=Path(args.output) / "gepa-state",
            )
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    finally:
        judges.close()
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)  # ends the progress line
    for path in write_report(report, args.output):
        note(f"wrote {path}", quiet=args.quiet)
    note(report.decision, quiet=args.quiet)
    print(report.instruction if report.target == "root" else json.dumps(report.instructions))
    return EXIT_OK


def _progress(quiet: bool) -> Any:
    """``optimizing: 3 instructions scored, 42 agent runs, best mean 0.83``: in place on a
    terminal, at intervals in a log."""
    if quiet:
        return None
    tty = sys.stderr.isatty()
    every = Every()

    def show(progress: OptimizeProgress) -> None:
        best = "-" if progress.best is None else f"{progress.best:.3g}"
        line = (
            f"optimizing: {progress.instructions} instructions scored, {progress.runs} agent "
            f"runs, best mean {best}"
        )
        if tty:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        elif every.due():
            print(line, file=sys.stderr, flush=True)

    return show
