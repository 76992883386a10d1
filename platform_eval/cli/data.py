"""Local files, no target: ``validate``, ``migrate``, ``convert-traces``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import formats, metrics
from ..jobs.curate import SOURCES_SUFFIX
from ..target import Target
from ..traces import PROTOBUF_SUFFIXES, TRACE_SUFFIXES, folder_files, load_traces
from ._common import EXIT_OK, EXIT_USAGE, emit, error, note
from ._traces import trace_sources

#: What validate reads: every file run reads (eval sets, datasets, configs, traces and
#: sessions, OTLP protobuf); a folder's other files are listed as skipped.
READABLE_SUFFIXES = (*TRACE_SUFFIXES, ".csv")


#: The files migrate takes from a folder.
EVAL_SET_SUFFIXES = (".json", ".yaml", ".yml")


def _files(
    paths: list[str], suffixes: tuple[str, ...] = READABLE_SUFFIXES
) -> tuple[list[Path], list[Path]]:
    """The files given and those of the folders given with one of ``suffixes``; and the
    folders' other files."""
    found: list[Path] = []
    skipped: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in folder_files(path):
                # A FIFO, a device or a broken link is no file to read: listed as skipped.
                readable = child.is_file() and child.suffix.lower() in suffixes
                (found if readable else skipped).append(child)
        else:
            found.append(path)
    return found, skipped


def validate(args: argparse.Namespace) -> int:
    """Every file as ``run`` reads it: eval sets, datasets and configs one by one; trace files
    (spans, their logs, sessions, protobuf exports) together, as one recording."""
    files, skipped = _files(args.paths)
    problems: list[str] = []
    traces: list[Path] = []
    for path in files:
        if path.suffix.lower() in PROTOBUF_SUFFIXES:
            traces.append(path)
            continue
        if path.name.endswith(SOURCES_SUFFIX):
            # curate's record of where its cases came from, beside the eval set it wrote.
            if not args.quiet:
                print(f"skipped: {path}: curate's sources of the eval set beside it")
            continue
        try:
            loaded = formats.load(path)
        except formats.FormatError as exc:
            problems += [str(p) for p in exc.problems]
            continue
        if loaded.kind in formats.TRACE_KINDS:
            traces.append(path)
            continue
        found = [str(p) for p in _problems(loaded)]
        problems += found
        if not found and not args.quiet:
            print(f"ok: {path}")
    if traces:
        try:
            conversations = load_traces(traces)
        except formats.FormatError as exc:
            problems += [str(p) for p in exc.problems]
        else:
            if not args.quiet:
                together = " (read together)" if len(traces) > 1 else ""
                shown = ", ".join(map(str, traces))
                print(f"ok: {shown}{together}: {len(conversations)} conversations")
    for path in skipped:
        why = (
            f"not a file platform-eval reads ({', '.join(READABLE_SUFFIXES)})"
            if path.is_file()
            else "not a regular file (a pipe, a device or a broken link)"
        )
        print(f"skipped: {path}: {why}")
    if not files:
        problems.append(f"{', '.join(args.paths)}: no file platform-eval reads, nothing validated")
    for problem in problems:
        print(problem)
    if problems:
        counted = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        error(f"{counted} in {len(files)} file{'' if len(files) == 1 else 's'}")
        return EXIT_USAGE
    return EXIT_OK


def _problems(loaded: formats.LoadedFile) -> list[str | formats.Problem]:
    """A loaded file's problems as a format, then what it holds that nothing could use."""
    path = loaded.path
    problems: list[str | formats.Problem] = list(formats.validate_loaded(loaded))
    if problems:
        return problems
    if loaded.kind == formats.Kind.EVAL_CONFIG:
        config, _ = formats.parse_eval_config(loaded.data, loaded.path)
        found: list[str | formats.Problem] = list(config.code_problems())
        # Each criterion resolved as `run` resolves it: names, options and argument rules.
        run_names = [name for name in config.criteria if name not in config.code_metrics]
        for name, metric in zip(run_names, config.run_metrics(), strict=True):
            try:
                metrics.resolve(metric)
            except metrics.MetricError as exc:
                found.append(f"{path}: criteria.{name}: {exc}")
        for name, threshold in config.thresholds().items():
            problem = metrics.threshold_problem(name, threshold)
            if problem:
                found.append(f"{path}: criteria.{name}.threshold: {problem}")
        return found
    return []


def migrate(args: argparse.Namespace) -> int:
    out = Path(args.out)
    sources, _ = _files(args.sources, EVAL_SET_SUFFIXES)
    for source in sources:
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
