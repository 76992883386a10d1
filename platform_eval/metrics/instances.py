"""``:evaluateInstances`` computed by the local engine, with the numbers a run gives.

Every input is read into what a run scores, an ``EvaluationRequest`` and an
``EvaluationRunMetric``, and scored by ``resolve`` and ``evaluate_request``: the same code, so
the same score for the same metric. Two forms reach here:

* the metric-based form the official SDK sends for LLM, predefined and code metrics:
  ``metrics`` (or ``metricSources``) and one ``instance``, answered by ``metricResults``;
* the per-metric inputs (``exactMatchInput``, ``bleuInput``, ``rougeInput``, the tool-call and
  trajectory inputs, ``pointwiseMetricInput``), each answered by its result field.

An input the engine cannot compute (COMET and MetricX need their models; the service's own
prompts for ``coherenceInput`` and the like are not published) raises ``UnimplementedError``,
which names it and says why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from google.genai.types import Content, FunctionCall, Part
from pydantic.alias_generators import to_camel

from ..types import (
    CandidateResponse,
    CandidateResult,
    ComputationBasedMetricSpec,
    EvaluationPrompt,
    EvaluationRequest,
    EvaluationRunMetric,
    MetricAutoraterConfig,
    MetricConfig,
    PairwiseMetricSpec,
    PointwiseMetricSpec,
    RougeSpec,
    Status,
)
from ..types.instances import (
    EvaluateInstancesRequest,
    EvaluationInstance,
    InstanceData,
    MetricResult,
)
from . import model_rubrics
from ._spec import MetricError, MetricSpec, NotEvaluatedError
from .computable import why_not_computable
from .engine import evaluate_request, resolve
from .judges import JudgeError, Judges
from .llm_metrics import fill
from .model_judge import CallLabel

#: google.rpc code of INVALID_ARGUMENT: a metric result that has no score says why with it.
_INVALID_ARGUMENT = 3
#: The name a metric-based request's metric is known by when its spec carries none.
_UNNAMED = {
    "llm_based_metric_spec": "llm_based_metric",
    "pointwise_metric_spec": "pointwise_metric",
    "custom_code_execution_spec": "custom_code_execution",
}


class UnimplementedError(MetricError):
    """An input of the request the local engine does not compute (answered 501)."""


@dataclass(frozen=True)
class _Legacy:
    """One per-metric input: the metric it computes, how its instances are read, and the
    field its values are answered in."""

    metric: str
    read: Callable[[Mapping[str, Any], str], list[EvaluationRequest]]
    result: str
    values: str
    #: metricSpec keys it takes, and how they become the run metric's options.
    spec_keys: tuple[str, ...] = ()


def _camel(value: Any, where: str, allowed: Sequence[str]) -> dict[str, Any]:
    """A JSON object with camelCase keys (the service takes both spellings); a key it does not
    know is an error naming it."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise MetricError(f"{where}: expected an object")
    found: dict[str, Any] = {}
    for key, inner in value.items():
        camel = to_camel(str(key)) if "_" in str(key) else str(key)
        if camel not in allowed:
            raise MetricError(f"{where}.{key}: unknown field; expected one of {sorted(allowed)}")
        found[camel] = inner
    return found


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MetricError(f"{where}: expected a string")
    return value


def _instances(value: Mapping[str, Any], where: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    listed = value.get("instances")
    if not isinstance(listed, list) or not listed:
        raise MetricError(f"{where}.instances: expected a non-empty list of instances")
    return [_camel(one, f"{where}.instances[{i}]", keys) for i, one in enumerate(listed)]


def _text_request(prediction: str, reference: str | None) -> EvaluationRequest:
    return EvaluationRequest(
        prompt=EvaluationPrompt(text=""),
        golden_response=None if reference is None else CandidateResponse(text=reference),
        candidate_responses=[CandidateResponse(candidate="prediction", text=prediction)],
    )


def _read_text_pairs(value: Mapping[str, Any], where: str) -> list[EvaluationRequest]:
    return [
        _text_request(
            _string(one.get("prediction"), f"{where}.instances[{i}].prediction"),
            _string(one.get("reference"), f"{where}.instances[{i}].reference"),
        )
        for i, one in enumerate(_instances(value, where, ("prediction", "reference")))
    ]


def _tool_turn(raw: str) -> Content:
    """The service's tool-call text (``{"content": ..., "tool_calls": [{"name", "arguments"}]}``)
    as one model turn; text that is not that JSON is a turn of text with no calls."""
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return Content(role="model", parts=[Part(text=raw)])
    parts: list[Part] = []
    for call in parsed.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        args = call.get("arguments")
        parts.append(
            Part(
                function_call=FunctionCall(
                    name=str(call.get("name") or ""),
                    args=args if isinstance(args, dict) else {},
                )
            )
        )
    content = parsed.get("content")
    if isinstance(content, str) and content:
        parts.append(Part(text=content))
    return Content(role="model", parts=parts or [Part(text="")])


def _read_tool_pairs(value: Mapping[str, Any], where: str) -> list[EvaluationRequest]:
    requests = []
    for i, one in enumerate(_instances(value, where, ("prediction", "reference"))):
        prediction = _string(one.get("prediction"), f"{where}.instances[{i}].prediction")
        reference = one.get("reference")
        golden = None
        if reference is not None:
            text = _string(reference, f"{where}.instances[{i}].reference")
            golden = CandidateResponse(events=[_tool_turn(text)])
        requests.append(
            EvaluationRequest(
                prompt=EvaluationPrompt(text=""),
                golden_response=golden,
                candidate_responses=[
                    CandidateResponse(candidate="prediction", events=[_tool_turn(prediction)])
                ],
            )
        )
    return requests


def _trajectory_turn(value: Any, where: str) -> Content:
    trajectory = _camel(value, where, ("toolCalls",))
    calls = trajectory.get("toolCalls") or []
    if not isinstance(calls, list):
        raise MetricError(f"{where}.toolCalls: expected a list")
    parts = []
    for i, raw in enumerate(calls):
        call = _camel(raw, f"{where}.toolCalls[{i}]", ("toolName", "toolInput"))
        tool_input = _string(call.get("toolInput"), f"{where}.toolCalls[{i}].toolInput")
        try:
            args = json.loads(tool_input) if tool_input.strip() else {}
        except ValueError:
            raise MetricError(
                f"{where}.toolCalls[{i}].toolInput: expected the arguments as a JSON object"
            ) from None
        if not isinstance(args, dict):
            raise MetricError(f"{where}.toolCalls[{i}].toolInput: expected a JSON object")
        name = _string(call.get("toolName"), f"{where}.toolCalls[{i}].toolName")
        parts.append(Part(function_call=FunctionCall(name=name, args=args)))
    return Content(role="model", parts=parts or [Part(text="")])


def _read_trajectories(value: Mapping[str, Any], where: str) -> list[EvaluationRequest]:
    keys = ("predictedTrajectory", "referenceTrajectory")
    requests = []
    for i, one in enumerate(_instances(value, where, keys)):
        at = f"{where}.instances[{i}]"
        predicted = _trajectory_turn(one.get("predictedTrajectory"), f"{at}.predictedTrajectory")
        reference = one.get("referenceTrajectory")
        golden = (
            None
            if reference is None
            else CandidateResponse(
                events=[_trajectory_turn(reference, f"{at}.referenceTrajectory")]
            )
        )
        requests.append(
            EvaluationRequest(
                prompt=EvaluationPrompt(text=""),
                golden_response=golden,
                candidate_responses=[CandidateResponse(candidate="prediction", events=[predicted])],
            )
        )
    return requests


def _legacy_inputs() -> dict[str, _Legacy]:
    text = {
        "exactMatchInput": _Legacy("exact_match", _read_text_pairs, "exactMatchResults", ""),
        "bleuInput": _Legacy("bleu", _read_text_pairs, "bleuResults", "", ("useEffectiveOrder",)),
        "rougeInput": _Legacy(
            "rouge",
            _read_text_pairs,
            "rougeResults",
            "",
            ("rougeType", "useStemmer", "splitSummaries"),
        ),
    }
    tool = {
        f"{to_camel(name)}Input": _Legacy(name, _read_tool_pairs, f"{to_camel(name)}Results", "")
        for name in (
            "tool_call_valid",
            "tool_name_match",
            "tool_parameter_key_match",
            "tool_parameter_kv_match",
        )
    }
    tool["toolParameterKvMatchInput"] = _Legacy(
        "tool_parameter_kv_match",
        _read_tool_pairs,
        "toolParameterKvMatchResults",
        "",
        ("useStrictStringMatch",),
    )
    trajectories = {
        f"{to_camel(name)}Input": _Legacy(
            name,
            _read_trajectories,
            f"{to_camel(name)}Results",
            "",
            ("toolName",) if name == "trajectory_single_tool_use" else (),
        )
        for name in (
            "trajectory_exact_match",
            "trajectory_in_order_match",
            "trajectory_any_order_match",
            "trajectory_precision",
            "trajectory_recall",
            "trajectory_single_tool_use",
        )
    }
    found = {**text, **tool, **trajectories}
    # Each result field lists its values as ``<metric>MetricValues``.
    return {
        key: _Legacy(
            entry.metric,
            entry.read,
            entry.result,
            entry.result.removesuffix("Results") + "MetricValues",
            entry.spec_keys,
        )
        for key, entry in found.items()
    }


LEGACY_INPUTS = _legacy_inputs()
#: The per-metric inputs a judge model decides, with a prompt template of the request's own.
JUDGED_INPUTS = ("pointwiseMetricInput", "pairwiseMetricInput")

#: The inputs the engine does not compute, and why.
UNIMPLEMENTED_INPUTS = {
    "cometInput": "COMET scores with its own translation model, which the emulator does not have",
    "metricxInput": "MetricX scores with its own translation model, which the emulator does not "
    "have",
    **{
        f"{name}Input": f"the service's own prompt for {name} is not published; send "
        "pointwiseMetricInput with a prompt template, or metrics with a predefinedMetricSpec "
        "(`platform-eval metrics list` shows what the engine computes)"
        for name in (
            "coherence",
            "fluency",
            "safety",
            "groundedness",
            "fulfillment",
            "summarizationQuality",
            "summarizationHelpfulness",
            "summarizationVerbosity",
            "questionAnsweringQuality",
            "questionAnsweringRelevance",
            "questionAnsweringHelpfulness",
            "questionAnsweringCorrectness",
            "pairwiseSummarizationQuality",
            "pairwiseQuestionAnsweringQuality",
            "rubricBasedInstructionFollowing",
        )
    },
}
_METRIC_FORM = ("metrics", "metricSources", "instance", "autoraterConfig")
_ALWAYS = ("location", "allowCrossRegionModel")


def _legacy_metric(entry: _Legacy, spec: Mapping[str, Any]) -> EvaluationRunMetric:
    if entry.metric == "rouge":
        rouge_type = str(spec.get("rougeType") or "rouge1")
        config = MetricConfig(rouge_spec=RougeSpec(rouge_type=rouge_type))
        return EvaluationRunMetric(
            metric=metric_name(config),
            metric_config=MetricConfig(
                rouge_spec=RougeSpec(rouge_type=rouge_type, use_stemmer=spec.get("useStemmer"))
            ),
        )
    if entry.metric == "bleu" and spec.get("useEffectiveOrder") is False:
        raise UnimplementedError(
            "bleuInput.metricSpec.useEffectiveOrder: the engine computes sentence BLEU with the "
            "effective order (as sacrebleu does); false is not computed"
        )
    if entry.metric == "trajectory_single_tool_use":
        tool = spec.get("toolName")
        if not isinstance(tool, str) or not tool:
            raise MetricError(
                "trajectorySingleToolUseInput.metricSpec.toolName: a tool name is required"
            )
        return EvaluationRunMetric(
            metric=entry.metric,
            computation_based_metric_spec=ComputationBasedMetricSpec(
                parameters={"tool_name": tool}
            ),
        )
    return EvaluationRunMetric(metric=entry.metric)


def _checked(metric: EvaluationRunMetric, judges: Judges, where: str) -> Any:
    try:
        spec = resolve(metric)
    except MetricError as exc:
        raise MetricError(f"{where}: {exc}") from None
    why = why_not_computable(spec, judges)
    if why is not None:
        raise MetricError(f"{where}: {why}")
    return spec


def _evaluate_legacy(key: str, value: Any, judges: Judges) -> dict[str, Any]:
    entry = LEGACY_INPUTS[key]
    body = _camel(value, key, ("metricSpec", "instances"))
    spec_values = _camel(body.get("metricSpec"), f"{key}.metricSpec", entry.spec_keys)
    spec = _checked(_legacy_metric(entry, spec_values), judges, key)
    scores = []
    for index, request in enumerate(entry.read(body, key)):
        (result,) = evaluate_request([spec], request, judges, case=f"{key}.instances[{index}]")
        if result.score is None:
            raise MetricError(f"{key}.instances[{index}]: {result.explanation}")
        scores.append({"score": result.score})
    return {entry.result: {entry.values: scores}}


def _pointwise_variables(instance: Mapping[str, Any], where: str) -> dict[str, str]:
    found = _camel(instance, where, ("jsonInstance", "contentMapInstance"))
    if "jsonInstance" in found:
        raw = _string(found["jsonInstance"], f"{where}.jsonInstance")
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise MetricError(f"{where}.jsonInstance: expected a JSON object in the string")
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()}
    at = f"{where}.contentMapInstance"
    content_map = _camel(found.get("contentMapInstance"), at, ("values",))
    values = content_map.get("values") or {}
    if not isinstance(values, dict) or not values:
        raise MetricError(f"{where}: expected jsonInstance or contentMapInstance.values")
    variables = {}
    for name, listed in values.items():
        contents = _camel(listed, f"{at}.values.{name}", ("contents",)).get("contents") or []
        data = InstanceData.model_validate({"contents": {"contents": contents}})
        variables[str(name)] = _text(data)
    return variables


_Judged = TypeVar("_Judged", PointwiseMetricSpec, PairwiseMetricSpec)


def _judged_input(model: type[_Judged], value: Any, key: str) -> tuple[_Judged, dict[str, str]]:
    """A judged input's metric spec and its instance's template variables."""
    body = _camel(value, key, ("metricSpec", "instance"))
    try:
        spec = model.model_validate(body.get("metricSpec") or {})
    except ValueError as exc:
        raise MetricError(f"{key}.metricSpec: {exc}") from None
    output = spec.custom_output_format_config
    if output is not None and output.return_raw_output:
        raise UnimplementedError(
            f"{key}.metricSpec.customOutputFormatConfig.returnRawOutput: raw judge outputs are "
            "not returned by the emulator"
        )
    return spec, _pointwise_variables(body.get("instance") or {}, f"{key}.instance")


def _evaluate_pointwise(value: Any, judges: Judges) -> dict[str, Any]:
    key = "pointwiseMetricInput"
    metric_spec, variables = _judged_input(PointwiseMetricSpec, value, key)
    response = variables.pop("response", "")
    reference = variables.pop("reference", None)
    request = EvaluationRequest(
        prompt=EvaluationPrompt(value=dict(variables)),
        golden_response=None if reference is None else CandidateResponse(text=reference),
        candidate_responses=[CandidateResponse(candidate="response", text=response)],
    )
    metric = EvaluationRunMetric(
        metric="pointwise_metric", metric_config=MetricConfig(pointwise_metric_spec=metric_spec)
    )
    spec = _checked(metric, judges, key)
    (result,) = evaluate_request([spec], request, judges, case=key)
    if result.score is None:
        raise MetricError(f"{key}: {result.explanation}")
    answer: dict[str, Any] = {"score": result.score}
    if result.explanation:
        answer["explanation"] = result.explanation
    return {"pointwiseMetricResult": answer}


def _evaluate_pairwise(value: Any, judges: Judges) -> dict[str, Any]:
    """``pairwiseMetricInput``: the template filled from the instance and the model asked which
    response is better (``pairwiseChoice``: CANDIDATE, BASELINE or TIE)."""
    key = "pairwiseMetricInput"
    spec, variables = _judged_input(PairwiseMetricSpec, value, key)
    if not spec.metric_prompt_template:
        raise MetricError(f"{key}.metricSpec.metricPromptTemplate: the judge's prompt")
    candidate = spec.candidate_response_field_name or "response"
    baseline = spec.baseline_response_field_name or "baseline_model_response"
    for field in (candidate, baseline):
        if field not in variables:
            raise MetricError(f"{key}.instance: has no {field!r} to compare")
    if judges.model is None:
        raise MetricError(
            f"{key}: a judge model decides it, and none is configured "
            "(--judge-model or PLATFORM_EVAL_JUDGE_MODEL)"
        )
    try:
        prompt = fill(spec.metric_prompt_template, variables)
        choice, explanation = model_rubrics.choose(
            judges.model,
            judges.model.model,
            prompt,
            spec.system_instruction,
            CallLabel("pairwise_metric", key, candidate),
        )
    except (NotEvaluatedError, JudgeError) as exc:
        raise MetricError(f"{key}: {exc}") from None
    answer = {"pairwiseChoice": choice}
    if explanation:
        answer["explanation"] = explanation
    return {"pairwiseMetricResult": answer}


def _text(data: InstanceData | None) -> str:
    """An instance's text: its ``text``, else the text of its contents, turn after turn."""
    if data is None:
        return ""
    if data.text is not None:
        return data.text
    contents = data.contents.contents if data.contents else None
    texts = [
        part.text
        for content in contents or []
        for part in content.parts or []
        if part.text is not None and not part.thought
    ]
    return "\n\n".join(texts)


def instance_request(instance: EvaluationInstance) -> EvaluationRequest:
    """The instance as a request of one candidate (``response``), scored as a run scores it."""
    prompt_text = _text(instance.prompt) if instance.prompt is not None else None
    mapped = instance.other_data.map_instance if instance.other_data else None
    other = {name: _text(data) for name, data in (mapped or {}).items()}
    if other:
        given = {"prompt": prompt_text} if prompt_text else {}
        prompt = EvaluationPrompt(value={**given, **other})
    elif prompt_text is not None or instance.agent_eval_data is None:
        prompt = EvaluationPrompt(text=prompt_text or "")
    else:
        prompt = None
    if instance.agent_eval_data is not None and instance.agent_eval_data.turns:
        candidate = CandidateResponse(candidate="response", agent_data=instance.agent_eval_data)
    else:
        candidate = CandidateResponse(candidate="response", text=_text(instance.response))
    golden = None
    if instance.reference is not None:
        golden = CandidateResponse(text=_text(instance.reference))
    return EvaluationRequest(
        prompt=prompt,
        golden_response=golden,
        rubrics=instance.rubric_groups,
        candidate_responses=[candidate],
    )


def metric_name(config: MetricConfig) -> str:
    """The engine's name of a metric sent without one (the API's Metric has no name field)."""
    if config.predefined_metric_spec and config.predefined_metric_spec.metric_spec_name:
        return config.predefined_metric_spec.metric_spec_name
    if config.exact_match_spec is not None:
        return "exact_match"
    if config.bleu_spec is not None:
        return "bleu"
    if config.rouge_spec is not None:
        rouge_type = (config.rouge_spec.rouge_type or "rouge1").lower()
        return {"rouge2": "rouge_2", "rougel": "rouge_l", "rougelsum": "rouge_l_sum"}.get(
            rouge_type, "rouge_1"
        )
    computed = config.computation_based_metric_spec
    if computed is not None and computed.type:
        return {"EXACT_MATCH": "exact_match", "BLEU": "bleu", "ROUGE": "rouge_1"}.get(
            computed.type.upper(), computed.type.lower()
        )
    if config.metadata is not None and config.metadata.title:
        return config.metadata.title
    for field, name in _UNNAMED.items():
        if getattr(config, field) is not None:
            return name
    if config.pairwise_metric_spec is not None:
        raise UnimplementedError(
            "pairwiseMetricSpec: pairwise judging of two responses is not in the local engine yet"
        )
    if config.step_based_llm_metric_spec is not None:
        raise UnimplementedError(
            "stepBasedLlmMetricSpec: step-based judging is not in the local engine yet"
        )
    raise MetricError("a metric needs a spec (predefinedMetricSpec, llmBasedMetricSpec, ...)")


def _metric_result(result: CandidateResult) -> MetricResult:
    if result.score is None:
        why = result.explanation or "not evaluated"
        return MetricResult(error=Status(code=_INVALID_ARGUMENT, message=why))
    return MetricResult(
        score=result.score,
        explanation=result.explanation,
        rubric_verdicts=result.rubric_verdicts,
    )


def _evaluate_metrics(
    request: EvaluateInstancesRequest,
    judges: Judges,
    registered: Callable[[str], MetricConfig],
) -> dict[str, Any]:
    configs: list[tuple[str, MetricConfig]] = [
        (f"metrics[{i}]", config) for i, config in enumerate(request.metrics or [])
    ]
    for i, source in enumerate(request.metric_sources or []):
        where = f"metricSources[{i}]"
        if source.metric is not None:
            configs.append((where, source.metric))
        elif source.metric_resource_name:
            configs.append((where, registered(source.metric_resource_name)))
        else:
            raise MetricError(f"{where}: needs metric or metricResourceName")
    if not configs:
        raise MetricError("metrics: name at least one metric (or metricSources)")
    if request.instance is None:
        raise MetricError("instance: the instance to evaluate is required with metrics")
    specs = metric_specs(configs, judges, request.autorater_config)
    results = score_instance(specs, request.instance, judges)
    return {"metricResults": [r.to_wire() for r in results]}


def metric_specs(
    configs: Sequence[tuple[str, MetricConfig]],
    judges: Judges,
    judge: MetricAutoraterConfig | None = None,
) -> list[MetricSpec]:
    """The API's metrics (each with where it was given) as the engine's, checked computable;
    ``judge`` is the request's judge model, for LLM metrics that name none."""
    specs = []
    for where, config in configs:
        llm = config.llm_based_metric_spec
        if judge and judge.autorater_model and llm and llm.judge_autorater_config is None:
            own = llm.model_copy(update={"judge_autorater_config": judge})
            config = config.model_copy(update={"llm_based_metric_spec": own})
        try:
            name = metric_name(config)
        except UnimplementedError as exc:
            raise UnimplementedError(f"{where}.{exc}") from None
        metric = EvaluationRunMetric(metric=name, metric_config=config)
        specs.append(_checked(metric, judges, where))
    return specs


def score_instance(
    specs: Sequence[MetricSpec],
    instance: EvaluationInstance,
    judges: Judges,
    case: str = "instance",
) -> list[MetricResult]:
    """One MetricResult per metric for the instance, as a run scores it."""
    results = evaluate_request(specs, instance_request(instance), judges, case=case)
    return [_metric_result(r) for r in results]


def evaluate_instances(
    body: Mapping[str, Any],
    judges: Judges,
    *,
    parse: Callable[[dict[str, Any]], EvaluateInstancesRequest] = (
        EvaluateInstancesRequest.model_validate
    ),
    registered: Callable[[str], MetricConfig] | None = None,
) -> dict[str, Any]:
    """The ``EvaluateInstancesResponse`` of a request body. MetricError (a bad request, naming
    the field) or UnimplementedError (an input the engine does not compute).

    ``parse`` reads the metric-based form (the emulator passes its own, which checks the API
    version); ``registered`` looks up a ``metricSources[].metricResourceName``.
    """
    keys = {(to_camel(k) if "_" in k else k): k for k in body}
    inputs = [k for k in keys if k.endswith("Input")]
    metric_form = [k for k in keys if k in _METRIC_FORM]
    unknown = sorted(
        k for k in keys if k not in _METRIC_FORM and k not in _ALWAYS and not k.endswith("Input")
    )
    if unknown:
        raise MetricError(f"{unknown[0]}: not a field of EvaluateInstancesRequest")
    if len(inputs) > 1 or (inputs and metric_form):
        named = inputs + (["metrics"] if metric_form else [])
        raise MetricError(f"one kind of input per request: this one has {', '.join(sorted(named))}")
    if inputs:
        (key,) = inputs
        value = body[keys[key]]
        if key in UNIMPLEMENTED_INPUTS:
            raise UnimplementedError(f"{key}: {UNIMPLEMENTED_INPUTS[key]}")
        if key == "pointwiseMetricInput":
            return _evaluate_pointwise(value, judges)
        if key == "pairwiseMetricInput":
            return _evaluate_pairwise(value, judges)
        if key not in LEGACY_INPUTS:
            raise MetricError(f"{key}: not a field of EvaluateInstancesRequest")
        return _evaluate_legacy(key, value, judges)
    if not metric_form:
        raise MetricError(
            "the request names no input: send metrics and an instance, or one of the per-metric "
            "inputs (exactMatchInput, bleuInput, ...)"
        )
    form = {keys[k]: body[keys[k]] for k in metric_form}
    form.update({keys[k]: body[keys[k]] for k in keys if k in _ALWAYS})
    request = parse(form)

    def unregistered(name: str) -> MetricConfig:
        raise MetricError(f"metricSources: {name} cannot be looked up here")

    return _evaluate_metrics(request, judges, registered or unregistered)


#: A dataset row's columns that are the instance's own; any other string column is a
#: template variable (``otherData``).
_ROW_FIELDS = ("prompt", "response", "reference")


def row_instance(row: Mapping[str, Any], where: str) -> EvaluationInstance:
    """A dataset row (``{"prompt": ..., "response": ..., "reference": ..., "context": ...}``,
    each a string or an InstanceData object) as an instance."""
    fields: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for key, value in row.items():
        data = {"text": value} if isinstance(value, str) else value
        if not isinstance(data, Mapping):
            data = {"text": json.dumps(value)}
        if key in _ROW_FIELDS:
            fields[key] = data
        elif key in ("rubric_groups", "rubricGroups"):
            fields["rubric_groups"] = value
        else:
            other[key] = data
    if other:
        fields["other_data"] = {"map_instance": other}
    try:
        return EvaluationInstance.model_validate(fields)
    except ValueError as exc:
        raise MetricError(f"{where}: {exc}") from None
