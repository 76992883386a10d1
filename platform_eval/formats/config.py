"""Eval configs: ADK `eval_config.json` / `test_config.json`, agents-cli `eval_config.yaml`.

A criterion is a bare threshold (``"tool_trajectory_avg_score": 1.0``) or an object with a
``threshold`` and options (``match_type``, ``judge_model_options``, ``rubrics``, ...), in
camelCase or snake_case. Options are normalized to snake_case.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_snake

from ..types import (
    AutoraterConfig,
    ComputationBasedMetricSpec,
    EvaluationRunMetric,
    InlineRubrics,
    Rubric,
    RubricBasedMetricSpec,
)
from ..types.predefined_metrics import newest_version
from ._problems import FormatError, Problem
from .reading import read_bytes

#: The largest custom metric file read (a metric is a function, not a library).
MAX_CODE_BYTES = 2**20

#: Options whose keys are the user's own names (tools, arguments, state keys): kept as written.
VERBATIM_OPTIONS = ("args_match", "keys_match")


def _snake_keys(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            name = to_snake(key)
            out[name] = inner if name in VERBATIM_OPTIONS else _snake_keys(inner)
        return out
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


@dataclass(frozen=True)
class Criterion:
    metric: str
    threshold: float | None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def rubrics(self) -> list[dict[str, Any]]:
        return list(self.options.get("rubrics") or [])


@dataclass(frozen=True)
class CodeMetricSource:
    """A metric an agents-cli config defines in Python (``custom_function``, or the file of
    ``custom_function_file``): run locally by ``metrics.code_metrics``."""

    name: str
    source: str
    #: The file the source is in, or ``<config>:custom_metrics[i].custom_function``.
    origin: str
    #: Why it cannot run (a missing file, no ``evaluate``, a syntax error), said where it is
    #: used (validate, run), as agents-cli says it; the config itself still loads.
    problem: Problem | None = None


def code_problem(source: str, origin: str) -> str | None:
    """What makes a code metric's source unusable: it does not parse, or has no ``evaluate``."""
    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as exc:
        return f"{origin} does not parse: line {exc.lineno}: {exc.msg}"
    defined = {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if "evaluate" not in defined:
        return f"{origin} defines no function evaluate(instance)"
    return None


@dataclass(frozen=True)
class EvalConfig:
    criteria: dict[str, Criterion]
    custom_metrics: dict[str, Any] = field(default_factory=dict)
    #: Metrics the evaluating process computes with the user's code (agents-cli).
    code_metrics: dict[str, CodeMetricSource] = field(default_factory=dict)
    #: agents-cli's ``execution: remote`` code metrics: sent in the run, for the target to run
    #: (the service in its sandbox; an emulator only with --allow-code-metrics).
    remote_code_metrics: dict[str, CodeMetricSource] = field(default_factory=dict)
    user_simulator_config: dict[str, Any] | None = None
    source: str | None = None

    def thresholds(self) -> dict[str, float]:
        return {name: c.threshold for name, c in self.criteria.items() if c.threshold is not None}

    def code_problems(self) -> list[Problem]:
        """What stops a code metric the config runs from running."""
        sources = [*self.code_metrics.values(), *self.remote_code_metrics.values()]
        return [m.problem for m in sources if m.problem is not None]

    def judge_model(self) -> str | None:
        """The judge model the criteria name (``judge_model_options.judge_model``; the first
        one named, as the run's default judge), or None."""
        for criterion in self.criteria.values():
            options = criterion.options.get("judge_model_options") or {}
            if isinstance(options, dict) and options.get("judge_model"):
                return str(options["judge_model"])
        return None

    def run_metrics(self) -> list[EvaluationRunMetric]:
        """The criteria as run metrics: ``match_type``/``ignore_args`` travel in
        ``computationBasedMetricSpec``, a criterion's rubrics and judge in
        ``rubricBasedMetricSpec``; an agents-cli ``prompt_template`` metric as an LLM metric.
        Code metrics are not run metrics: the evaluating process computes them."""
        return [
            _remote_code_metric(self.remote_code_metrics[name])
            if name in self.remote_code_metrics
            else _run_metric(criterion, self.custom_metrics.get(name))
            for name, criterion in self.criteria.items()
            if name not in self.code_metrics
        ]


#: Beyond ADK: per-argument rules of the trajectory criteria, the keys of a final state match.
ARGUMENT_RULE_OPTIONS = ("args_match", "extra_args", "keys_match")

#: ADK's criteria that google-adk's own evaluators judge with a model: the whole criterion
#: travels with the run metric, so that the evaluator gets every field ADK reads.
ADK_JUDGED_CRITERIA = (
    "final_response_match_v2",
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
    "hallucinations_v1",
    "safety_v1",
    "per_turn_user_simulator_quality_v1",
)


def _remote_code_metric(source: CodeMetricSource) -> EvaluationRunMetric:
    """What the SDK's CodeExecutionMetric sends: the source, for the target to run."""
    return EvaluationRunMetric.model_validate(
        {
            "metric": source.name,
            "metricConfig": {"customCodeExecutionSpec": {"evaluationFunction": source.source}},
        }
    )


def _run_metric(criterion: Criterion, custom: Any = None) -> EvaluationRunMetric:
    if isinstance(custom, dict) and custom.get("prompt_template"):
        # agents-cli's LLM metric: what the SDK's LLMMetric(prompt_template=...) sends.
        spec: dict[str, Any] = {"metricPromptTemplate": custom["prompt_template"]}
        if custom.get("system_instruction"):
            spec["systemInstruction"] = custom["system_instruction"]
        return EvaluationRunMetric.model_validate(
            {"metric": criterion.metric, "metricConfig": {"llmBasedMetricSpec": spec}}
        )
    params: dict[str, Any] = {
        key: value
        for key, value in criterion.options.items()
        if key in ("match_type", "ignore_args", *ARGUMENT_RULE_OPTIONS)
    }
    if criterion.metric in ADK_JUDGED_CRITERIA:
        # Rubrics and judge options included: the spec has room for one of the metric specs.
        whole = dict(criterion.options)
        if criterion.threshold is not None:
            whole["threshold"] = criterion.threshold
        return EvaluationRunMetric(
            metric=criterion.metric,
            computation_based_metric_spec=ComputationBasedMetricSpec(
                parameters={"criterion": whole}
            ),
        )
    judge = criterion.options.get("judge_model_options") or {}
    rubric_spec = None
    if criterion.rubrics or judge.get("judge_model"):
        rubric_spec = RubricBasedMetricSpec(
            inline_rubrics=(
                InlineRubrics(rubrics=[_rubric(r) for r in criterion.rubrics])
                if criterion.rubrics
                else None
            ),
            judge_autorater_config=(
                AutoraterConfig(
                    autorater_model=judge["judge_model"], sample_count=judge.get("num_samples")
                )
                if judge.get("judge_model")
                else None
            ),
        )
    return EvaluationRunMetric(
        metric=criterion.metric,
        computation_based_metric_spec=(
            ComputationBasedMetricSpec(parameters=params) if params else None
        ),
        rubric_based_metric_spec=rubric_spec,
    )


def _rubric(rubric: dict[str, Any]) -> Rubric:
    """ADK's ``{rubric_id, rubric_content: {text_property}, type}`` as the API's Rubric."""
    content = rubric.get("rubric_content") or {}
    return Rubric.of(
        content.get("text_property") or rubric.get("description") or "",
        rubric_id=rubric["rubric_id"],
        type=rubric.get("type"),
    )


def parse_eval_config(data: Any, file: str | None = None) -> tuple[EvalConfig, list[Problem]]:
    """Parses an ADK criteria config or an agents-cli metrics config; problems are returned."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        return EvalConfig({}, source=file), [Problem(file, "$", "expected a JSON object")]
    if "metrics_to_run" in data or ("custom_metrics" in data and "criteria" not in data):
        return _agents_cli_config(data, file, problems), problems
    criteria: dict[str, Criterion] = {}
    raw = data.get("criteria")
    if not isinstance(raw, dict):
        problems.append(Problem(file, "$.criteria", "expected an object of metric -> criterion"))
        raw = {}
    for name, value in raw.items():
        path = f"$.criteria.{name}"
        if isinstance(value, bool) or not isinstance(value, int | float | dict):
            problems.append(
                Problem(file, path, "expected a threshold number or a criterion object")
            )
            continue
        if isinstance(value, int | float):
            criteria[name] = Criterion(name, float(value))
            continue
        options = _snake_keys(value)
        threshold = options.pop("threshold", None)
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
        ):
            problems.append(Problem(file, f"{path}.threshold", "expected a number"))
            threshold = None
        match_type = options.get("match_type")
        if match_type is not None and match_type not in ("EXACT", "IN_ORDER", "ANY_ORDER"):
            problems.append(
                Problem(file, f"{path}.match_type", "expected EXACT, IN_ORDER or ANY_ORDER")
            )
        rubrics = options.get("rubrics") or []
        if not isinstance(rubrics, list):
            problems.append(Problem(file, f"{path}.rubrics", "expected a list of rubrics"))
            rubrics = []
        for index, rubric in enumerate(rubrics):
            if not isinstance(rubric, dict) or "rubric_id" not in rubric:
                problems.append(
                    Problem(
                        file, f"{path}.rubrics[{index}]", "expected {rubric_id, rubric_content}"
                    )
                )
        criteria[name] = Criterion(name, None if threshold is None else float(threshold), options)
    known = {"criteria", "custom_metrics", "user_simulator_config", "_comment"}
    for key in data:
        if to_snake(key) not in known:
            problems.append(
                Problem(file, f"$.{key}", f"unknown field; expected one of {sorted(known)}")
            )
    return (
        EvalConfig(
            criteria,
            custom_metrics=_snake_keys(
                data.get("custom_metrics") or data.get("customMetrics") or {}
            ),
            user_simulator_config=_snake_keys(
                data.get("user_simulator_config") or data.get("userSimulatorConfig")
            ),
            source=file,
        ),
        problems,
    )


def _agents_cli_config(
    data: dict[str, Any], file: str | None, problems: list[Problem]
) -> EvalConfig:
    names = data.get("metrics_to_run") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        problems.append(Problem(file, "$.metrics_to_run", "expected a list of metric names"))
        names = []
    custom: dict[str, Any] = {}
    code: dict[str, CodeMetricSource] = {}
    for index, entry in enumerate(data.get("custom_metrics") or []):
        where = f"$.custom_metrics[{index}]"
        if not isinstance(entry, dict) or "name" not in entry:
            problems.append(Problem(file, where, "expected an object with a name"))
            continue
        name = str(entry["name"])
        custom[name] = {k: v for k, v in entry.items() if k != "name"}
        found = _code_source(entry, file, where, problems)
        if found is not None:
            code[name] = found
    remote: dict[str, CodeMetricSource] = {}
    for name in list(code):
        execution = custom[name].get("execution", "local")
        if execution == "remote":
            remote[name] = code.pop(name)
        elif execution != "local":
            index = next(i for i, e in enumerate(data["custom_metrics"]) if e.get("name") == name)
            problems.append(
                Problem(
                    file,
                    f"$.custom_metrics[{index}].execution",
                    f"expected 'local' or 'remote', got {execution!r}",
                )
            )
    # An unversioned predefined name is its newest version, as agents-cli sends it.
    names = [name if name in custom else newest_version(name) for name in names]
    return EvalConfig(
        {name: Criterion(name, None) for name in names},
        custom_metrics=custom,
        code_metrics={name: source for name, source in code.items() if name in names},
        remote_code_metrics={name: source for name, source in remote.items() if name in names},
        source=file,
    )


def _code_source(
    entry: dict[str, Any], file: str | None, where: str, problems: list[Problem]
) -> CodeMetricSource | None:
    """A ``custom_function`` / ``custom_function_file`` metric's source, read and checked
    (as agents-cli reads it: the file relative to the config's folder)."""
    inline, named = entry.get("custom_function"), entry.get("custom_function_file")
    if inline is None and named is None:
        return None
    if inline is not None and named is not None:
        problems.append(
            Problem(file, where, "give custom_function or custom_function_file, not both")
        )
        return None
    if named is not None:
        where += ".custom_function_file"
        if not isinstance(named, str) or not named:
            problems.append(Problem(file, where, "expected the path of a Python file"))
            return None
        path = Path(named) if Path(named).is_absolute() else Path(file or ".").parent / named
        name = str(entry["name"])
        try:
            # A regular file of bounded size: /dev/zero would be read until memory ran out,
            # and a FIFO with no writer would hang the command without a word.
            source = read_bytes(path, MAX_CODE_BYTES).decode("utf-8")
        except FormatError as exc:
            why = f"cannot read {path}: {exc.problems[0].message}"
            return CodeMetricSource(name, "", str(path), Problem(file, where, why))
        except UnicodeDecodeError:
            why = f"{path} is not UTF-8 text"
            return CodeMetricSource(name, "", str(path), Problem(file, where, why))
        origin = str(path)
    else:
        where += ".custom_function"
        if not isinstance(inline, str):
            problems.append(Problem(file, where, "expected Python source defining evaluate()"))
            return None
        source, origin = inline, f"{file or 'config'}:{where[2:]}"
    problem = code_problem(source, origin)
    return CodeMetricSource(
        str(entry["name"]),
        source,
        origin,
        None if problem is None else Problem(file, where, problem),
    )
