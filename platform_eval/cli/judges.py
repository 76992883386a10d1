"""``platform-eval judges``: is the judge right? Its verdicts beside people's labels."""

from __future__ import annotations

import argparse

from ..results import fetch_results
from ..results.agreement import agreement, label_template, read_labels
from ..target import Target
from ._common import EXIT_FAILED, EXIT_OK, emit, error, note, output_format


def judges_agreement(args: argparse.Namespace, target: Target) -> int:
    labels = read_labels(args.labels)  # first: a bad file is said before the run is read
    report = agreement(fetch_results(target.client, args.run), labels, seed=args.seed)
    fmt = args.format or output_format(None, args.output)
    text = {"json": report.to_json, "html": report.to_html}.get(fmt, report.to_table)()
    emit(text, args.output)
    for why in report.unmatched:
        note(f"label not used: {why}", quiet=args.quiet)
    if args.min_kappa is None:
        return EXIT_OK
    failures = report.failures(args.min_kappa)
    for failure in failures:
        error(f"--min-kappa: {failure}")
    return EXIT_FAILED if failures else EXIT_OK


def judges_labels(args: argparse.Namespace, target: Target) -> int:
    template = label_template(fetch_results(target.client, args.run))
    if not template:
        error(
            f"{args.run}: the judge gave no verdict to label (no rubric verdict, no pass or fail)"
        )
        return EXIT_FAILED
    emit(template, args.output)
    note(
        f'{template.count(chr(10))} verdicts to label: set each "verdict" to true or false',
        quiet=args.quiet or not args.output,
    )
    return EXIT_OK
