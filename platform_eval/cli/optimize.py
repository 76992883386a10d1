"""``platform-eval optimize``: a better root instruction, accepted only beyond noise."""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

from .. import jobs
from ..formats import load_eval_config, load_eval_set
from ..jobs.optimize import optimize, write_report
from ._common import EXIT_OK, UsageError, note
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
                # GEPA's state: an interrupted optimization, run again, goes on from it.
                run_dir=Path(args.output) / "gepa-state",
            )
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    finally:
        judges.close()
    for path in write_report(report, args.output):
        note(f"wrote {path}", quiet=args.quiet)
    note(report.decision, quiet=args.quiet)
    print(report.instruction)
    return EXIT_OK
