"""The command's arguments: every command, its options and the checks of their values, built
into one parser (``parser``); ``main`` in ``cli/__init__`` runs what it parses."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any

from .._adaptive import parse_concurrency
from .._json_limits import DEEPEST_ALLOWED
from .._version import __version__
from ..agents import tool_mocks
from ._common import EXIT_USAGE, FORMATS

EXAMPLES = """\
examples:
  platform-eval run tests/eval/evalsets/basic.evalset.json --traces traces/ \\
      --config tests/eval/eval_config.json --output report.html
  platform-eval run basic.evalset.json --metrics tool_trajectory_avg_score \\
      --threshold tool_trajectory_avg_score=1 --format junit --output junit.xml
  platform-eval run basic.evalset.json --agent my_agent/ --config eval_config.json \\
      --num-runs 3
  platform-eval results RUN --rubrics
  platform-eval compare RUN_A RUN_B --fail-on-regression

target: --project (or GOOGLE_CLOUD_PROJECT) for the real service; --endpoint (or
PLATFORM_EVAL_EMULATOR_HOST) for a running emulator; neither, an emulator in this process
keeping its data in ./.platform-eval/emulator.sqlite.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _add(
    commands: Any, name: str, help: str, example: str, handler: Callable[..., int], **kw: Any
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help,
        description=help,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kw,
    )
    parser.set_defaults(handler=handler)
    return parser


def _trace_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--traces",
        nargs="+",
        metavar="PATH",
        help="trace files or folders, session exports, or emulator: (what it received over OTLP)",
    )
    parser.add_argument("--candidate", default="agent", help="candidate name (default agent)")
    parser.add_argument("--mapping", help="JSON file: conversation id -> eval id")


def _agent_options(parser: argparse.ArgumentParser) -> None:
    agent = parser.add_argument_group(
        "running the agent (as adk eval does; needs google-adk: platform-eval[adk])"
    )
    agent.add_argument(
        "--agent",
        metavar="AGENT",
        help="run this agent on every case and evaluate its sessions: an agent folder (what "
        "adk eval takes), an agent.py, module:attribute, the http(s) URL of a served agent "
        "(ADK's api_server: adk api_server, adk web, Cloud Run, ADK in Java, Go or TypeScript), "
        "an A2A agent card's URL, or an Agent Runtime (projects/P/locations/L/"
        "reasoningEngines/ID)",
    )
    agent.add_argument(
        "--app-name",
        metavar="APP",
        help="with --agent URL: the app to run (default: the one the server lists)",
    )
    agent.add_argument(
        "--agent-header",
        action="append",
        metavar="'NAME: VALUE'",
        help="with --agent URL: a header sent with every request (repeatable), e.g. "
        "'Authorization: Bearer TOKEN'; never shown; without one, a server that asks for "
        "credentials gets a Google ID token from Application Default Credentials",
    )
    agent.add_argument(
        "--agent-mode",
        choices=("run", "live"),
        default="run",
        help="run: each user turn a request, as adk eval runs it (the default); live: each case "
        "one live (bidi) conversation, as ADK's /run_live holds it (in-process through "
        "Runner.run_live, or a served agent's /run_live WebSocket): turns sent as text or as "
        "the case's audio, the agent's audio kept with --save-sessions and its transcript "
        "scored, time to first and last audio per turn reported",
    )
    agent.add_argument(
        "--num-runs",
        type=_positive,
        default=1,
        metavar="N",
        help="run each case N times: N candidates per case, with per-case mean and spread",
    )
    agent.add_argument(
        "--agent-concurrency",
        type=_concurrency,
        default="auto",
        metavar="auto|N",
        help="cases run at once: auto (the default) starts at 4 (adk eval's number), raises it "
        "while cases finish and cuts it when the model answers 429 or 503, up to "
        "--max-concurrency; or a fixed number",
    )
    agent.add_argument(
        "--agent-processes",
        type=_concurrency,
        default="auto",
        metavar="auto|N",
        help="processes the cases run in: this one and N-1 workers, each loading the agent, "
        "one limit of cases at once for all, no more processes than case runs; auto (the "
        "default) takes one per 25 case runs, up to the cores there are; 1: this process alone",
    )
    agent.add_argument(
        "--save-sessions",
        metavar="DIR",
        help="keep each session (ADK's session JSON); run --traces DIR evaluates them again",
    )
    agent.add_argument(
        "--inference-config",
        metavar="FILE",
        help="JSON: candidate name -> EvaluationRun InferenceConfig (a model or deployed "
        "agent the service runs to produce the responses); the emulator cannot run one",
    )
    agent.add_argument(
        "--save-traces",
        metavar="DIR",
        help="keep each run's OpenTelemetry spans (OTLP JSON); run --traces DIR reads them",
    )
    agent.add_argument(
        "--mock-tools",
        metavar="|".join(tool_mocks.MODES),
        help="answer each tool call instead of running the tool: golden (the case's expected "
        "tool responses, matched by name and arguments, by the trajectory criterion's "
        "args_match rules), FILE (per-tool responses in YAML or JSON) or sessions:DIR (the "
        "tool responses of recorded runs); a call none answers fails its case",
    )
    agent.add_argument(
        "--real-tools",
        metavar="A,B",
        help="with --mock-tools: these tools run for real",
    )
    agent.add_argument(
        "--unmocked",
        choices=tool_mocks.UNMATCHED,
        default="error",
        help="with --mock-tools: a call no mock answers fails its case (error, the default) "
        "or runs the tool (real)",
    )


def _number(kind: str, accepts: Callable[[float], bool], within: str) -> Callable[[str], float]:
    """An argparse type: a number that ``accepts`` takes, else an error saying what was
    expected (``kind`` when it is not a number at all, ``within`` when it is out of range)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        if not accepts(value):  # NaN is refused by every comparison below
            raise argparse.ArgumentTypeError(f"expected {within}, got {text!r}")
        return value

    return parse


_probability = _number("a number", lambda v: 0 < v < 1, "a number between 0 and 1")
_non_negative = _number("a number", lambda v: 0 <= v < math.inf, "a number 0 or more")
_seconds = _number(
    "a number of seconds", lambda v: 0 < v < math.inf, "a positive number of seconds"
)
_megabytes = _number("a number of MiB", lambda v: 0 < v < 2**20, "a positive number of MiB")


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="stop waiting on the target after this long, the upload's operations and the "
        "run (default 24 h; the run goes on); with --agent, a case whose agent has not answered "
        "by then is not evaluated",
    )
    parser.add_argument(
        "--format", choices=FORMATS, help="default: from --output's suffix, or table"
    )
    parser.add_argument("--output", "-o", help="write the report to this file")
    parser.add_argument("--rubrics", action="store_true", help="list every rubric verdict")
    parser.add_argument(
        "--threshold",
        action="append",
        metavar="METRIC=X",
        help="minimum score (repeatable); pass@K=X or pass^K=X: the least share of cases that "
        "pass at least once, or every time, in K of their --num-runs (these then are the gate)",
    )
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help='JSON: model -> {"input": USD, "output": USD} per million tokens, over the '
        "built-in list prices, for the agent's cost per case",
    )
    parser.add_argument(
        "--quarantine",
        metavar="FILE",
        help="eval case ids, one a line (# comments), whose failures are reported and fail no "
        "gate: flaky cases kept out of CI's verdict while they are fixed",
    )


def _whole(maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 (to ``maximum``, when given)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"expected at most {maximum}, got {value}")
        return value

    return parse


_positive = _whole()


def _concurrency(text: str) -> int | str:
    """An argparse type: ``auto`` or a whole number 1 or more."""
    try:
        return parse_concurrency(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _judge_options(parser: argparse.ArgumentParser, extra: dict[str, Any]) -> None:
    judge = parser.add_argument_group(
        "judges (the embedded emulator, and emulator start; a running one has its own)"
    )
    judge.add_argument(
        "--judge-model",
        metavar="MODEL",
        help="model for judged metrics: a Gemini name, or a LiteLLM provider/model "
        "(default: PLATFORM_EVAL_JUDGE_MODEL); a config's judge_model_options wins per criterion",
        **extra,
    )
    judge.add_argument(
        "--judge-cache",
        metavar="PATH",
        help="replay cache of judge answers (default: judge-cache.sqlite beside the database)",
        **extra,
    )
    judge.add_argument(
        "--no-judge-cache",
        action="store_true",
        help="ask the model every time; its answers replace those the cache kept",
        **extra,
    )
    judge.add_argument(
        "--replay-only",
        action="store_true",
        help="answer every judge call from the cache; a call it cannot answer is an error (exit 2)",
        **extra,
    )
    judge.add_argument(
        "--judge-concurrency",
        type=_concurrency,
        metavar="auto|N",
        help="judge calls in flight at once: auto (the default) starts at 4, raises while calls "
        "succeed and cuts on 429 or 503, up to --max-concurrency; or a fixed number",
        **extra,
    )
    judge.add_argument(
        "--max-concurrency",
        type=_positive,
        metavar="N",
        help="the most judge calls (and with --agent, cases) at once auto raises to (default 32)",
        **extra,
    )
    judge.add_argument(
        "--judge-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="seconds one judge call may take before it counts as failed (default 120)",
        **extra,
    )
    judge.add_argument(
        "--allow-code-metrics",
        action="store_true",
        help="let the emulator run custom code metrics (agents-cli's execution: remote), each "
        "call in a subprocess with a time and memory limit; not a sandbox against hostile code",
        **extra,
    )
    judge.add_argument(
        "--max-judge-calls",
        type=_positive,
        metavar="N",
        help="stop judging before more than N model calls (the cache keeps what was answered)",
        **extra,
    )


def _global_options(parser: argparse.ArgumentParser, *, given_only: bool) -> None:
    """The options every command takes, before or after its name (``--project`` after ``runs
    list`` as after ``platform-eval``). ``given_only``: a command's own copy sets only what is
    given there, so that it never hides what was given before the command."""
    extra: dict[str, Any] = {"default": argparse.SUPPRESS} if given_only else {}
    parser.add_argument("--project", help="Google Cloud project (the real service)", **extra)
    parser.add_argument("--location", help="location (default us-central1)", **extra)
    parser.add_argument("--endpoint", help="a running emulator, host:port", **extra)
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress or notes", **extra)
    _judge_options(parser, extra)
    parser.add_argument("--debug", action="store_true", help="tracebacks and HTTP logs", **extra)


def _with_global_options(parser: argparse.ArgumentParser) -> None:
    """Every command and action below ``parser`` takes the global options too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                _global_options(command, given_only=True)
                _with_global_options(command)


def parser() -> argparse.ArgumentParser:
    from . import curate, data, evaluate, generate, generation, judges, optimize, resources
    from .emulator import emulator_start

    parser = _Parser(
        prog="platform-eval",
        description=(__doc__ or "").splitlines()[0],
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"platform-eval {__version__}")
    _global_options(parser, given_only=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = _add(
        commands,
        "validate",
        "check eval sets, datasets, configs and traces",
        "platform-eval validate tests/eval/",
        data.validate,
    )
    p.add_argument("paths", nargs="+", metavar="PATH")

    p = _add(
        commands,
        "migrate",
        "ADK eval sets to EvaluationDataset files",
        "platform-eval migrate tests/eval/evalsets --out tests/eval/datasets",
        data.migrate,
    )
    p.add_argument("sources", nargs="+", metavar="SRC")
    p.add_argument("--out", default=".", help="folder or file to write (default .)")
    p.add_argument("--force", action="store_true", help="replace existing files")
    p.add_argument("--dry-run", action="store_true", help="report only, write nothing")

    p = _add(
        commands,
        "convert-traces",
        "traces and sessions to AgentData JSON",
        "platform-eval convert-traces spans.json --out agent_data.json",
        data.convert_traces,
    )
    p.add_argument("traces", nargs="+", metavar="TRACE", help="files, folders or emulator:")
    p.add_argument("--out", help="file to write (default stdout)")

    p = _add(
        commands,
        "curate",
        "recorded conversations into golden eval cases",
        "platform-eval curate traces/ -o tests/eval/evalsets/regression.evalset.json",
        curate.curate_command,
    )
    p.add_argument("traces", nargs="+", metavar="TRACES", help="files, folders or emulator:")
    p.add_argument(
        "--output", "-o", required=True, help="the eval set (.evalset.json) or dataset to write"
    )
    p.add_argument(
        "--format",
        choices=("evalset", "dataset"),
        help="an ADK eval set or an EvaluationDataset (default: from the file name)",
    )
    p.add_argument(
        "--where",
        metavar="RESULTS=passed|failed",
        help="only the conversations whose case passed (or failed) in a run: its name or id, "
        "or a results file (--format json)",
    )
    p.add_argument("--force", action="store_true", help="replace the output file")

    p = _add(
        commands,
        "generate",
        "run the agent on a dataset and write an agents-cli trace file",
        "platform-eval generate tests/eval/datasets/basic-dataset.json --agent app/",
        generate.generate,
    )
    p.add_argument("dataset", metavar="DATASET", help="an EvaluationDataset or ADK eval set file")
    p.add_argument(
        "--agent",
        required=True,
        metavar="AGENT",
        help="an agent folder (what adk eval takes), an agent.py, or module:attribute",
    )
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="the trace file (default artifacts/traces/traces_<time>.json, as agents-cli's)",
    )
    p.add_argument(
        "--agent-concurrency",
        type=_concurrency,
        default="auto",
        metavar="auto|N",
        help="cases at once (auto: adapted to the model's quota)",
    )
    p.add_argument("--config", metavar="FILE", help="eval config (its user_simulator_config)")

    p = _add(
        commands,
        "optimize",
        "a better root instruction for the agent, accepted only when it improved beyond noise",
        "platform-eval optimize tests/eval/evalsets/basic.evalset.json --agent app/ "
        "--config tests/eval/eval_config.json -o optimized/",
        optimize.optimize_command,
    )
    p.add_argument("evalset", metavar="EVALSET", help="the training cases (an eval set file)")
    p.add_argument("--agent", required=True, metavar="AGENT", help="an agent folder")
    p.add_argument("--config", required=True, metavar="FILE", help="the eval config to score by")
    p.add_argument(
        "--validation",
        metavar="EVALSET",
        help="the validation cases (default: 30%% of EVALSET, held out by --seed)",
    )
    p.add_argument(
        "--budget",
        type=_positive,
        default=4,
        metavar="N",
        help="candidate instructions the reflection model is asked for (default 4)",
    )
    p.add_argument(
        "--reflection-model",
        default="gemini-2.5-flash",
        metavar="MODEL",
        help="the model that proposes instructions (default gemini-2.5-flash)",
    )
    p.add_argument(
        "--target",
        choices=("root", "sub-agents", "all", "skills"),
        default="root",
        help="whose instructions: the root agent's (default), every sub-agent's, all, or the "
        "skills' (the SKILL.md bodies of the agents' SkillToolsets, keyed "
        "skill_instructions:<skill>) (the gepa engine; instructions.json is written)",
    )
    p.add_argument(
        "--engine",
        choices=("gepa", "simple"),
        default="gepa",
        help="google-adk's optimizer: gepa (what adk optimize runs; needs "
        "platform-eval[optimize]) or simple (SimplePromptOptimizer)",
    )
    p.add_argument("--num-runs", type=_positive, default=1, metavar="N", help="runs per case")
    p.add_argument("--seed", type=int, default=0, help="the validation split's seed (default 0)")
    p.add_argument(
        "--output", "-o", required=True, metavar="DIR", help="instruction.txt, optimize.json/html"
    )

    p = _add(
        commands,
        "upload",
        "upload an eval set (with traces as candidates)",
        "platform-eval upload basic.evalset.json --traces traces/",
        evaluate.upload,
    )
    p.add_argument("evalset", metavar="EVALSET")
    _trace_options(p)
    p.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="stop waiting on the target's operations after this long (default: 300 s an "
        "import); what they did is picked up by the next upload",
    )
    p.set_defaults(needs_target=True)

    p = _add(
        commands,
        "run",
        "upload, run, wait and report; exit 1 when a threshold is missed",
        "platform-eval run basic.evalset.json --traces traces/ --config eval_config.json",
        evaluate.run,
    )
    p.add_argument("evalset", metavar="EVALSET|SET_NAME")
    _trace_options(p)
    p.add_argument("--config", help="eval_config.json / test_config.json (criteria, thresholds)")
    p.add_argument("--metrics", help="comma-separated metric names (overrides the config's)")
    p.add_argument("--no-wait", action="store_true", help="print the run's name and return")
    _agent_options(p)
    _output_options(p)
    p.set_defaults(needs_target=True)

    p = _add(
        commands,
        "results",
        "a finished run's results",
        "platform-eval results RUN --rubrics",
        evaluate.results,
    )
    p.add_argument("run", metavar="RUN")
    p.add_argument(
        "--config", help="thresholds from this eval config (over those recorded with the run)"
    )
    p.add_argument(
        "--ignore-run-thresholds",
        action="store_true",
        help="judge only by --threshold/--config, not by the thresholds the run recorded",
    )
    _output_options(p)
    p.set_defaults(needs_target=True)

    p = _add(
        commands,
        "compare",
        "two runs side by side",
        "platform-eval compare RUN_A RUN_B --fail-on-regression",
        evaluate.compare_runs,
    )
    p.add_argument("run_a", metavar="RUN_A", help="a run, or several comma-separated (A1,A2,A3)")
    p.add_argument("run_b", metavar="RUN_B", help="a run, or several comma-separated")
    p.add_argument("--format", choices=("table", "json", "markdown", "html"))
    p.add_argument("--output", "-o")
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a metric dropped by more than noise (significant at --alpha, "
        "larger than --min-delta)",
    )
    p.add_argument(
        "--alpha", type=_probability, default=0.05, help="significance level (default 0.05)"
    )
    p.add_argument(
        "--min-delta",
        type=_non_negative,
        default=0.0,
        help="a drop must also be larger than this to count (default 0)",
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the bootstrap (default: fixed)")
    p.add_argument(
        "--pairwise",
        action="store_true",
        help="also ask the judge model (--judge-model) which run answered each case better, "
        "in both orders: wins, losses and ties with an interval",
    )
    p.add_argument(
        "--candidate",
        action="append",
        metavar="BEFORE=AFTER",
        help="pair a candidate of RUN_A with one of RUN_B (default: by eval case, then name)",
    )
    p.set_defaults(needs_target=True)

    p = _add(
        commands,
        "analyze",
        "cluster a run's failed rubrics into a taxonomy of failures",
        "platform-eval analyze RUN --metric general_quality_v1 --top-k 5",
        generation.analyze_run,
    )
    p.add_argument("run", metavar="RUN")
    p.add_argument("--metric", help="the metric whose failures to cluster (default: the only one)")
    p.add_argument("--top-k", type=_positive, metavar="K", help="keep the K largest clusters")
    p.add_argument("--format", choices=("table", "json", "html"))
    p.add_argument("--output", "-o")
    p.set_defaults(needs_target=True)

    p = _add(
        commands,
        "synthesize",
        "write user scenarios for an agent, as a dataset or an eval set for run --agent",
        "platform-eval synthesize --agent app/ --count 20 -o synth-dataset.json",
        generation.synthesize,
    )
    p.add_argument(
        "--agent",
        required=True,
        metavar="AGENT",
        help="an agent folder, an agent.py "
        "or module:attribute (its instruction, tools and sub-agents are told)",
    )
    p.add_argument("--count", type=_positive, required=True, metavar="N", help="scenarios (<= 100)")
    p.add_argument("--instruction", metavar="TEXT", help="guidance for the scenarios")
    p.add_argument("--environment", metavar="TEXT", help="what the agent's world holds")
    p.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="FILE",
        help="an EvaluationDataset (user_scenario), or an ADK eval set when it ends .evalset.json",
    )
    p.add_argument("--force", action="store_true", help="replace FILE")
    p.set_defaults(needs_target=True)

    p = _add(
        commands,
        "rubrics",
        "write rubrics for each case into a copy of an eval set, for review",
        "platform-eval rubrics basic.evalset.json -o basic-rubrics.evalset.json",
        generation.rubrics,
    )
    p.add_argument("evalset", metavar="EVALSET", help="an ADK eval set or EvaluationDataset")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="the copy to write")
    p.add_argument("--metric", help="a predefined metric's rubric recipe (general_quality_v1, ...)")
    p.add_argument("--prompt-template", metavar="TEXT", help="your own prompt; {prompt} is filled")
    p.add_argument("--force", action="store_true", help="replace FILE")
    p.set_defaults(needs_target=True)

    for collection in ("items", "sets", "runs"):
        group = _add(
            commands,
            collection,
            f"evaluation {collection}",
            f"platform-eval {collection} list",
            resources.resource_command,
        )
        group.set_defaults(collection=collection, needs_target=True)
        actions = group.add_subparsers(
            dest="action", metavar="ACTION", parser_class=_Parser, required=True
        )
        listing = actions.add_parser("list", help=f"list {collection}")
        listing.add_argument("--filter", help='e.g. labels.team = "search"')
        listing.add_argument("--page-size", type=int)
        listing.add_argument("--limit", type=int, help="stop after this many")
        listing.add_argument("--json", action="store_true", help="one JSON object per line")
        names = ["get", "delete"] + (["cancel"] if collection == "runs" else [])
        for action in names:
            actions.add_parser(action, help=f"{action} one").add_argument("name", metavar="NAME")

    group = _add(
        commands,
        "metrics",
        "metrics: what each reads, whether it needs a judge",
        "platform-eval metrics list",
        resources.metrics_list,
    )
    metric_actions = group.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_Parser, required=True
    )
    metric_actions.add_parser("list", help="every metric").add_argument(
        "--json", action="store_true"
    )

    group = _add(
        commands,
        "judges",
        "is the judge right: its verdicts beside people's labels",
        "platform-eval judges agreement RUN --labels labels.jsonl --min-kappa 0.6",
        judges.judges_agreement,
    )
    judge_actions = group.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_Parser, required=True
    )
    agreeing = judge_actions.add_parser(
        "agreement",
        help="accuracy, Cohen's kappa (with an interval), Krippendorff's alpha, the confusion "
        "matrix and the disagreements, per metric and rubric",
    )
    agreeing.set_defaults(handler=judges.judges_agreement)
    agreeing.add_argument("run", metavar="RUN")
    agreeing.add_argument(
        "--labels", required=True, help="JSON Lines: case, metric, rubric, verdict, rater"
    )
    agreeing.add_argument("--format", choices=("table", "json", "html"))
    agreeing.add_argument("--output", "-o")
    agreeing.add_argument(
        "--min-kappa",
        type=float,
        default=None,
        help="exit 1 when a metric's, a rubric's or the overall kappa is under this",
    )
    agreeing.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    labelling = judge_actions.add_parser(
        "labels", help="a labels file of every judged verdict of a run, to fill in"
    )
    labelling.set_defaults(handler=judges.judges_labels)
    labelling.add_argument("run", metavar="RUN")
    labelling.add_argument("--output", "-o", help="the file to write (default: stdout)")
    group.set_defaults(needs_target=True)

    group = _add(
        commands,
        "emulator",
        "the local emulator",
        "platform-eval emulator start --port 8765 --db evals.sqlite",
        emulator_start,
    )
    emulator_actions = group.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_Parser, required=True
    )
    start = emulator_actions.add_parser("start", help="serve the emulator until interrupted")
    start.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything else warns and wants --auth-token)",
    )
    start.add_argument("--port", type=int, default=8765, help="port to bind (default 8765)")
    start.add_argument("--db", default=None, help="SQLite file to keep data in (default: memory)")
    start.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    start.add_argument(
        "--auth-token",
        default=None,
        help="require this bearer token on every request (or set PLATFORM_EVAL_EMULATOR_TOKEN)",
    )
    _limit_options(start)
    _with_global_options(parser)
    return parser


def _limit_options(start: argparse.ArgumentParser) -> None:
    limits = start.add_argument_group("limits (what one request or connection may ask)")
    limits.add_argument(
        "--max-body-mb",
        type=_megabytes,
        default=32,
        metavar="MIB",
        help="largest request body accepted, in MiB (default 32)",
    )
    limits.add_argument(
        "--max-json-values",
        type=_positive,
        metavar="N",
        help="values one JSON body may hold: objects, arrays and members (default 1,000,000)",
    )
    limits.add_argument(
        "--max-json-depth",
        # Deeper, Python's own recursion limit is the one that stops a body.
        type=_whole(maximum=DEEPEST_ALLOWED),
        metavar="N",
        help="nesting of a JSON body (default 100, as the service, or "
        f"PLATFORM_EVAL_MAX_JSON_DEPTH; at most {DEEPEST_ALLOWED}, where Python's own recursion "
        "limit takes over)",
    )
    limits.add_argument(
        "--first-request-seconds",
        type=_seconds,
        metavar="SECONDS",
        help="close a connection that sends no request, or no whole request head, within this "
        "long (default 10)",
    )
    limits.add_argument(
        "--max-connections",
        type=_positive,
        metavar="N",
        help="connections open at once; beyond, new ones are closed (default 1,000)",
    )
    limits.add_argument(
        "--max-telemetry-mb",
        type=_megabytes,
        metavar="MIB",
        help="OTLP exports kept for --traces emulator:; beyond, exports are refused until "
        "read and cleared (default 64)",
    )
