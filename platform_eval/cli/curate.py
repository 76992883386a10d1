"""``platform-eval curate``: recorded conversations into golden eval cases."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Collection
from pathlib import Path

from ..formats.migrate import eval_set_to_dataset, write_json
from ..jobs.curate import Curation, case_of, curate, sources_path, verdicts_by_case
from ..results import fetch_results
from ..results.model import Row
from ..target import Target
from ..traces import Conversation, load_traces
from ._common import EXIT_OK, UsageError, note
from ._traces import trace_sources

VERDICTS = {"passed": True, "failed": False}


def where_run(args: argparse.Namespace) -> str | None:
    """The run ``--where RUN=passed`` names, when it names a run and not a results file: the
    command then needs the target."""
    where = getattr(args, "where", None)
    if not where or "=" not in where:
        return None
    source = where.rsplit("=", 1)[0]
    return None if Path(source).is_file() else source


def _where(text: str) -> tuple[str, bool]:
    source, sep, wanted = text.rpartition("=")
    if not sep or not source or wanted not in VERDICTS:
        raise UsageError(
            f"--where {text!r}: expected RESULTS=passed or RESULTS=failed, RESULTS a run's "
            "name or id, or a results file (run or results --format json -o FILE)"
        )
    return source, VERDICTS[wanted]


def _rows_of_file(path: str) -> list[Row]:
    """The rows of a results file that ``--format json`` wrote."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--where: cannot read {path}: {exc}") from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise UsageError(
            f"--where: {path} is not a results file (no rows): write one with "
            "`results RUN --format json -o FILE`"
        )
    found = []
    for index, row in enumerate(rows):
        try:
            found.append(
                Row(
                    eval_case_id=str(row["evalCaseId"]),
                    item=str(row.get("item") or ""),
                    request=row.get("request"),
                    candidate=str(row.get("candidate") or ""),
                    metric=str(row["metric"]),
                    score=row.get("score"),
                    threshold=row.get("threshold"),
                    explanation=row.get("explanation"),
                )
            )
        except (KeyError, TypeError, AttributeError):
            raise UsageError(
                f"--where: {path}: $.rows[{index}]: expected a result row with evalCaseId, "
                "metric, score and threshold"
            ) from None
    return found


def _keep(
    verdicts: dict[str, bool | None], wanted: bool, source: str, given: Collection[str]
) -> Callable[[Conversation], str | None]:
    said = "passed" if wanted else "failed"

    def keep(conversation: Conversation) -> str | None:
        case, unclear = case_of(conversation.id, verdicts, given)
        if unclear is not None:
            return f"{unclear} in {source}"
        if case is None:
            return f"not among the cases of {source}"
        verdict = verdicts[case]
        if verdict is None:
            return f"{case} has no verdict in {source} (no threshold)"
        return None if verdict == wanted else f"{case} not {said} in {source}"

    return keep


def _output_format(args: argparse.Namespace, output: Path) -> str:
    if args.format:
        return str(args.format)
    return "dataset" if output.name.endswith("-dataset.json") else "evalset"


def _set_id(output: Path) -> str:
    name = output.name
    for suffix in (".evalset.json", "-dataset.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or "curated"
    return name or "curated"


def curate_command(args: argparse.Namespace, target: Target | None = None) -> int:
    output = Path(args.output)
    if output.exists() and not args.force:
        raise UsageError(f"{output} exists: --force replaces it")
    verdicts = None
    if args.where:
        source, wanted = _where(args.where)
        if Path(source).is_file():
            rows = _rows_of_file(source)
        else:
            assert target is not None
            rows = list(fetch_results(target.client, source).rows)
        verdicts = verdicts_by_case(rows)
    conversations = load_traces(trace_sources(args.traces, target) or [])
    keep = None
    if verdicts is not None:
        keep = _keep(verdicts, wanted, source, {c.id for c in conversations})
    for conversation in conversations:
        for line in conversation.notes:
            note(f"{conversation.source}: {conversation.id}: {line}", quiet=args.quiet)
    curation = curate(conversations, keep=keep)
    for why in curation.skipped:
        note(f"left out: {why}", quiet=args.quiet)
    for what in curation.not_carried:
        note(what, quiet=args.quiet)
    if not curation.cases:
        raise UsageError(
            f"no conversation to curate in {', '.join(args.traces)} "
            f"({len(conversations)} read, {len(curation.skipped)} left out)"
        )
    _write(curation, output, _output_format(args, output))
    note(
        f"{len(curation.cases)} eval cases written to {output} from {len(conversations)} "
        f"conversations ({curation.duplicates} duplicates merged, {len(curation.skipped)} left "
        f"out); where each came from: {sources_path(output)}",
        quiet=args.quiet,
    )
    return EXIT_OK


def _write(curation: Curation, output: Path, fmt: str) -> None:
    eval_set = curation.eval_set(_set_id(output))
    if fmt == "dataset":
        data = eval_set_to_dataset(eval_set)[0].to_json_dict()
    else:
        data = eval_set.to_json_dict()
    write_json(output, data)
    write_json(sources_path(output), curation.sources())
