"""The local metric engine: hand-computed values, and agreement with the reference libraries."""

from __future__ import annotations

import random
from typing import Any

import pytest
from factories import agent_data, call, reply, user

from platform_eval import metrics
from platform_eval import types as t
from platform_eval.metrics import text, tools, vertex_text
from platform_eval.metrics._invocations import ToolCall


def _request(
    golden: dict[str, Any], *candidates: dict[str, Any], prompt: str | None = "q"
) -> t.EvaluationRequest:
    body: dict[str, Any] = {"goldenResponse": golden, "candidateResponses": list(candidates)}
    if prompt is not None:
        body["prompt"] = {"text": prompt}
    return t.EvaluationRequest.model_validate(body)


def _score(name: str, request: t.EvaluationRequest, **params: Any) -> list[float | None]:
    config = {"computationBasedMetricSpec": {"parameters": params}} if params else None
    spec = metrics.resolve(
        t.EvaluationRunMetric.model_validate(
            {"metric": name, "metricConfig": config} if config else {"metric": name}
        )
    )
    return [r.score for r in metrics.evaluate_request([spec], request)]


A = ToolCall("get_weather", {"city": "Paris"})
B = ToolCall("get_time", {"tz": "CET"})
C = ToolCall("search", {"q": "x"})


# -- trajectory and tool-call metrics, by hand -----------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "exact", "in_order", "any_order", "precision", "recall"),
    [
        ([A, B], [A, B], 1, 1, 1, 1, 1),
        ([B, A], [A, B], 0, 0, 1, 1, 1),
        ([C, A, B], [A, B], 0, 1, 1, 2 / 3, 1),
        ([A], [A, B], 0, 0, 0, 1, 1 / 2),
        ([], [A], 0, 0, 0, 0, 0),
        ([], [], 1, 1, 1, 1, 1),
        # The service's definition (metrics/tools.py): each call asked on its own whether the
        # other trajectory has it, so a repeated call the reference has is still precise.
        ([A, A], [A], 0, 1, 1, 1, 1),
        ([A], [A, A], 0, 0, 0, 1, 1),
        ([A, A, B], [A], 0, 1, 1, 2 / 3, 1),
        ([ToolCall("get_weather", {"city": "Rome"})], [A], 0, 0, 0, 0, 0),
    ],
)
def test_trajectory_family(actual, expected, exact, in_order, any_order, precision, recall) -> None:  # type: ignore[no-untyped-def]
    assert tools.trajectory_exact_match(actual, expected) == exact
    assert tools.trajectory_in_order_match(actual, expected) == in_order
    assert tools.trajectory_any_order_match(actual, expected) == any_order
    assert tools.trajectory_precision(actual, expected) == pytest.approx(precision)
    assert tools.trajectory_recall(actual, expected) == pytest.approx(recall)


@pytest.mark.parametrize(
    ("actual", "expected", "valid", "name", "key", "kv"),
    [
        ([A], [A], 1, 1, 1, 1),
        ([ToolCall("get_weather", {"city": "Rome"})], [A], 1, 1, 1, 0),
        ([ToolCall("get_weather", {"town": "Paris"})], [A], 1, 1, 0, 0),
        ([B], [A], 1, 0, 0, 0),
        ([], [A], 0, 0, 0, 0),
        ([ToolCall("", {})], [A], 0, 0, 0, 0),
        ([A, B], [A], 1, 0, 0, 0),
    ],
)
def test_tool_call_metrics(actual, expected, valid, name, key, kv) -> None:  # type: ignore[no-untyped-def]
    assert tools.tool_call_valid(actual) == valid
    assert tools.tool_name_match(actual, expected) == name
    assert tools.tool_parameter_key_match(actual, expected) == key
    assert tools.tool_parameter_kv_match(actual, expected) == kv


def test_single_tool_use_needs_its_option() -> None:
    request = _request(
        {"text": "x"},
        {"candidate": "a", "agentData": agent_data([user("q"), call("search", q="x"), reply("x")])},
    )
    assert _score("trajectory_single_tool_use", request, tool_name="search") == [1.0]
    assert _score("trajectory_single_tool_use", request, tool_name="other") == [0.0]
    with pytest.raises(metrics.MetricError, match="tool_name"):
        metrics.resolve(t.EvaluationRunMetric(metric="trajectory_single_tool_use"))


def test_engine_scores_trajectories_through_agent_data() -> None:
    golden = {
        "agentData": agent_data(
            [call("get_weather", city="Paris"), call("get_time", tz="CET"), reply("done")]
        )
    }
    swapped = {
        "candidate": "swapped",
        "agentData": agent_data(
            [
                user("q"),
                call("get_time", tz="CET"),
                call("get_weather", city="Paris"),
                reply("done"),
            ]
        ),
    }
    extra = {
        "candidate": "extra",
        "agentData": agent_data(
            [
                user("q"),
                call("search", q="x"),
                call("get_weather", city="Paris"),
                call("get_time", tz="CET"),
                reply("done"),
            ]
        ),
    }
    request = _request(golden, swapped, extra)
    assert _score("trajectory_exact_match", request) == [0.0, 0.0]
    assert _score("trajectory_in_order_match", request) == [0.0, 1.0]
    assert _score("trajectory_any_order_match", request) == [1.0, 1.0]
    assert _score("trajectory_precision", request) == [1.0, pytest.approx(2 / 3)]
    assert _score("trajectory_recall", request) == [1.0, 1.0]
    assert _score("tool_name_match", request) == [0.0, 0.0]
    assert _score("tool_call_valid", request) == [1.0, 1.0]
    assert _score("tool_trajectory_avg_score", request, match_type="ANY_ORDER") == [1.0, 1.0]
    assert _score("tool_trajectory_avg_score", request, match_type="IN_ORDER") == [0.0, 1.0]


@pytest.mark.parametrize(
    "metric",
    [
        "tool_name_match",
        "tool_parameter_key_match",
        "tool_parameter_kv_match",
        "trajectory_exact_match",
        "trajectory_in_order_match",
        "trajectory_any_order_match",
        "trajectory_precision",
        "trajectory_recall",
    ],
)
def test_the_services_tool_metrics_say_when_no_side_calls_a_tool(metric: str) -> None:
    golden = {"agentData": agent_data([reply("hi")])}
    none = {"candidate": "none", "agentData": agent_data([user("q"), reply("hi")])}
    some = {"candidate": "some", "agentData": agent_data([user("q"), call("search"), reply("hi")])}
    spec = metrics.resolve(t.EvaluationRunMetric(metric=metric))
    without, made = metrics.evaluate_request([spec], _request(golden, none, some))
    assert without.score is None and "neither the response nor the reference" in (
        without.explanation or ""
    )
    assert made.score is not None  # one side called a tool: scored as before


def test_ignore_args_and_json_equality() -> None:
    golden = {
        "agentData": agent_data(
            [call("set", level=50, tags=["a", "b"], opts={"x": 1, "y": 2}), reply("ok")]
        )
    }
    same = {
        "candidate": "same",
        "agentData": agent_data(
            [
                user("q"),
                call("set", level=50.0, tags=["a", "b"], opts={"y": 2, "x": 1}),
                reply("ok"),
            ]
        ),
    }
    string = {
        "candidate": "string",
        "agentData": agent_data(
            [
                user("q"),
                call("set", level="50", tags=["a", "b"], opts={"x": 1, "y": 2}),
                reply("ok"),
            ]
        ),
    }
    order = {
        "candidate": "order",
        "agentData": agent_data(
            [user("q"), call("set", level=50, tags=["b", "a"], opts={"x": 1, "y": 2}), reply("ok")]
        ),
    }
    request = _request(golden, same, string, order)
    assert _score("tool_trajectory_avg_score", request) == [1.0, 0.0, 0.0]
    assert _score("tool_trajectory_avg_score", request, ignore_args=True) == [1.0, 1.0, 1.0]


def test_zero_expected_calls() -> None:
    golden = {"agentData": agent_data([reply("hi")])}
    none = {"candidate": "none", "agentData": agent_data([user("q"), reply("hi")])}
    some = {"candidate": "some", "agentData": agent_data([user("q"), call("search"), reply("hi")])}
    request = _request(golden, none, some)
    assert _score("tool_trajectory_avg_score", request) == [1.0, 0.0]
    assert _score("tool_trajectory_avg_score", request, match_type="IN_ORDER") == [1.0, 1.0]
    assert _score("tool_trajectory_avg_score", request, match_type="ANY_ORDER") == [1.0, 1.0]


# -- text metrics, by hand ----------------------------------------------------------------------


def test_response_match_score_by_hand() -> None:
    # reference {the, cat, sat}, response {the, cat, ran}: P = R = 2/3.
    assert metrics.response_match_score("the cat ran", "the cat sat") == pytest.approx(2 / 3)
    assert metrics.response_match_score("", "x") == 0.0
    assert metrics.response_match_score("x", "") == 0.0
    # Stemming: "running" and "runs" both stem to "run".
    assert metrics.response_match_score("running", "runs") == 1.0
    # NFKC: full-width letters are ordinary letters; each CJK character is a token.
    assert metrics.tokenize("ＡＢＣ 台北天氣") == ["abc", "台", "北", "天", "氣"]
    assert metrics.response_match_score("台北晴天", "台北天氣") == pytest.approx(
        2 * (3 / 4) * (3 / 4) / 1.5
    )


def test_rouge1_fmeasure_is_rouge_n() -> None:
    # The per-turn fast path counts differently; it must give rouge_n's figure to the last bit.
    rng = random.Random(3)
    vocabulary = ["a", "b", "c", "d", "e", "f"]
    for _ in range(500):
        candidate = [rng.choice(vocabulary) for _ in range(rng.randint(0, 12))]
        reference = [rng.choice(vocabulary) for _ in range(rng.randint(0, 12))]
        assert text.rouge1_fmeasure(candidate, reference) == (
            text.rouge_n(candidate, reference, 1).fmeasure
        )


def test_the_stem_cache_is_bounded_and_drops_empty_stems(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "_STEMS", {})
    monkeypatch.setattr(text, "_STEMS_LIMIT", 8)
    words = [f"running{i}x" for i in range(50)]
    assert text.tokenize(" ".join(words)) == [text.stem(w) for w in words]
    assert len(text._STEMS) <= 8
    # rouge-score drops a token whose stem is empty; no stem of the Porter algorithm is, so the
    # branch is reached by a stemmer that returns one.
    monkeypatch.setattr(text, "_EMPTY_STEMS", set())
    monkeypatch.setattr(text, "stem", lambda word: "" if word == "zzzz" else word)
    assert text.tokenize("zzzz then zzzz") == ["then"]
    assert text.tokenize("zzzz then zzzz") == ["then"]  # and again, from the cache


def test_exact_match_bleu_rouge_by_hand() -> None:
    assert metrics.exact_match("Paris", "Paris") == 1.0
    assert metrics.exact_match("Paris ", "Paris") == 0.0
    assert vertex_text.bleu("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(
        1.0
    )
    assert vertex_text.bleu("", "the cat") == 0.0
    # "a b c" against "a b d": 1-grams 2/3, 2-grams 1/2, 3-grams 0/1 (smoothed to 1/2 * 1/1);
    # no 4-grams, so the effective order is 3; equal lengths, so no brevity penalty.
    import math

    expected = math.exp((math.log(200 / 3) + math.log(50) + math.log(50)) / 3) / 100
    assert vertex_text.bleu("a b c", "a b d") == pytest.approx(expected)
    # ROUGE-L: LCS of "a b c d" and "a c d e" is 3: P = 3/4, R = 3/4.
    assert vertex_text.rouge("a c d e", "a b c d", "rougeL") == pytest.approx(0.75)
    # ROUGE-1 without stemming: "cats" != "cat".
    assert vertex_text.rouge("cats", "cat", "rouge1") == 0.0
    assert vertex_text.rouge("cats", "cat", "rouge1", use_stemmer=True) == 1.0
    # Lsum: two reference lines, each fully recovered by the union of candidate lines.
    assert vertex_text.rouge("a b\nc d", "a b\nc d", "rougeLsum") == 1.0


def _random_texts(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = [
        "the",
        "cat",
        "sat",
        "on",
        "a",
        "mat",
        "dogs",
        "running",
        "quickly,",
        "Paris.",
        "weather",
        "21.5",
        "it's",
        "sunny-ish",
        "NEW",
        "York\nline",
        "two",
        "here",
        "&",
        "<b>",
    ]
    return [
        (
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 14))),
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 14))),
        )
        for _ in range(count)
    ]


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_agrees_with_rouge_score(rouge_type: str, use_stemmer: bool) -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=use_stemmer)
    for candidate, reference in _random_texts(7, 400):
        theirs = scorer.score(reference, candidate)[rouge_type].fmeasure
        assert vertex_text.rouge(candidate, reference, rouge_type, use_stemmer) == pytest.approx(
            theirs, abs=1e-12
        )


@pytest.mark.parametrize("text", ["the cat sat on the mat", "a", "hello world", "x y z w v"])
def test_bleu_of_identical_text_is_one_never_above(text: str) -> None:
    assert vertex_text.bleu(text, text) == 1.0


@pytest.mark.parametrize(
    ("metric", "config"),
    [
        ("exact_match", {"bleuSpec": {}}),
        ("bleu", {"rougeSpec": {"rougeType": "rouge1"}}),
        ("rouge_1", {"computationBasedMetricSpec": {"type": "EXACT_MATCH"}}),
        ("rouge_l", {"predefinedMetricSpec": {"metricSpecName": "bleu"}}),
    ],
)
def test_a_metric_whose_name_and_spec_disagree_is_refused(
    metric: str, config: dict[str, Any]
) -> None:
    with pytest.raises(metrics.MetricError, match="has a spec for another metric"):
        metrics.resolve(
            t.EvaluationRunMetric.model_validate({"metric": metric, "metricConfig": config})
        )
    # The same spec under its own metric's name is fine.
    named = {
        "bleuSpec": "bleu",
        "rougeSpec": "rouge_1",
        "computationBasedMetricSpec": "exact_match",
        "predefinedMetricSpec": "bleu",
    }[next(iter(config))]
    metrics.resolve(t.EvaluationRunMetric.model_validate({"metric": named, "metricConfig": config}))


def test_bleu_agrees_with_sacrebleu() -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    for candidate, reference in _random_texts(11, 600):
        theirs = sacrebleu.sentence_bleu(candidate, [reference]).score / 100
        assert vertex_text.bleu(candidate, reference) == pytest.approx(theirs, abs=1e-9)


def test_registry_describes_every_metric() -> None:
    assert {
        "exact_match",
        "bleu",
        "rouge_1",
        "rouge_l",
        "rouge_l_sum",
        "tool_call_valid",
        "tool_name_match",
        "tool_parameter_key_match",
        "tool_parameter_kv_match",
        "trajectory_exact_match",
        "trajectory_in_order_match",
        "trajectory_any_order_match",
        "trajectory_precision",
        "trajectory_recall",
        "trajectory_single_tool_use",
        "tool_trajectory_avg_score",
        "response_match_score",
    } <= set(metrics.REGISTRY)
    for info in metrics.REGISTRY.values():
        assert info.description and info.reads
        adk_defined = (
            "tool_trajectory_avg_score",
            "response_match_score",
            "rubric_based_final_response_quality_v1",
            "rubric_based_tool_use_quality_v1",
            # final_response_match_v2 is ADK's criterion and the service's predefined metric.
            "hallucinations_v1",
            "per_turn_user_simulator_quality_v1",
            "final_session_state_match",  # beyond ADK: the emulator's own
        )
        assert info.service_defined == (info.name not in adk_defined)
        assert info.needs_judge == (info.judged_scorer is not None)


def test_rouge_spec_in_metric_config() -> None:
    spec = metrics.resolve(
        t.EvaluationRunMetric.model_validate(
            {
                "metric": "rouge_1",
                "metricConfig": {"rougeSpec": {"rougeType": "rougeL", "useStemmer": True}},
            }
        )
    )
    assert spec.params == {"rouge_type": "rougeL", "use_stemmer": True}
    with pytest.raises(metrics.MetricError, match="rouge_type"):
        metrics.resolve(
            t.EvaluationRunMetric.model_validate(
                {"metric": "rouge_1", "metricConfig": {"rougeSpec": {"rougeType": "rougeX"}}}
            )
        )


@pytest.mark.parametrize(
    ("name", "sent", "canonical"),
    [
        ("rouge_l", "rougel", "rougeL"),
        ("rouge_l_sum", "rougelsum", "rougeLsum"),
        ("rouge_2", "rouge2", "rouge2"),
        ("rouge_1", "rouge1", "rouge1"),
    ],
)
def test_rouge_as_the_official_client_sends_it(name: str, sent: str, canonical: str) -> None:
    # vertexai's _transformers: rouge_spec = {"rouge_type": metric_name.replace("_", "")}
    metric = t.EvaluationRunMetric.model_validate(
        {"metric": name, "metricConfig": {"rougeSpec": {"rougeType": sent}}}
    )
    spec = metrics.resolve(metric)
    assert spec.params["rouge_type"] == canonical
    expected = vertex_text.rouge("the cat sat on the mat", "a cat sat on a mat", canonical)
    subject_request = t.EvaluationRequest.model_validate(
        {
            "prompt": {"text": "q"},
            "goldenResponse": {"text": "a cat sat on a mat"},
            "candidateResponses": [{"candidate": "c", "text": "the cat sat on the mat"}],
        }
    )
    (result,) = metrics.evaluate_request([spec], subject_request, metrics.DEFAULT_JUDGES)
    assert result.score == pytest.approx(expected)


def test_the_latest_rubric_metric_names_of_the_official_client_resolve() -> None:
    for name in ("general_quality_v2", "final_response_quality_v2", "instruction_following_v2"):
        assert metrics.resolve(t.EvaluationRunMetric(metric=name)).name == name


def test_turns_that_do_not_line_up_are_not_evaluated() -> None:
    golden = {
        "agentData": agent_data(
            [user("Weather in Paris?"), call("get_weather", city="Paris"), reply("Sunny.")],
            [user("And Oslo?"), call("get_weather", city="Oslo"), reply("Rain.")],
        )
    }
    aligned = {
        "candidate": "aligned",
        "agentData": agent_data(
            [user("weather in  PARIS?"), call("get_weather", city="Paris"), reply("Sunny.")],
            [user("And Oslo?"), call("get_weather", city="Oslo"), reply("Rain.")],
        ),
    }
    # The same two turns, recorded in the other order: turn 1 must not meet the golden's turn 1.
    reordered = {
        "candidate": "reordered",
        "agentData": agent_data(
            [user("And Oslo?"), call("get_weather", city="Oslo"), reply("Rain.")],
            [user("Weather in Paris?"), call("get_weather", city="Paris"), reply("Sunny.")],
        ),
    }
    longer = {
        "candidate": "longer",
        "agentData": agent_data(
            [user("Weather in Paris?"), call("get_weather", city="Paris"), reply("Sunny.")],
            [user("And Oslo?"), call("get_weather", city="Oslo"), reply("Rain.")],
            [user("Thanks"), reply("You're welcome.")],
        ),
    }
    request = _request(golden, aligned, reordered, longer, prompt=None)
    for name in ("tool_trajectory_avg_score", "response_match_score"):
        assert _score(name, request) == [1.0, None, None]
    spec = metrics.resolve(t.EvaluationRunMetric(metric="tool_trajectory_avg_score"))
    _, misaligned, extra = metrics.evaluate_request([spec], request)
    assert misaligned.explanation == (
        "not evaluated: turn 1 does not line up: the candidate's user message is 'And Oslo?', "
        "the goldenResponse's 'Weather in Paris?'"
    )
    assert "the candidate has 3 turns and the goldenResponse 2" in (extra.explanation or "")
