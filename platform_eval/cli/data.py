"""Local files, no target: ``validate``, ``migrate``, ``convert-traces``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import formats, metrics
from ..target import Target
from ..traces import conversations_from, load_traces
from ._common import EXIT_OK, EXIT_USAGE, emit, error, note
from ._traces import trace_sources


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))
        else:
            found.append(path)
    return found


def validate(args: argparse.Namespace) -> int:
    problems: list[str] = []
    checked = 0
    for path in _files(args.paths):
        checked += 1
        found = [str(p) for p in _problems(path)]
        problems += found
        if not found and not args.quiet:
            print(f"ok: {path}")
    for problem in problems:
        print(problem)
    if problems:
        error(f"{len(problems)} problems in {checked} files")
        return EXIT_USAGE
    return EXIT_OK


def _problems(path: Path) -> list[str | formats.Problem]:
    """The file's problems as a format, then what it holds that nothing could use: the file is
    read and parsed once."""
    try:
        loaded = formats.load(path)
    except formats.FormatError as exc:
        return list(exc.problems)
    problems: list[str | formats.Problem] = list(formats.validate_loaded(loaded))
    if problems:
        return problems
    if loaded.kind == formats.Kind.EVAL_CONFIG:
        config, _ = formats.parse_eval_config(loaded.data, loaded.path)
        unknown = [name for name in config.criteria if name not in metrics.REGISTRY]
        found: list[str | formats.Problem] = [
            f"{path}: criteria.{name}: no target here computes the metric {name!r}; known: "
            f"{', '.join(sorted(metrics.REGISTRY))}"
            for name in unknown
        ]
        for name, threshold in config.thresholds().items():
            problem = metrics.threshold_problem(name, threshold)
            if problem:
                found.append(f"{path}: criteria.{name}.threshold: {problem}")
        return found
    if loaded.kind in formats.TRACE_KINDS:
        try:
            conversations_from(loaded.data, loaded.kind, loaded.path)
        except formats.FormatError as exc:
            return list(exc.problems)
    return []


def migrate(args: argparse.Namespace) -> int:
    out = Path(args.out)
    for source in _files(args.sources):
        if args.dry_run:
            dataset, cases = formats.eval_set_to_dataset(formats.load_eval_set(source))
            destination = formats.migrate.dataset_path_for(source, out)
            print(f"{source} -> {destination}: {len(dataset.eval_cases)} cases (dry run)")
            for case in cases:
                for what in case.not_carried:
                    print(f"  {case.eval_id}: not carried: {what}")
            continue
        report = formats.migrate_file(source, out, overwrite=args.force)
        print(report.summary() if not report.skipped else f"{report.summary()} (--force)")
    return EXIT_OK


def convert_traces(args: argparse.Namespace, target: Target | None = None) -> int:
    conversations = []
    # Files are one recording, as for upload and run: spans and their logs may be apart.
    for conversation in load_traces(trace_sources(args.traces, target) or []):
        for line in conversation.notes:
            note(f"{conversation.source}: {conversation.id}: {line}", quiet=args.quiet)
        conversations.append(
            {
                "id": conversation.id,
                "source": conversation.source,
                "agentData": conversation.agent_data.to_wire(),
            }
        )
    emit(json.dumps(conversations, indent=2, ensure_ascii=False) + "\n", args.out)
    if args.out:
        note(f"{len(conversations)} conversations written to {args.out}", quiet=args.quiet)
    return EXIT_OK
