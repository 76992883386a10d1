"""``platform-eval generate``: run the agent on a dataset and write an agents-cli trace file."""

from __future__ import annotations

import argparse
import logging

from ..formats import load_eval_config
from ..jobs.generate import generate_traces
from ._common import EXIT_FAILED, EXIT_OK, note
from .evaluate import agent_progress


def generate(args: argparse.Namespace) -> int:
    config = load_eval_config(args.config) if args.config else None
    if not args.debug:
        # google-adk logs an agent's failure with its traceback; the report says why.
        logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    report = generate_traces(
        args.dataset,
        args.agent,
        args.output,
        concurrency=args.agent_concurrency,
        user_simulator_config=config.user_simulator_config if config else None,
        on_progress=agent_progress(args.quiet),
    )
    note(report.summary(), quiet=args.quiet)
    print(report.path)
    # The file holds the cases the agent finished; a case it failed on is a failure here.
    return EXIT_FAILED if report.failed else EXIT_OK
