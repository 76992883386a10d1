"""Commands on a target: ``upload``, ``run``, ``results``, ``compare``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import jobs
from .._adaptive import AUTO
from ..agents import tool_mocks
from ..agents.remote import ServedAgent, ServedAgentError, is_agent_url, parse_headers
from ..formats import FormatError, load_eval_config
from ..formats.config import EvalConfig
from ..formats.reading import read_text
from ..jobs.metric_check import EMULATOR_ONLY, MetricsRefusedError
from ..judges import Judging, usage_report
from ..metrics.computable import ADK, JUDGE, SERVICE
from ..results import RunResults, compare, fetch_results, merge_runs
from ..results.model import NO_RUN, NOT_CHECKED_REASON
from ..results.pairwise import PairwiseReport, pairwise
from ..results.render import judge_line
from ..results.significance import DEFAULT_SEED
from ..results.usage import load_prices
from ..target import Target
from ..traces import Conversation
from ..types import (
    EvaluationItem,
    EvaluationRun,
    EvaluationSet,
    InferenceConfig,
    record_thresholds,
)
from ..types.predefined_metrics import newest_version
from ._common import EXIT_FAILED, EXIT_OK, Every, UsageError, emit, note, output_format
from ._target import judge_settings
from ._traces import trace_sources


def _upload_progress(quiet: bool) -> Any:
    if quiet:
        return None
    tty = sys.stderr.isatty()
    every = Every()

    def show(progress: jobs.Progress) -> None:
        finished = progress.done + progress.failed >= progress.total
        line = f"uploading: {progress.done}/{progress.total} items" + (
            f", {progress.failed} failed" if progress.failed else ""
        )
        if tty:
            print(f"\r{line}", end="\n" if finished else "", file=sys.stderr, flush=True)
        elif every.due() and not finished:
            print(line, file=sys.stderr, flush=True)

    return show


def _judging(target: Target) -> Judging | None:
    """The embedded emulator's model judge (its usage is known here), else None."""
    model = target.emulator.judges.model if target.emulator is not None else None
    return model if isinstance(model, Judging) else None


def progress_line(run: EvaluationRun, done: int, total: int, judging: Judging | None) -> str:
    """``run ID: RUNNING 3/10 items, 12 judge calls (4 from the cache), 8 at once``."""
    line = f"run {run.id}: {run.state}" + (f" {done}/{total} items" if total else "")
    calls = judging.usage.total.calls if judging is not None else 0
    cached = judging.usage.total.cache_hits if judging is not None else 0
    if calls or cached:
        line += f", {calls} judge calls" + (f" ({cached} from the cache)" if cached else "")
        if judging is not None and judging.concurrency == AUTO and calls > cached:
            line += f", {judging.calls_at_once} at once"
    return line


def _run_progress(quiet: bool, target: Target) -> Any:
    if quiet:
        return None
    tty = sys.stderr.isatty()
    seen: set[str] = set()
    judging = _judging(target)

    every = Every()

    def show(run: EvaluationRun) -> None:
        # A tty shows the count at every poll, a log at intervals; only the emulator reports
        # it (a request per poll).
        due = not tty and every.due()
        counted = (tty or due) and target.computes_locally and not run.done
        done, total = (target.client.run_progress(run) if counted else None) or (0, 0)
        line = progress_line(run, done, total, judging if tty or due else None)
        if tty:
            print(f"\r{line}", end="\n" if run.done else "", file=sys.stderr, flush=True)
        elif str(run.state) not in seen or (due and not run.done):
            seen.add(str(run.state))
            print(line, file=sys.stderr, flush=True)

    return show


def agent_progress(quiet: bool) -> Any:
    """The progress line of an agent run (`run --agent`, `generate`); None when quiet."""
    if quiet:
        return None
    tty = sys.stderr.isatty()
    every = Every()

    def show(progress: Any) -> None:
        line = f"running the agent: {progress.done}/{progress.total} runs, {progress.turns} turns"
        if progress.failed:
            line += f", {progress.failed} failed"
        if progress.resumed:
            line += f" ({progress.resumed} finished earlier)"
        if progress.at_once is not None and progress.done < progress.total:
            line += f", {progress.at_once} at once"
        if tty:
            end = "\n" if progress.done >= progress.total else ""
            print(f"\r{line}", end=end, file=sys.stderr, flush=True)
        elif progress.done >= progress.total or every.due():
            print(line, file=sys.stderr, flush=True)

    return show


def _agent_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """What ``run --agent`` passes to ``jobs.evaluate``; nothing without ``--agent``."""
    agent = getattr(args, "agent", None)
    served = agent is not None and is_agent_url(agent)
    if not served:
        for flag in ("app_name", "agent_header"):
            if getattr(args, flag, None):
                raise UsageError(
                    f"--{flag.replace('_', '-')} goes with --agent URL (a served agent)"
                )
    if agent is None:
        for flag in ("save_sessions", "save_traces"):
            if getattr(args, flag, None):
                raise UsageError(f"--{flag.replace('_', '-')} needs --agent")
        if getattr(args, "num_runs", 1) != 1:
            raise UsageError("--num-runs needs --agent")
        if getattr(args, "agent_mode", "run") != "run":
            raise UsageError("--agent-mode needs --agent")
        if getattr(args, "mock_tools", None) or getattr(args, "real_tools", None):
            raise UsageError("--mock-tools and --real-tools need --agent (tools the agent calls)")
        return {}
    if args.traces:
        raise UsageError("--agent and --traces both give the candidates: pass one of them")
    try:
        # A mock file is read and checked now, before the agent loads.
        tool_mocks.check_options(args.mock_tools, args.unmocked)
    except FormatError:
        raise
    except ValueError as exc:
        raise UsageError(f"--mock-tools: {exc}") from None
    if not args.debug:
        # google-adk logs an agent's failure with its traceback; the report says why.
        logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    if served:
        try:
            headers = parse_headers(args.agent_header or [])
            agent = ServedAgent(agent, app_name=args.app_name, headers=headers)
        except (ValueError, ServedAgentError) as exc:
            raise UsageError(str(exc)) from None
    return {
        "agent": agent,
        "num_runs": args.num_runs,
        "agent_concurrency": args.agent_concurrency,
        "max_concurrency": getattr(args, "max_concurrency", None),
        "agent_processes": args.agent_processes,
        "save_sessions": args.save_sessions,
        "mock_tools": args.mock_tools,
        "real_tools": tuple(t.strip() for t in (args.real_tools or "").split(",") if t.strip()),
        "unmatched_tools": args.unmocked,
        "save_traces": args.save_traces,
        "agent_mode": args.agent_mode,
        "on_agent_progress": agent_progress(args.quiet),
    }


def _inference_configs(path: str | None) -> dict[str, InferenceConfig] | None:
    """``--inference-config FILE``: candidate name -> InferenceConfig, each checked."""
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--inference-config {path}: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise UsageError(
            f"--inference-config {path}: expected a JSON object of candidate name -> "
            'inference config, e.g. {"agent": {"model": "gemini-2.5-flash"}}'
        )
    configs = {}
    for candidate, config in data.items():
        try:
            configs[candidate] = InferenceConfig.model_validate(config)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = "".join(f".{part}" for part in problem["loc"])
            message = str(problem["msg"]).removeprefix("Value error, ")
            raise UsageError(
                f"--inference-config {path}: $.{candidate}{where}: {message}"
            ) from None
    return configs


def _mapping(path: str | None) -> dict[str, str] | None:
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--mapping {path}: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise UsageError(f"--mapping {path}: expected a JSON object of conversation id -> eval id")
    return data


def upload(args: argparse.Namespace, target: Target) -> int:
    report = jobs.UploadReport()
    progress = _upload_progress(args.quiet)
    traces = trace_sources(args.traces, target)
    with jobs.waiting_at_most(args.timeout):
        evaluation_set = _upload(args, target, traces, progress, report)
    note(report.summary(), quiet=args.quiet)
    print(evaluation_set.name)
    return EXIT_OK


def _upload(
    args: argparse.Namespace,
    target: Target,
    traces: list[str | Conversation] | None,
    progress: Any,
    report: jobs.UploadReport,
) -> EvaluationSet:
    if traces:
        return jobs.upload_traces(
            target.client,
            args.evalset,
            traces,
            candidate=args.candidate,
            mapping=_mapping(args.mapping),
            on_progress=progress,
            report=report,
        )
    return jobs.upload_eval_set(target.client, args.evalset, on_progress=progress, report=report)


def _thresholds(pairs: list[str]) -> dict[str, float]:
    out = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"--threshold {pair!r}: expected METRIC=NUMBER") from None
        if not name.strip():
            raise UsageError(f"--threshold {pair!r}: expected METRIC=NUMBER")
        # An unversioned predefined name (general_quality) is its newest version, as it is
        # in --metrics: the two name one metric.
        out[newest_version(name.strip())] = number
    return out


def _threshold_error(exc: jobs.ThresholdError, config: str | None) -> UsageError:
    """A threshold refused, said as this command's user gave it: a flag, or the config file."""
    if exc.from_config:
        return UsageError(f"{config}: criteria.{exc.metric}.threshold: {exc.problem}")
    return UsageError(f"--threshold {exc.metric}={exc.value:g}: {exc.problem}")


def _config(args: argparse.Namespace) -> EvalConfig | None:
    # Read first, so that a config file's own problem (missing, not JSON, a bad value) is
    # reported as that, naming the file, and not as "no metrics".
    config = load_eval_config(args.config) if args.config else None
    if config is not None and config.code_problems():
        raise FormatError(config.code_problems())
    return config


def _metric_options(args: argparse.Namespace, config: EvalConfig | None) -> dict[str, Any]:
    """What ``--metrics``, ``--threshold`` and ``--config`` give the plan."""
    named = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    return {
        "metrics": named or None,
        "config": config,
        "thresholds": _thresholds(args.threshold or []),
    }


@contextlib.contextmanager
def _planning(args: argparse.Namespace) -> Iterator[None]:
    """The plan's refusals, said with this command's flags (exit 2)."""
    try:
        yield
    except jobs.ThresholdError as exc:
        raise _threshold_error(exc, args.config) from None
    except jobs.PlanError as exc:
        if "needs metrics" in str(exc):
            raise UsageError(
                "no metrics: pass --metrics m1,m2 or --config eval_config.json"
            ) from None
        raise UsageError(exc.render(_flag)) from None


#: The plan's fields as this command's flags say them.
_FLAGS = {
    "agent": "--agent",
    "agent_mode": "--agent-mode",
    "inference_configs": "--inference-config",
    "mock_tools": "--mock-tools",
    "num_runs": "--num-runs",
    "real_tools": "--real-tools",
    "save_sessions": "--save-sessions",
    "save_traces": "--save-traces",
    "traces": "--traces",
}


def _flag(field: str, value: Any) -> str:
    flag = _FLAGS.get(field, field)
    if value is True or isinstance(value, list | tuple):
        return flag
    return f"{flag} {value}"


JUDGE_HOW = (
    "pass --judge-model MODEL or set PLATFORM_EVAL_JUDGE_MODEL (a Gemini model, with "
    "GOOGLE_API_KEY or Application Default Credentials; or a LiteLLM provider/model), or run "
    "against the real service with --project"
)


#: What the command's user can do about each kind of metric the target refuses.
_ADVICE = {
    JUDGE: JUDGE_HOW,
    SERVICE: "run against a project (--project)",
    EMULATOR_ONLY: "run without --project",
    ADK: "pip install 'platform-eval[adk]' (google-adk), or run against a project (--project)",
}


def _refused(exc: MetricsRefusedError) -> UsageError:
    """The target's refusal of metrics, said with this command's flags."""
    return UsageError(str(MetricsRefusedError(exc.refusals, _ADVICE)))


def _render(results: RunResults, fmt: str, rubrics: bool, to_file: bool = False) -> str:
    if fmt == "table":
        # Cut to the terminal's width where there is one ($COLUMNS too, in a CI log), whole in
        # a file or a pipe: a line wider than the screen is what a reader loses.
        columns = 0 if to_file else shutil.get_terminal_size(fallback=(0, 0)).columns
        return results.to_table(rubrics=rubrics, width=columns or None)
    return {
        "json": results.to_json,
        "csv": results.to_csv,
        "junit": results.to_junit,
        "html": results.to_html,
        "markdown": results.to_markdown,
    }[fmt]()


def _quarantined(path: str, results: RunResults) -> frozenset[str]:
    """The case ids of a ``--quarantine`` file; ids that name no case of the run are said."""
    try:
        text = read_text(path)  # a regular file, under the files' size limit
    except FormatError as exc:
        raise UsageError(f"--quarantine {path}: {exc.problems[0].message}") from None
    ids = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    named = frozenset(i for i in ids if i)
    unknown = sorted(named - set(results.cases))
    if unknown:
        more = f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""
        note(f"--quarantine {path}: no case of this run is {', '.join(unknown[:5])}{more}")
    return named


def _finish(args: argparse.Namespace, results: RunResults) -> int:
    if getattr(args, "quarantine", None):
        results = dataclasses.replace(results, quarantine=_quarantined(args.quarantine, results))
    if getattr(args, "prices", None):
        try:
            results = dataclasses.replace(results, prices=load_prices(args.prices))
        except FormatError as exc:
            raise UsageError(f"--prices {args.prices}: {exc.problems[0].message}") from None
        except ValueError as exc:
            raise UsageError(f"--prices {exc}") from None
    fmt = output_format(args.format, args.output)
    rubrics = getattr(args, "rubrics", False)
    if fmt == "table" and args.output is None and sys.stdout.isatty():
        from ._rich_table import print_results  # rich only where a person reads it

        print_results(results, rubrics=rubrics)
        return EXIT_OK if results.ok else EXIT_FAILED
    emit(_render(results, fmt, rubrics, to_file=args.output is not None), args.output)
    if args.output:
        note(f"results written to {args.output}", quiet=args.quiet)
        if not args.quiet:
            print(results.verdict_line())
    elif not results.checked and fmt != "table":
        # JSON, JUnit and the others say it in their own way; the terminal hears it too.
        note(f"NOT CHECKED: {NOT_CHECKED_REASON}", quiet=args.quiet)
    return EXIT_OK if results.ok else EXIT_FAILED


def _wait(
    target: Target, run: EvaluationRun, quiet: bool, timeout: float | None = None
) -> EvaluationRun:
    if run.done:
        return run
    return target.client.wait_for_run(
        run,
        poll_interval=target.poll_interval,
        on_progress=_run_progress(quiet, target),
        timeout=timeout,
    )


def run(args: argparse.Namespace, target: Target) -> int:
    metric_options = _metric_options(args, _config(args))
    source = Path(args.evalset)
    is_file = source.exists()
    looks_like_file = args.evalset.endswith((".json", ".yaml")) or (
        "/" in args.evalset and "evaluationSets/" not in args.evalset
    )
    agent = _agent_arguments(args)
    inference = _inference_configs(getattr(args, "inference_config", None))
    if inference and (agent or args.traces):
        raise UsageError(
            "--inference-config has the service produce the responses: it goes without "
            "--agent and --traces, which give recorded ones"
        )
    if inference and target.computes_locally:
        for candidate, inference_config in inference.items():
            if (field := inference_config.inference_field()) is not None:
                raise UsageError(
                    f"--inference-config {args.inference_config}: {candidate}.{field}: "
                    "the emulator does not run inference; evaluate recorded responses "
                    "(--agent or --traces), or run against a project (--project)"
                )
    client = target.client
    if is_file:
        with _planning(args):
            # The file is read here, each kind in its own shape; an agents-cli trace file's
            # cases hold the agent's answers, graded as they are.
            plan = jobs.build_plan(
                source,
                **metric_options,
                **agent,
                inference_configs=inference,
                traces=None if agent else trace_sources(args.traces, target),
                candidate=args.candidate,
                mapping=_mapping(args.mapping),
                on_progress=_upload_progress(args.quiet),
                on_run_progress=_run_progress(args.quiet, target),
                wait=not args.no_wait,
                poll_interval=target.poll_interval,
                timeout=args.timeout,
            )
        thresholds = dict(plan.metrics.thresholds)
        try:
            evaluation = jobs.execute(client, plan)
        except MetricsRefusedError as exc:
            raise _refused(exc) from None
        if evaluation.agent_runs is not None:
            note(evaluation.agent_runs.summary(), quiet=args.quiet)
        note(evaluation.upload.summary(), quiet=args.quiet)
        if evaluation.attached and evaluation.run is not None:
            note(
                f"attached to {evaluation.run.name}, started by an earlier attempt",
                quiet=args.quiet,
            )
        started: EvaluationRun | None = evaluation.run
        # jobs.evaluate read the results when it waited: they are not read again.
        items: list[EvaluationItem] | None = evaluation.results or None
        case_ids: dict[str, str] = evaluation.upload.case_ids
    else:
        if args.traces:
            raise UsageError("--traces needs an eval set file, not the name of an uploaded set")
        with _planning(args):
            metric_plan = jobs.plan_metrics(**metric_options)
        if looks_like_file:
            raise UsageError(f"{args.evalset}: no such file (or pass an evaluation set's name)")
        if agent:
            raise UsageError("--agent needs an eval set file, not the name of an uploaded set")
        chosen, thresholds = list(metric_plan.metrics), dict(metric_plan.thresholds)
        if not chosen:
            raise UsageError(
                f"{args.config}: its metrics are local code metrics only, computed on the "
                "eval set file's cases: pass the file, not the name of an uploaded set"
            )
        try:
            jobs.check_metrics(client, chosen)
        except MetricsRefusedError as exc:
            raise _refused(exc) from None
        started = client.create_run(
            evaluation_set=client.get_set(args.evalset),
            metrics=chosen,
            metadata=record_thresholds(None, thresholds),
            inference_configs=inference,
        )
        items = None
        case_ids = {}
    if started is None:
        # Every metric a local code metric: nothing for the target to compute, no run.
        note(NO_RUN, quiet=args.quiet)
        results = fetch_results(client, None, thresholds=thresholds, items=items or [])
    elif args.no_wait:
        print(started.name)
        return EXIT_OK
    else:
        finished = _wait(target, started, args.quiet, args.timeout)
        results = fetch_results(
            client, finished, thresholds=thresholds, items=items, case_ids=case_ids
        )
    judging = _judging(target)
    misses = judging.replay_misses if judging is not None else []
    if misses:
        more = f" (and {len(misses) - 1} more)" if len(misses) > 1 else ""
        raise UsageError(f"{misses[0]}{more}; run without --replay-only to ask the model")
    if judging is not None:
        results.judge = usage_report(judging)
        if judging.stopped is not None:
            # An outage, said once: the table repeats it on every result it left unjudged.
            unjudged = sum(1 for r in results.rows if r.status.value == "NOT_EVALUATED")
            note(f"{judging.stopped}; {unjudged} results NOT_EVALUATED", quiet=args.quiet)
        if judging.unusable_answers:
            kept = (
                "the cache still holds them (--replay-only leaves it as it is): run without "
                "--replay-only to ask again"
                if judging.replay_only
                else "they are not kept, and a next run asks the model again"
            )
            note(
                f"{judging.unusable_answers} judge answers could not be read (no score or "
                f"verdict in them), and what no readable answer judged is NOT_EVALUATED; {kept}",
                quiet=args.quiet,
            )
        refused = judging.budget_refusals
        if refused:
            made = results.judge["calls"] if results.judge else 0
            note(
                f"judge budget spent after {made} model calls: {refused} "
                "calls were not made and their results are NOT_EVALUATED; run the same command "
                "again to go on (answers so far are in the judge cache)",
                quiet=args.quiet,
            )
    return _finish(args, results)


def results(args: argparse.Namespace, target: Target) -> int:
    client = target.client
    current = _wait(target, client.get_run(args.run), args.quiet, args.timeout)
    given = _thresholds(args.threshold or [])
    from_config = load_eval_config(args.config).thresholds() if args.config else {}
    config = current.evaluation_config
    run_metrics = [str(m.metric) for m in (config.metrics if config else None) or [] if m.metric]
    with _planning(args):
        thresholds = jobs.merge_thresholds(from_config, given, run_metrics)
    # The thresholds recorded with the run apply, each replaced by one given here.
    recorded = not args.ignore_run_thresholds
    return _finish(args, fetch_results(client, current, thresholds=thresholds, recorded=recorded))


def _candidate_pairs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise UsageError(f"--candidate {pair!r}: expected BEFORE=AFTER (candidate names)")
        out[old.strip()] = new.strip()
    return out


def _side(client: Any, runs: str) -> RunResults:
    """One side of a comparison: a run, or several comma-separated runs as one."""
    names = [name.strip() for name in runs.split(",") if name.strip()]
    if not names:
        raise UsageError(f"{runs!r}: expected a run, or runs separated by commas")
    return merge_runs([fetch_results(client, name) for name in names])


def _pairwise_judge(args: argparse.Namespace, target: Target) -> Judging:
    """The embedded emulator's model judge (its cache and accounting), else one of our own."""
    embedded = _judging(target)
    if embedded is not None:
        return embedded
    found = judge_settings(args).judges().model
    if not isinstance(found, Judging):
        raise UsageError(f"--pairwise asks a judge model which answer is better; {JUDGE_HOW}")
    return found


def _with_pairwise(
    args: argparse.Namespace,
    target: Target,
    before: RunResults,
    after: RunResults,
    text: str,
    fmt: str,
) -> tuple[str, PairwiseReport]:
    judge = _pairwise_judge(args, target)
    report = pairwise(
        before, after, judge, seed=args.seed if args.seed is not None else DEFAULT_SEED
    )
    misses = judge.replay_misses
    if misses:
        raise UsageError(f"{misses[0]}; run without --replay-only to ask the model")
    usage = usage_report(judge)
    if fmt == "json":
        document = json.loads(text)
        document["pairwise"] = report.as_dict()
        document["judge"] = usage
        return json.dumps(document, indent=2), report
    lines = [text.rstrip("\n"), "", report.to_text()]
    if usage:
        lines.append(judge_line(usage))
    return "\n".join(lines) + "\n", report


def compare_runs(args: argparse.Namespace, target: Target) -> int:
    client = target.client
    before, after = _side(client, args.run_a), _side(client, args.run_b)
    options: dict[str, Any] = {"alpha": args.alpha, "min_delta": args.min_delta}
    if args.seed is not None:
        options["seed"] = args.seed
    comparison = compare(
        before, after, candidates=_candidate_pairs(args.candidate or []), **options
    )
    if not comparison.paired:
        raise UsageError(comparison.why_nothing_paired())
    fmt = args.format or output_format(None, args.output)
    text = {
        "json": comparison.to_json,
        "markdown": comparison.to_markdown,
        "html": comparison.to_html,
    }.get(fmt, comparison.to_table)()
    preference = None
    if args.pairwise:
        text, preference = _with_pairwise(args, target, before, after, text, fmt)
    emit(text if text.endswith("\n") else text + "\n", args.output)
    if not args.fail_on_regression:
        return EXIT_OK
    if comparison.regressed_metrics:
        return EXIT_FAILED
    if preference is not None and not preference.complete:
        # A verdict nobody could read is no tie: the gate does not pass on it.
        unread = len(preference.not_evaluated)
        note(
            f"--fail-on-regression: {unread} pairwise cases were not evaluated by the judge; "
            "the gate does not pass on verdicts nobody read",
            quiet=False,
        )
        return EXIT_FAILED
    return EXIT_OK
