"""The local metric engine: resolves a run's metrics and scores every candidate of a request."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..types import (
    CandidateResponse,
    CandidateResult,
    EvaluationRequest,
    EvaluationRunMetric,
    Rubric,
)
from . import (
    adk_judged,
    rubric_metrics,
    service_only,
    state,
    text,
    tools,
    trajectory,
    vertex_text,
)
from ._invocations import Invocation, RequestTurns, Subject
from ._spec import (
    NOT_APPLICABLE_PREFIX,
    MetricError,
    MetricInfo,
    MetricSpec,
    NotApplicableError,
    NotEvaluatedError,
    Scorer,
)
from .arguments import ArgRules
from .code_execution import code_spec
from .judges import Judges
from .llm_metrics import custom_spec


def _check_golden(subject: Subject) -> None:
    if not subject.turns.golden:
        raise NotEvaluatedError("the request has no goldenResponse to compare against")


def aligned_invocations(subject: Subject) -> list[tuple[Invocation, Invocation]]:
    """Pairs (actual, expected) invocations, as ADK compares them turn by turn.

    Worked out once per candidate, however many per-turn metrics score it.
    """
    if subject.alignment is None:
        try:
            subject.alignment = _align(subject)
        except NotEvaluatedError as exc:
            subject.alignment = exc
    if isinstance(subject.alignment, Exception):
        raise NotEvaluatedError(str(subject.alignment))
    return subject.alignment


def _align(subject: Subject) -> list[tuple[Invocation, Invocation]]:
    _check_golden(subject)
    expected = subject.turns.expected
    actual = subject.actual
    if not expected:
        raise NotEvaluatedError("the goldenResponse is empty")
    if not actual:
        raise NotEvaluatedError("the candidate response is empty")
    if subject.turns.golden == "answer" and len(expected) == 1:
        # Only a final answer is expected: compare it with the last turn.
        actual = actual[-1:]
    context = subject.turns.context
    if context and len(actual) == len(expected) + context:
        # The candidate replays the context turns too: compare only its new turns.
        actual = actual[context:]
    elif context and len(expected) == len(actual) + context:
        # The golden response covers the whole conversation, the candidate only the new turns.
        expected = expected[context:]
    if len(actual) != len(expected):
        raise NotEvaluatedError(
            f"the candidate has {len(actual)} turns and the goldenResponse {len(expected)}; "
            "per-turn metrics need the same number"
        )
    pairs = list(zip(actual, expected, strict=True))
    for index, (turn, golden_turn) in enumerate(pairs, 1):
        if turn.user_text == golden_turn.user_text:
            continue
        said, asked = _flat(turn.user_text), _flat(golden_turn.user_text)
        if said and asked and said.casefold() != asked.casefold():
            # A recorded session whose turns are not the eval case's (reordered, another
            # conversation): scoring turn by turn would compare answers to other questions.
            raise NotEvaluatedError(
                f"turn {index} does not line up: the candidate's user message is "
                f"{_short(said)!r}, the goldenResponse's {_short(asked)!r}"
            )
    return pairs


def _flat(text: str) -> str:
    return " ".join(text.split())


def _short(flat: str, limit: int = 60) -> str:
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _result(
    spec: MetricSpec, subject: Subject, score: float, explanation: str, **extra: Any
) -> CandidateResult:
    return CandidateResult(
        candidate=subject.candidate_name,
        metric=spec.name,
        score=score,
        explanation=explanation,
        **extra,
    )


_FOUR_DIGITS = "{:.4g}".format


#: How a 0-or-1 per-turn score is written: looked up, not formatted, turn after turn.
_MATCHED = {1.0: "1", 0.0: "0"}


def _per_turn_result(
    spec: MetricSpec,
    subject: Subject,
    scores: list[float],
    description: str,
    *,
    matched_or_not: bool = False,
) -> CandidateResult:
    # %g-formatted, a third of the time of repr(round(...)), for every turn of every result.
    texts = map(_MATCHED.__getitem__ if matched_or_not else _FOUR_DIGITS, scores)
    return _result(
        spec,
        subject,
        sum(scores) / len(scores),
        f"{description}; per-turn scores {', '.join(texts)}",
        additional_results={"perTurnScores": scores},
    )


# The per-turn scorers below compute their scores in one comprehension each, with no function
# call per turn: the engine runs them for every turn of every candidate.


def arg_rules(spec: MetricSpec) -> ArgRules | None:
    """The metric's ``args_match``/``extra_args``, parsed when the metric was resolved."""
    return spec.rules if isinstance(spec.rules, ArgRules) else None


def _same_call(spec: MetricSpec) -> trajectory.SameCall:
    rules = arg_rules(spec)
    return trajectory.by_value if rules is None else trajectory.with_rules(rules)


def _tool_trajectory_avg_score(spec: MetricSpec, subject: Subject) -> CandidateResult:
    match_type = spec.params.get("match_type", "EXACT")
    ignore_args = bool(spec.params.get("ignore_args", False))
    rules = None if ignore_args else arg_rules(spec)
    matches = (
        trajectory.matcher(match_type, ignore_args)
        if rules is None
        else trajectory.rule_matcher(match_type, rules)
    )
    pairs = aligned_invocations(subject)
    scores = [
        1.0 if matches(actual.tool_calls, expected.tool_calls) else 0.0
        for actual, expected in pairs
    ]
    described = (
        f"{int(sum(scores))} of {len(scores)} turns matched the expected tool calls ({match_type}"
        + (", argument rules" if rules is not None else "")
        + ")"
    )
    missed = next((i for i, score in enumerate(scores) if not score), None)
    if missed is not None and (rules is not None or not ignore_args):
        described += f"; turn {missed}: {_turn_difference(subject, pairs, missed, rules)}"
    return _per_turn_result(spec, subject, scores, described, matched_or_not=True)


def _turn_difference(
    subject: Subject,
    pairs: Sequence[tuple[Invocation, Invocation]],
    turn: int,
    rules: ArgRules | None,
) -> str:
    """Why a turn's calls differ: worked out once per candidate and turn without rules (the
    three match types of one criterion often miss first at the same turn)."""
    actual, expected = pairs[turn]
    if rules is not None:
        return trajectory.first_difference(actual.tool_calls, expected.tool_calls, rules)
    known = subject.differences.get(turn)
    if known is None:
        known = trajectory.first_difference(actual.tool_calls, expected.tool_calls, None)
        subject.differences[turn] = known
    return known


def _response_match_score(spec: MetricSpec, subject: Subject) -> CandidateResult:
    score = text.response_match_score
    scores = [
        score(actual.final_text, expected.final_text)
        for actual, expected in aligned_invocations(subject)
    ]
    return _per_turn_result(
        spec, subject, scores, "ROUGE-1 F-measure of the final response against the golden one"
    )


def _text_pair(subject: Subject) -> tuple[str, str]:
    _check_golden(subject)
    return subject.final_text, subject.turns.expected_final_text


def _exact_match(spec: MetricSpec, subject: Subject) -> CandidateResult:
    value = text.exact_match(*_text_pair(subject))
    verdict = "equals" if value else "differs from"
    return _result(spec, subject, value, f"the response {verdict} the golden response")


_ROUGE_TYPES = {
    "rouge_1": "rouge1",
    "rouge_2": "rouge2",
    "rouge_l": "rougeL",
    "rouge_l_sum": "rougeLsum",
}
#: ROUGE types by their lowercase spelling: the official client sends ``rougel`` for rouge_l.
_ROUGE_SPELLINGS = {
    t.lower(): t for t in ("rougeL", "rougeLsum", *(f"rouge{n}" for n in range(1, 10)))
}


def _bleu(spec: MetricSpec, subject: Subject) -> CandidateResult:
    effective = spec.params.get("use_effective_order", True)
    value = vertex_text.bleu(*_text_pair(subject), effective_order=bool(effective))
    order = "effective order" if effective else "orders 1-4"
    return _result(
        spec,
        subject,
        value,
        f"sentence BLEU (13a tokens, exponential smoothing, {order}) of the final response",
    )


def _rouge(spec: MetricSpec, subject: Subject) -> CandidateResult:
    rouge_type = str(spec.params.get("rouge_type") or _ROUGE_TYPES[spec.name])
    use_stemmer = bool(spec.params.get("use_stemmer", False))
    value = vertex_text.rouge(*_text_pair(subject), rouge_type, use_stemmer)
    stemming = "with" if use_stemmer else "without"
    return _result(
        spec, subject, value, f"{rouge_type} F-measure of the final response, {stemming} stemming"
    )


def _per_turn_tool_metric(
    score_one: Callable[..., float], describe: str, takes_rules: bool = False
) -> Scorer:
    def scorer(spec: MetricSpec, subject: Subject) -> CandidateResult:
        extra = (_same_call(spec),) if takes_rules else ()
        pairs = aligned_invocations(subject)
        _refuse_no_calls(spec, pairs)
        scores = [
            score_one(actual.tool_calls, expected.tool_calls, *extra) for actual, expected in pairs
        ]
        return _per_turn_result(
            spec, subject, scores, describe + _with_rules(spec) + _why_not(spec, pairs, scores)
        )

    return scorer


def _refuse_no_calls(spec: MetricSpec, pairs: Sequence[tuple[Invocation, Invocation]]) -> None:
    """The service's tool metrics compare calls: where neither the response nor the reference
    makes one there is nothing to compare, and the service documents no score for it."""
    if not any(actual.tool_calls or expected.tool_calls for actual, expected in pairs):
        raise NotEvaluatedError(
            f"{spec.name} compares tool calls, and neither the response nor the reference "
            "calls a tool: no score (the service documents none for this case)"
        )


def _with_rules(spec: MetricSpec) -> str:
    return " (argument rules)" if arg_rules(spec) is not None else ""


def _why_not(
    spec: MetricSpec, pairs: Sequence[tuple[Invocation, Invocation]], scores: Sequence[float]
) -> str:
    """With argument rules, the first turn that missed and its first differing argument."""
    rules = arg_rules(spec)
    missed = next((i for i, score in enumerate(scores) if score < 1), None)
    if rules is None or missed is None:
        return ""
    actual, expected = pairs[missed]
    why = trajectory.first_difference(actual.tool_calls, expected.tool_calls, rules)
    return f"; turn {missed}: {why}"


def _tool_call_valid(spec: MetricSpec, subject: Subject) -> CandidateResult:
    if not subject.actual:
        raise NotEvaluatedError("the candidate response is empty")
    calls = subject.actual[-1].tool_calls
    value = tools.tool_call_valid(calls)
    hint = "" if value else "; a valid response makes at least one, each with a name and arguments"
    return _result(spec, subject, value, f"the final turn makes {len(calls)} tool calls{hint}")


def _trajectory_metric(score_all: Callable[..., float], describe: str) -> Scorer:
    def scorer(spec: MetricSpec, subject: Subject) -> CandidateResult:
        pairs = aligned_invocations(subject)
        _refuse_no_calls(spec, pairs)
        actual = [c for a, _ in pairs for c in a.tool_calls]
        expected = [c for _, e in pairs for c in e.tool_calls]
        value = score_all(actual, expected, _same_call(spec))
        rules = arg_rules(spec)
        why = ""
        if rules is not None and value < 1:
            why = f"; {trajectory.first_difference(actual, expected, rules)}"
        return _result(
            spec,
            subject,
            value,
            f"{describe}: {len(actual)} calls made, {len(expected)} expected"
            f"{_with_rules(spec)}{why}",
        )

    return scorer


def _single_tool_use(spec: MetricSpec, subject: Subject) -> CandidateResult:
    tool_name = str(spec.params["tool_name"])
    calls = [c for turn in subject.actual for c in turn.tool_calls]
    value = tools.trajectory_single_tool_use(calls, tool_name)
    return _result(spec, subject, value, f"{tool_name!r} was {'called' if value else 'not called'}")


_MATCH_TYPES = tuple(m.value for m in trajectory.MatchType)
#: Per-argument rules (beyond ADK): the metrics that compare arguments take them.
_ARG_RULE_PARAMS: dict[str, tuple[Any, ...]] = {"args_match": (), "extra_args": ("fail", "ignore")}
_TEXT_READS = ("golden", "response")
_TOOL_READS = ("golden", "trajectory")


def _computation(
    name: str,
    description: str,
    scorer: Scorer,
    reads: tuple[str, ...],
    params: Mapping[str, tuple[Any, ...]] | None = None,
) -> MetricInfo:
    return MetricInfo(
        name,
        description,
        reads=reads,
        needs_judge=False,
        service_defined=True,
        params=params or {},
        scorer=scorer,
    )


_VERTEX_COMPUTATION = (
    _computation(
        "bleu",
        "sentence BLEU of the final response against the golden one",
        _bleu,
        _TEXT_READS,
        {"use_effective_order": (True, False)},
    ),
    *(
        _computation(
            name,
            f"{rouge_type} F-measure of the final response against the golden one",
            _rouge,
            _TEXT_READS,
            {"use_stemmer": (True, False), "rouge_type": ()},
        )
        for name, rouge_type in _ROUGE_TYPES.items()
    ),
    _computation(
        "tool_call_valid",
        "1 when the final turn makes well-formed tool calls",
        _tool_call_valid,
        ("trajectory",),
    ),
    _computation(
        "tool_name_match",
        "per turn, 1 when the tool calls have the expected names in order",
        _per_turn_tool_metric(tools.tool_name_match, "tool names match"),
        _TOOL_READS,
    ),
    _computation(
        "tool_parameter_key_match",
        "per turn, 1 when names and argument names match",
        _per_turn_tool_metric(
            tools.tool_parameter_key_match, "tool names and argument names match"
        ),
        _TOOL_READS,
    ),
    _computation(
        "tool_parameter_kv_match",
        "per turn, 1 when names, argument names and values match",
        _per_turn_tool_metric(
            tools.tool_parameter_kv_match, "tool names and arguments match", takes_rules=True
        ),
        _TOOL_READS,
        _ARG_RULE_PARAMS,
    ),
    _computation(
        "trajectory_exact_match",
        "1 when all tool calls equal the expected ones, in order",
        _trajectory_metric(tools.trajectory_exact_match, "exact trajectory"),
        _TOOL_READS,
        _ARG_RULE_PARAMS,
    ),
    _computation(
        "trajectory_in_order_match",
        "1 when the expected calls were made in order (extra calls allowed)",
        _trajectory_metric(tools.trajectory_in_order_match, "expected calls in order"),
        _TOOL_READS,
        _ARG_RULE_PARAMS,
    ),
    _computation(
        "trajectory_any_order_match",
        "1 when the expected calls were all made, in any order (extra calls allowed)",
        _trajectory_metric(tools.trajectory_any_order_match, "expected calls in any order"),
        _TOOL_READS,
        _ARG_RULE_PARAMS,
    ),
    _computation(
        "trajectory_precision",
        "share of the calls made that were expected",
        _trajectory_metric(tools.trajectory_precision, "precision"),
        _TOOL_READS,
        _ARG_RULE_PARAMS,
    ),
    _computation(
        "trajectory_recall",
        "share of the expected calls that were made",
        _trajectory_metric(tools.trajectory_recall, "recall"),
        _TOOL_READS,
        _ARG_RULE_PARAMS,
    ),
    _computation(
        "trajectory_single_tool_use",
        "1 when the tool named by the `tool_name` option was called",
        _single_tool_use,
        ("trajectory",),
        {"tool_name": ()},
    ),
)

REGISTRY: dict[str, MetricInfo] = {
    info.name: info
    for info in (
        MetricInfo(
            "exact_match",
            "1 when the final response equals the golden response exactly, else 0",
            reads=("golden", "response"),
            needs_judge=False,
            service_defined=True,
            params={},
            scorer=_exact_match,
        ),
        MetricInfo(
            "tool_trajectory_avg_score",
            "ADK: per turn 1 when the tool calls match the expected ones, averaged",
            reads=("golden", "trajectory"),
            needs_judge=False,
            service_defined=False,
            params={"match_type": _MATCH_TYPES, "ignore_args": (True, False), **_ARG_RULE_PARAMS},
            scorer=_tool_trajectory_avg_score,
        ),
        MetricInfo(
            "response_match_score",
            "ADK: ROUGE-1 F-measure of the final response against the golden one, per turn",
            reads=("golden", "response"),
            needs_judge=False,
            service_defined=False,
            params={},
            scorer=_response_match_score,
        ),
        MetricInfo(
            "final_session_state_match",
            "beyond ADK: share of the case's final_session_state values the candidate's final "
            "state matches (keys_match rules on dotted paths)",
            reads=("state",),
            needs_judge=False,
            service_defined=False,
            params={"keys_match": ()},
            scorer=state.final_session_state_match,
        ),
        *_VERTEX_COMPUTATION,
        *rubric_metrics.RUBRIC_METRICS,
        *adk_judged.ADK_JUDGED_METRICS,
        *service_only.SERVICE_ONLY_METRICS,
    )
}

_REQUIRED_PARAMS = {"trajectory_single_tool_use": ("tool_name",)}


def _params(metric: EvaluationRunMetric) -> dict[str, Any]:
    params: dict[str, Any] = {}
    config = metric.metric_config
    if config is not None:
        if config.rouge_spec is not None:
            if config.rouge_spec.rouge_type:
                rouge_type = config.rouge_spec.rouge_type
                params["rouge_type"] = _ROUGE_SPELLINGS.get(rouge_type.lower(), rouge_type)
            if config.rouge_spec.use_stemmer is not None:
                params["use_stemmer"] = config.rouge_spec.use_stemmer
        if config.computation_based_metric_spec:
            params.update(config.computation_based_metric_spec.parameters or {})
        if config.predefined_metric_spec:
            params.update(config.predefined_metric_spec.metric_spec_parameters or {})
    if metric.computation_based_metric_spec:
        params.update(metric.computation_based_metric_spec.parameters or {})
    if metric.predefined_metric_spec:
        params.update(metric.predefined_metric_spec.parameters or {})
    rubric_spec = metric.rubric_based_metric_spec
    if rubric_spec is not None:
        if rubric_spec.rubric_group_key:
            params["rubric_group"] = rubric_spec.rubric_group_key
        judge = rubric_spec.judge_autorater_config
        if judge is not None and judge.autorater_model:
            params["judge_model"] = judge.autorater_model
    return params


def _metric_name(metric: EvaluationRunMetric) -> str | None:
    if metric.metric:
        return metric.metric
    if metric.predefined_metric_spec and metric.predefined_metric_spec.metric_spec_name:
        return metric.predefined_metric_spec.metric_spec_name
    config = metric.metric_config
    if config and config.predefined_metric_spec:
        return config.predefined_metric_spec.metric_spec_name
    return None


#: computationBasedMetricSpec.type -> the metric names it computes.
_COMPUTATION_TYPES = {
    "EXACT_MATCH": ("exact_match",),
    "BLEU": ("bleu",),
    "ROUGE": tuple(_ROUGE_TYPES),
}


def _computation_types(metric: EvaluationRunMetric) -> list[tuple[str, str]]:
    """Where a run metric carries a ``computationBasedMetricSpec.type`` (in ``metricConfig``,
    at the top level) and which, upper-cased."""
    config = metric.metric_config
    found = []
    for where, spec in (
        (
            "metricConfig.computationBasedMetricSpec.type",
            config and config.computation_based_metric_spec,
        ),
        ("computationBasedMetricSpec.type", metric.computation_based_metric_spec),
    ):
        if spec and spec.type:
            found.append((where, spec.type.upper()))
    return found


def _computed_by(metric: EvaluationRunMetric, name: str) -> str | None:
    """The metric an ``EXACT_MATCH`` or ``BLEU`` ``computationBasedMetricSpec.type`` computes
    where ``name`` is no metric's: the spec decides, the name labels its scores. None otherwise
    (a ROUGE spec takes a ROUGE metric's name)."""
    for _, kind in _computation_types(metric):
        if kind == "ROUGE":
            continue
        kinds = _COMPUTATION_TYPES.get(kind)
        if kinds is None:
            raise MetricError(
                f"computationBasedMetricSpec.type {kind!r} is not one the local engine "
                f"computes: {', '.join(_COMPUTATION_TYPES)}"
            )
        # A metric's own name under another's spec is a contradiction (``_spec_conflict``).
        return None if name in kinds or name in REGISTRY else kinds[0]
    return None


def _spec_conflict(name: str, metric: EvaluationRunMetric) -> str | None:
    """Why a metric's name and its spec name two different metrics (``exact_match`` with a
    BLEU spec), or None: the spec is never silently taken over the name, nor the other way
    (a name no metric has is a label for what a ``computationBasedMetricSpec`` computes)."""
    config = metric.metric_config
    specs: list[tuple[str, tuple[str, ...]]] = []
    if config is not None:
        if config.bleu_spec is not None:
            specs.append(("metricConfig.bleuSpec", ("bleu",)))
        if config.rouge_spec is not None:
            specs.append(("metricConfig.rougeSpec", _COMPUTATION_TYPES["ROUGE"]))
        if config.exact_match_spec is not None:
            specs.append(("metricConfig.exactMatchSpec", ("exact_match",)))
        predefined = config.predefined_metric_spec
        if predefined is not None and predefined.metric_spec_name:
            specs.append(("metricConfig.predefinedMetricSpec", (predefined.metric_spec_name,)))
    for where, kind in _computation_types(metric):
        specs.append((where, _COMPUTATION_TYPES.get(kind, (kind.lower(),))))
    if metric.predefined_metric_spec and metric.predefined_metric_spec.metric_spec_name:
        specs.append(("predefinedMetricSpec", (metric.predefined_metric_spec.metric_spec_name,)))
    for where, names in specs:
        if name not in names:
            return (
                f"metric {name!r} has a spec for another metric ({where} is "
                f"{' or '.join(names)}): name the metric its spec computes, or drop the spec"
            )
    return None


def _inline_rubrics(metric: EvaluationRunMetric) -> tuple[Rubric, ...]:
    spec = metric.rubric_based_metric_spec
    inline = spec.inline_rubrics if spec else None
    return tuple(inline.rubrics or []) if inline else ()


def _criterion_rubrics(params: dict[str, Any]) -> tuple[Rubric, ...]:
    """The rubrics of an ADK criterion carried whole (``{rubric_id, rubric_content:
    {text_property}, type}``), as the API's Rubric."""
    criterion = params.get("criterion")
    listed = criterion.get("rubrics") if isinstance(criterion, dict) else None
    if not isinstance(listed, list):
        return ()
    rubrics = []
    for entry in listed:
        if not isinstance(entry, dict) or not entry.get("rubric_id"):
            raise MetricError("a criterion's rubric needs a rubric_id and rubric_content")
        content = entry.get("rubric_content") or {}
        text = content.get("text_property") if isinstance(content, dict) else None
        rubrics.append(
            Rubric.of(str(text or ""), rubric_id=str(entry["rubric_id"]), type=entry.get("type"))
        )
    return tuple(rubrics)


def resolve(metric: EvaluationRunMetric) -> MetricSpec:
    """Checks a run metric against the registry and returns it with validated options."""
    code = code_spec(metric)
    if code is not None:
        return code
    custom = custom_spec(metric)
    if custom is not None:
        return custom
    name = _metric_name(metric)
    if not name:
        raise MetricError("a metric needs a name in `metric` (or predefinedMetricSpec)")
    computing = _computed_by(metric, name)
    if computing is not None:
        # The spec decides what is computed; the name labels its scores.
        # (the service accepted ``exact_match_2`` with a BLEU spec, issue 61).
        computed = resolve(metric.model_copy(update={"metric": computing}))
        return MetricSpec(name, computed.params, computed.rubrics, computes=computed)
    conflict = _spec_conflict(name, metric)
    if conflict:
        raise MetricError(conflict)
    info = REGISTRY.get(name)
    if info is None:
        close = difflib.get_close_matches(name, REGISTRY, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise MetricError(
            f"metric {name!r} is not supported by the local engine; "
            + (hint or "`platform-eval metrics list` shows every metric")
        )
    params = _params(metric)
    for key, value in params.items():
        if key not in info.params:
            raise MetricError(
                f"metric {name!r} has no option {key!r}; options: {sorted(info.params) or 'none'}"
            )
        allowed = info.params[key]
        if allowed and value not in allowed:
            raise MetricError(f"metric {name!r} option {key!r} must be one of {list(allowed)}")
    for key in _REQUIRED_PARAMS.get(name, ()):
        if not params.get(key):
            raise MetricError(f"metric {name!r} needs the option {key!r}")
    rubrics = _inline_rubrics(metric) or _criterion_rubrics(params)
    if rubrics and "rubrics" not in info.reads:
        raise MetricError(f"metric {name!r} reads no rubrics; it cannot take inline rubrics")
    if name.startswith("rouge") and "rouge_type" in params:
        rouge_type = params["rouge_type"]
        if not isinstance(rouge_type, str) or rouge_type.lower() not in _ROUGE_SPELLINGS:
            raise MetricError(f"rouge_type must be one of {list(_ROUGE_SPELLINGS.values())}")
        params["rouge_type"] = _ROUGE_SPELLINGS[rouge_type.lower()]
    rules: Any = None
    if "args_match" in params or "extra_args" in params:
        rules = ArgRules.parse(params.get("args_match"), params.get("extra_args"))
    elif name == "final_session_state_match":
        rules = state.parse_keys_match(params.get("keys_match"))
    return MetricSpec(name, params, rubrics, rules=rules)


#: The local judge alone: rubrics a program can check, no model.
DEFAULT_JUDGES = Judges()


def _score(spec: MetricSpec, subject: Subject, judges: Judges) -> CandidateResult:
    if spec.computes is not None:  # scored as the metric it computes, under its own name
        return _score(spec.computes, subject, judges).model_copy(update={"metric": spec.name})
    try:
        if spec.scorer is not None:
            return spec.scorer(spec, subject, judges)
        info = REGISTRY[spec.name]
        if info.judged_scorer is not None:
            return info.judged_scorer(spec, subject, judges)
        assert info.scorer is not None
        return info.scorer(spec, subject)
    except NotApplicableError as reason:
        return CandidateResult(
            candidate=subject.candidate_name,
            metric=spec.name,
            explanation=f"{NOT_APPLICABLE_PREFIX}{reason}",
        )
    except NotEvaluatedError as reason:
        return CandidateResult(
            candidate=subject.candidate_name,
            metric=spec.name,
            explanation=f"not evaluated: {reason}",
        )


def score(
    spec: MetricSpec,
    request: EvaluationRequest,
    candidate: CandidateResponse,
    judges: Judges = DEFAULT_JUDGES,
) -> CandidateResult:
    """Scores one candidate; a candidate that cannot be scored gets no score and a reason."""
    return _score(spec, Subject(RequestTurns(request), candidate), judges)


def evaluate_request(
    specs: Sequence[MetricSpec],
    request: EvaluationRequest,
    judges: Judges = DEFAULT_JUDGES,
    *,
    case: str = "",
    metadata: Mapping[str, Any] | None = None,
) -> list[CandidateResult]:
    """One CandidateResult per candidate x metric, candidates in request order.

    Each response is read into turns once, whatever the number of metrics. ``case`` names
    the eval case to a judge's accounting and errors; ``metadata`` is the item's (an eval
    case's initial and final session state, which final_session_state_match reads).
    """
    return _evaluate(
        specs, RequestTurns(request), request.candidate_responses or [], judges, case, metadata
    )


def evaluate_stored_request(
    specs: Sequence[MetricSpec],
    stored: Mapping[str, Any],
    judges: Judges = DEFAULT_JUDGES,
    *,
    case: str = "",
    metadata: Mapping[str, Any] | None = None,
) -> list[CandidateResult]:
    """``evaluate_request`` of a request as the emulator's store keeps it: its camelCase JSON,
    checked when it was written. The turns are read from the JSON; the request's model is
    built only for a metric that reads it (a judge's prompt, a code metric's instance), so a
    run of computed metrics does not check each stored request again.
    """
    candidates = stored.get("candidateResponses") or []
    return _evaluate(specs, RequestTurns(stored=stored), candidates, judges, case, metadata)


def _evaluate(
    specs: Sequence[MetricSpec],
    request_turns: RequestTurns,
    candidates: Sequence[CandidateResponse | Mapping[str, Any]],
    judges: Judges,
    case: str,
    metadata: Mapping[str, Any] | None,
) -> list[CandidateResult]:
    results: list[CandidateResult] = []
    for candidate in candidates:
        subject = Subject(request_turns, candidate, case, metadata)
        results.extend(_score(spec, subject, judges) for spec in specs)
    return results
