"""An evaluation plan, built once: what ``jobs.evaluate``, the ``run`` command and the pytest
plugin evaluate, each read and checked in one place before anything is uploaded.

A plan holds the cases (read once, each file in its own shape), exactly one source of the
candidates (recorded traces, an agent to run, the answers the file holds; none for a run whose
target produces them), the metric plan (the metrics the target computes, the local code
metrics, the thresholds: the config's, then those given over them, each checked against the
metrics of the run) and the run's options. ``build_plan`` is the only builder: a new option is
a field of ``EvaluateOptions`` and of the part of the plan it belongs to, and a flag.

Whether the target can compute the metrics is asked by ``jobs.evaluate`` before anything is
uploaded or run (it needs the client): ``MetricsRefusedError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, Unpack

from .._operations import MetricLike, to_metric
from ..agents import AgentLike
from ..agents.source import open_agent
from ..agents.tool_mocks import check_options
from ..formats import adk
from ..formats._problems import FormatError
from ..formats.config import EvalConfig, parse_eval_config
from ..formats.dataset import DatasetCase
from ..formats.dataset_items import DatasetCases, file_case_id
from ..formats.load import is_table, load_eval_config, table_dataset
from ..formats.stream import EvalCases, InMemoryCases, cases_from, read_eval_cases
from ..metrics import reliability_name, threshold_problem
from ..metrics.arguments import ArgRules
from ..metrics.code_metrics import CodeFunction
from ..traces import Conversation
from ..types import EvaluationRun
from ..types.predefined_metrics import newest_version
from .agent_job import AgentOptions, refusal
from .code_metrics import functions_of
from .plan_error import PlanError
from .upload import ProgressCallback

#: An eval set: its file (an ADK eval set, an EvaluationDataset, JSON Lines or CSV of the
#: SDK's flat form), an EvalSet, a pandas DataFrame of the flat form, or a file's cases read
#: already (``formats.stream.cases_from``).
EvalSetSource = str | Path | adk.EvalSet | Any
ConfigSource = EvalConfig | str | Path | Mapping[str, Any]


def read_cases(source: EvalSetSource) -> tuple[EvalCases, str]:
    """The cases of an eval set source, each in its file's own shape, and where they are from:
    an eval set file is read a case at a time, so that memory holds its text and not every
    case parsed."""
    if isinstance(source, adk.EvalSet):
        return InMemoryCases(source), f"eval-set:{source.eval_set_id}"
    if isinstance(source, EvalCases):  # read already, as the command line reads its file
        return source, source.path or f"eval-set:{source.eval_set_id}"
    if is_table(source):
        return cases_from(table_dataset(source)), "table"
    return read_eval_cases(source), str(source)


def load_config(config: ConfigSource | None) -> EvalConfig | None:
    """An eval config given as a file, as its JSON (a dict), or read already."""
    if isinstance(config, str | Path):
        return load_eval_config(config)
    if isinstance(config, Mapping):
        parsed, problems = parse_eval_config(dict(config), "config")
        if problems:
            raise FormatError(problems)
        return parsed
    return config


class NoMetricsError(PlanError):
    """Neither the metrics given nor the config name a metric."""


@dataclass
class ThresholdError(PlanError):
    """A threshold that judges nothing or that no score can reach."""

    metric: str
    value: float
    problem: str
    #: True when the config set it (``criteria.<metric>.threshold``), False when given.
    from_config: bool

    def __str__(self) -> str:
        if self.from_config:
            return f"criteria.{self.metric}.threshold: {self.problem}"
        return f"threshold {self.metric}={self.value!r}: {self.problem}"


def choose_metrics(
    metrics: Sequence[MetricLike] | None, config: ConfigSource | None
) -> tuple[list[MetricLike], dict[str, float]]:
    """The metrics to run (``metrics``, else the config's criteria) and the config's thresholds.

    ``config``: an eval_config.json file, its JSON as a dict, or an EvalConfig. Raises
    NoMetricsError when neither names a metric. The list is empty when the config's metrics are
    all local code metrics: then no run is started, and ``evaluate`` computes them itself.
    """
    loaded = load_config(config)
    # An unversioned predefined name ("general_quality") is its newest version.
    chosen: list[MetricLike] = [
        newest_version(m) if isinstance(m, str) else m for m in metrics or []
    ]
    thresholds: dict[str, float] = {}
    if loaded is not None:
        thresholds = loaded.thresholds()
        if not chosen:
            chosen = list(loaded.run_metrics())
        else:
            # Metrics named choose among the config's: its thresholds of the others judge
            # nothing in this run (its code metrics run whatever is named).
            names = {str(to_metric(m).metric) for m in chosen} | set(loaded.code_metrics)
            thresholds = {name: value for name, value in thresholds.items() if name in names}
    if not chosen and not (loaded is not None and loaded.code_metrics):
        raise NoMetricsError("evaluate needs metrics=[...] or a config with criteria")
    return chosen, thresholds


@dataclass(frozen=True)
class MetricPlan:
    """What is computed, by whom, and judged against what."""

    #: Computed by the target (the service or the emulator), in one run.
    metrics: tuple[MetricLike, ...]
    #: The config's local code metrics, computed by this process on the uploaded cases.
    code: Mapping[str, CodeFunction]
    #: The config's thresholds, then those given over them; each names a metric of the run.
    thresholds: Mapping[str, float]
    config: EvalConfig | None = None

    @property
    def names(self) -> list[str]:
        return [str(to_metric(m).metric) for m in self.metrics] + list(self.code)


def plan_metrics(
    metrics: Sequence[MetricLike] | None = None,
    config: ConfigSource | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> MetricPlan:
    """The one place metrics and thresholds are resolved and checked (ThresholdError)."""
    loaded = load_config(config)
    chosen, from_config = choose_metrics(metrics, loaded)
    code = functions_of(loaded)
    names = [str(to_metric(m).metric) for m in chosen] + list(code)
    merged = merge_thresholds(from_config, thresholds or {}, names)
    return MetricPlan(tuple(chosen), code, merged, loaded)


def merge_thresholds(
    from_config: Mapping[str, float], given: Mapping[str, float], run_metrics: Sequence[str]
) -> dict[str, float]:
    """The config's thresholds, then those given over them; each a score its metric can reach,
    and each given one a metric of the run (``run_metrics``, when known): ThresholdError."""
    for metric, value in from_config.items():
        problem = threshold_problem(metric, value)
        if problem:
            raise ThresholdError(metric, value, problem, from_config=True)
    for metric, value in given.items():
        problem = threshold_problem(metric, value, run_metrics)
        if problem:
            raise ThresholdError(metric, value, problem, from_config=False)
    return {**from_config, **given}


@dataclass(frozen=True)
class Recorded:
    """Candidates recorded already: trace files, sessions, or conversations read."""

    traces: tuple[str | Path | Conversation, ...]
    #: conversation id -> eval case id, where pairing by id or first message is not enough.
    mapping: Mapping[str, str] | None = None


@dataclass(frozen=True)
class AgentRun:
    """Candidates made by running the agent on every case first."""

    options: AgentOptions


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """How the evaluation is carried out on the target."""

    manifest: str | Path | None = None
    #: Bounds every wait on the target (the upload's and the run's) and every call to the
    #: agent under test (a case whose turn is still open then is NOT_EVALUATED).
    timeout: float | None = None
    poll_interval: float = 1.0
    wait: bool = True
    bulk_import: bool | str = True
    #: candidate -> what the service runs to produce the responses (none recorded).
    inference_configs: Mapping[str, Any] | None = None
    on_progress: ProgressCallback | None = None
    on_run_progress: Callable[[EvaluationRun], None] | None = None


@dataclass(frozen=True, kw_only=True)
class EvaluationPlan:
    cases: EvalCases
    #: Where the cases are from (a file's path), for messages and the upload's journal.
    source: str
    #: The one source of the candidates; None when the target produces them (inference).
    candidates: Recorded | AgentRun | None
    #: The candidates' name (``agent``; ``agent#1``... with several runs).
    candidate: str = "agent"
    metrics: MetricPlan
    run: RunOptions = field(default_factory=RunOptions)


class EvaluateOptions(TypedDict, total=False):
    """The keyword options of ``evaluate`` and ``build_plan``: each is read in ``build_plan``."""

    traces: Sequence[str | Path | Conversation] | None
    metrics: Sequence[MetricLike] | None
    config: ConfigSource | None
    candidate: str
    manifest: str | Path | None
    timeout: float | None
    poll_interval: float
    on_progress: ProgressCallback | None
    mapping: Mapping[str, str] | None
    wait: bool
    on_run_progress: Callable[[EvaluationRun], None] | None
    bulk_import: bool | str
    thresholds: Mapping[str, float] | None
    agent: AgentLike | None
    num_runs: int
    agent_concurrency: int | str | None
    max_concurrency: int | None
    agent_processes: int | str | None
    save_sessions: str | Path | None
    save_traces: str | Path | None
    on_agent_progress: Callable[[Any], None] | None
    resume: bool
    inference_configs: Mapping[str, Any] | None
    mock_tools: str | None
    real_tools: Sequence[str]
    unmatched_tools: str
    agent_mode: str


_RUN_OPTIONS = frozenset(RunOptions.__dataclass_fields__)
_AGENT_OPTIONS = {
    "num_runs": "num_runs",
    "agent_concurrency": "concurrency",
    "max_concurrency": "max_concurrency",
    "agent_processes": "processes",
    "save_sessions": "save_sessions",
    "save_traces": "save_traces",
    "on_agent_progress": "on_progress",
    "resume": "resume",
    "mock_tools": "mock_tools",
    "real_tools": "real_tools",
    "unmatched_tools": "unmatched_tools",
    "agent_mode": "mode",
}


def _trajectory_rules(config: EvalConfig | None) -> ArgRules | None:
    """The trajectory criterion's argument rules (``args_match``, ``extra_args``), if any."""
    criterion = config.criteria.get("tool_trajectory_avg_score") if config else None
    if criterion is None:
        return None
    options = criterion.options
    return ArgRules.parse(options.get("args_match"), options.get("extra_args"))


#: What only an agent run takes, and the value that says it was not asked for.
_AGENT_ONLY: dict[str, Any] = {
    "num_runs": 1,
    "agent_mode": "run",
    "mock_tools": None,
    "real_tools": (),
    "save_sessions": None,
    "save_traces": None,
}


def _check_one_source(given: EvaluateOptions) -> None:
    """What contradicts itself, refused as the command line refuses it: the service's inference
    beside recorded candidates, an agent's options without an agent."""
    inference = given.get("inference_configs")
    if inference:
        for other in ("traces", "agent"):
            if given.get(other) is not None:
                raise PlanError(
                    "{inference_configs} has the target produce the responses: it goes without "
                    + ("{" + other + "}")
                    + ", which gives recorded ones",
                    inference_configs=sorted(inference),
                    **{other: True},
                )
    if given.get("agent") is None:
        for name, unset in _AGENT_ONLY.items():
            value = given.get(name, unset)
            if value is not None and value != unset and not (name == "real_tools" and not value):
                raise PlanError(
                    "{" + name + "} needs an agent to run (agent=...): without one, no case runs",
                    **{name: value},
                )


def _agent_run(agent: AgentLike, options: EvaluateOptions, config: EvalConfig | None) -> AgentRun:
    # None: the default, as not given (the command line passes its unset flags so).
    given: dict[str, Any] = {
        _AGENT_OPTIONS[k]: v for k, v in options.items() if k in _AGENT_OPTIONS and v is not None
    }
    if "real_tools" in given:
        given["real_tools"] = tuple(given["real_tools"])
    agent_options = AgentOptions(
        agent=agent,
        user_simulator_config=config.user_simulator_config if config else None,
        tool_arg_rules=_trajectory_rules(config),
        **given,
    )
    # Before the agent is loaded or run: what its place cannot do (nothing is connected).
    check_options(agent_options.mock_tools, agent_options.unmatched_tools)
    try:
        source = open_agent(agent)
    except ValueError as exc:
        raise PlanError(str(exc)) from None
    refused = refusal(source, agent_options)
    if refused is not None:
        raise refused
    return AgentRun(agent_options)


def _check_runs_enough(thresholds: Mapping[str, float], num_runs: int) -> None:
    """A pass@k or pass^k threshold needs k runs of each case at least."""
    for name, value in thresholds.items():
        parsed = reliability_name(name)
        if parsed is not None and parsed[1] > num_runs:
            problem = f"it needs {parsed[1]} runs of each case or more, and num_runs is {num_runs}"
            raise ThresholdError(name, value, problem, from_config=False)


def own_answers(cases: EvalCases) -> list[str | Path | Conversation] | None:
    """The answers a dataset holds (an agents-cli trace file, a table's ``response`` column),
    read with its cases, as its candidates; None for golden cases only."""
    if not isinstance(cases, DatasetCases):
        return None  # an ADK eval set holds no answers
    answers: list[str | Path | Conversation] = []
    for index in range(len(cases)):
        case = cases.file_case(index)
        agent_data = case.candidate_agent_data() if isinstance(case, DatasetCase) else None
        if agent_data is not None:
            answers.append(Conversation(file_case_id(case), agent_data, cases.path or "table"))
    return answers or None


def build_plan(
    eval_set_source: EvalSetSource, **options: Unpack[EvaluateOptions]
) -> EvaluationPlan:
    """The plan of ``evaluate(client, eval_set_source, **options)`` (``EvaluateOptions``): the
    cases read, the candidates' source, the metrics and thresholds resolved and checked."""
    unknown = sorted(set(options) - set(EvaluateOptions.__annotations__))
    if unknown:
        raise TypeError(f"evaluate() got unexpected keyword arguments {unknown}")
    given = options
    agent = given.get("agent")
    traces = given.get("traces")
    _check_one_source(given)
    if agent is not None and traces is not None:
        raise PlanError("pass traces or agent, not both: the candidates come from one of them")
    metric_plan = plan_metrics(given.get("metrics"), given.get("config"), given.get("thresholds"))
    cases, source = read_cases(eval_set_source)
    candidates: Recorded | AgentRun | None
    if agent is not None:
        candidates = _agent_run(agent, given, metric_plan.config)
        _check_runs_enough(metric_plan.thresholds, candidates.options.num_runs)
    else:
        if traces is None:
            # A file with the agent's answers is graded as it is (an agents-cli trace file).
            traces = own_answers(cases)
        candidates = Recorded(tuple(traces), given.get("mapping")) if traces is not None else None
    run = RunOptions(**{k: v for k, v in given.items() if k in _RUN_OPTIONS})  # type: ignore[arg-type]
    return EvaluationPlan(
        cases=cases,
        source=source,
        candidates=candidates,
        candidate=given.get("candidate", "agent"),
        metrics=metric_plan,
        run=run,
    )
