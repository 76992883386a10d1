"""Per-argument rules on the trajectory criteria (``args_match``, ``extra_args``): scores
computed by hand, explanations naming the argument and the rule, and input errors naming the
rule. Without rules the scores are ADK's (test_adk_agreement compares them with google-adk)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from factories import agent_data, call, reply, user

from platform_eval import metrics
from platform_eval import types as t
from platform_eval.cli import main

GOLDEN = dict(
    date="2026-05-01",
    price=199.99,
    query="cheap flights",
    city="Paris",
    request_id="r1",
    filters={"stops": 0, "cabin": "economy"},
)


def _request(*candidates: dict[str, Any]) -> t.EvaluationRequest:
    golden = {"agentData": agent_data([call("search_flights", **GOLDEN), reply("found")])}
    return t.EvaluationRequest.model_validate(
        {"prompt": {"text": "q"}, "goldenResponse": golden, "candidateResponses": list(candidates)}
    )


def _candidate(name: str, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"candidate": name, "agentData": agent_data([user("q"), *calls, reply("found")])}


def _flight(**changes: Any) -> dict[str, Any]:
    args = {**GOLDEN, **changes}
    return call("search_flights", **{k: v for k, v in args.items() if v is not _DROP})


_DROP = object()


def _results(
    request: t.EvaluationRequest, metric: str = "tool_trajectory_avg_score", **params: Any
) -> list[t.CandidateResult]:
    body: dict[str, Any] = {"metric": metric}
    if params:
        body["metricConfig"] = {"computationBasedMetricSpec": {"parameters": params}}
    spec = metrics.resolve(t.EvaluationRunMetric.model_validate(body))
    return metrics.evaluate_request([spec], request)


def _scores(request: t.EvaluationRequest, **params: Any) -> list[float | None]:
    return [r.score for r in _results(request, **params)]


@pytest.mark.parametrize(
    ("changes", "rules", "extra_args", "adk", "ours"),
    [
        # Rules that turn ADK's 0 into a 1.
        (
            {"date": "2026-05-03"},
            {"search_flights": {"date": {"regex": r"2026-\d{2}-\d{2}"}}},
            None,
            0,
            1,
        ),
        ({"price": 199.995}, {"search_flights": {"price": {"tolerance": 0.01}}}, None, 0, 1),
        (
            {"query": "Find CHEAP flights to Paris"},
            {"search_flights": {"query": "contains"}},
            None,
            0,
            1,
        ),
        ({"city": "paris"}, {"search_flights": {"city": "case_insensitive"}}, None, 0, 1),
        ({"request_id": "r2"}, {"*": {"request_id": "ignore"}}, None, 0, 1),
        ({"request_id": _DROP}, {"*": {"request_id": "ignore"}}, None, 0, 1),
        (
            {"filters": {"stops": 0, "cabin": "Economy"}},
            {"search_flights": {"filters.cabin": "case_insensitive"}},
            None,
            0,
            1,
        ),
        ({"filters": {"stops": 2}}, {"search_flights": {"filters": "ignore"}}, None, 0, 1),
        ({"currency": "EUR"}, None, "ignore", 0, 1),
        ({"trace": "t-9"}, {"*": {"trace": "ignore"}}, "fail", 0, 1),  # ignored: never extra
        # The tool's own rule wins over "*" for the same argument.
        (
            {"city": "PARIS"},
            {"*": {"city": "exact"}, "search_flights": {"city": "case_insensitive"}},
            None,
            0,
            1,
        ),
        # Rules that do not let a real difference through.
        (
            {"date": "26-05-03"},
            {"search_flights": {"date": {"regex": r"2026-\d{2}-\d{2}"}}},
            None,
            0,
            0,
        ),
        ({"price": 200.5}, {"search_flights": {"price": {"tolerance": 0.01}}}, None, 0, 0),
        ({"query": "hotels"}, {"search_flights": {"query": "contains"}}, None, 0, 0),
        ({"price": "199.99"}, {"search_flights": {"price": {"tolerance": 1}}}, None, 0, 0),
        # extra_args: fail (the default) turns what ignore lets through into a 0.
        ({"currency": "EUR"}, None, "fail", 0, 0),
        (
            {"currency": "EUR", "city": "paris"},
            {"search_flights": {"city": "case_insensitive"}},
            None,
            0,
            0,
        ),
    ],
)
def test_argument_rules_by_hand(
    changes: dict[str, Any], rules: Any, extra_args: str | None, adk: float, ours: float
) -> None:
    request = _request(_candidate("a", _flight(**changes)))
    assert _scores(request) == [adk]  # no rules: ADK's comparison, the whole dict
    params: dict[str, Any] = {}
    if rules is not None:
        params["args_match"] = rules
    if extra_args is not None:
        params["extra_args"] = extra_args
    assert _scores(request, **params) == [ours]


def test_extra_args_fail_turns_a_one_into_a_zero() -> None:
    request = _request(_candidate("a", _flight(city="paris", currency="EUR")))
    rules = {"search_flights": {"city": "case_insensitive"}}
    assert _scores(request, args_match=rules, extra_args="ignore") == [1.0]
    assert _scores(request, args_match=rules, extra_args="fail") == [0.0]


def test_the_explanation_names_the_first_argument_and_its_rule() -> None:
    request = _request(
        _candidate("regex", _flight(date="26-05-03")),
        _candidate("extra", _flight(currency="EUR")),
        _candidate("missing", call("search_hotels", city="Paris")),
    )
    rules = {"search_flights": {"date": {"regex": r"2026-\d{2}-\d{2}"}}}
    regex, extra, missing = (r.explanation or "" for r in _results(request, args_match=rules))
    assert (
        'turn 0: search_flights.date: "26-05-03" vs "2026-05-01" (regex 2026-\\d{2}-\\d{2})'
        in regex
    )
    assert "turn 0: search_flights.currency: not expected (extra_args fail)" in extra
    assert "turn 0: search_flights was not called" in missing


def test_rules_apply_in_order_and_to_the_services_tool_metrics() -> None:
    request = _request(
        _candidate("a", call("get_time", tz="CET"), _flight(city="PARIS", request_id="zz"))
    )
    rules = {"*": {"request_id": "ignore"}, "search_flights": {"city": "case_insensitive"}}
    assert _scores(request, match_type="IN_ORDER") == [0.0]
    assert _scores(request, match_type="IN_ORDER", args_match=rules) == [1.0]
    assert _scores(request, match_type="EXACT", args_match=rules) == [0.0]  # one call too many
    assert [r.score for r in _results(request, "trajectory_in_order_match", args_match=rules)] == [
        1.0
    ]
    assert [r.score for r in _results(request, "trajectory_recall", args_match=rules)] == [1.0]
    assert [r.score for r in _results(request, "trajectory_recall")] == [0.0]
    single = _request(_candidate("b", _flight(city="PARIS", request_id="zz")))
    assert [r.score for r in _results(single, "tool_parameter_kv_match")] == [0.0]
    assert [r.score for r in _results(single, "tool_parameter_kv_match", args_match=rules)] == [1.0]


@pytest.mark.parametrize(
    ("rules", "extra_args", "message"),
    [
        (
            {"search_flights": {"query": "fuzzy"}},
            None,
            "args_match.search_flights.query: unknown rule 'fuzzy'",
        ),
        ({"search_flights": {"date": {"regex": "("}}}, None, "regex '(' does not compile"),
        (
            {"search_flights": {"price": {"tolerance": -1}}},
            None,
            "a tolerance is a number 0 or more",
        ),
        ({"search_flights": "ignore"}, None, "args_match.search_flights: expected an object"),
        (None, "sometimes", "option 'extra_args' must be one of ['fail', 'ignore']"),
    ],
)
def test_a_bad_rule_is_an_error_naming_it(rules: Any, extra_args: Any, message: str) -> None:
    params = {k: v for k, v in (("args_match", rules), ("extra_args", extra_args)) if v is not None}
    with pytest.raises(metrics.MetricError, match=re.escape(message)):
        _results(_request(_candidate("a", _flight())), **params)


def test_the_cli_scores_with_rules_and_refuses_an_unknown_one(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evalset = json.loads((work / "data" / "weather.evalset.json").read_text())
    run = ["-q", "run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
    criteria = {
        "tool_trajectory_avg_score": {"threshold": 1.0, "args_match": {"*": {"city": "fuzzy"}}}
    }
    (work / "bad.json").write_text(json.dumps({"criteria": criteria}))
    assert main([*run, "--config", "bad.json"]) == 2
    assert "args_match.*.city: unknown rule 'fuzzy'" in capsys.readouterr().err
    # Keys of the rules are the user's own names: kept as written, never snake_cased.
    criteria["tool_trajectory_avg_score"]["args_match"] = {"*": {"cityName": "ignore"}}
    (work / "good.json").write_text(json.dumps({"criteria": criteria}))
    assert main([*run, "--config", "good.json", "--format", "json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] and evalset["eval_cases"]
    assert all("argument rules" in r["explanation"] for r in report["rows"])


def test_without_rules_the_first_difference_is_what_empty_rules_find() -> None:
    """The no-rules path compares arguments by equality before it writes a mismatch out: its
    text is the one an empty rule set gives, call for call."""
    import random

    from platform_eval.metrics.arguments import ArgRules
    from platform_eval.metrics.trajectory import ToolCall, first_difference

    rng = random.Random(5)
    values: list[Any] = [1, 1.0, "1", None, [1, 2], {"a": 1}, {"a": 1, "b": 2}, {"a": {"b": 1}}]

    def calls() -> list[ToolCall]:
        return [
            ToolCall(rng.choice(["book", "search"]), {"id": rng.choice(values)})
            if rng.random() < 0.8
            else ToolCall("book", {})
            for _ in range(rng.randint(0, 3))
        ]

    texts = set()
    for _ in range(2000):
        actual, expected = calls(), calls()
        text = first_difference(actual, expected, None)
        assert text == first_difference(actual, expected, ArgRules({}))
        texts.add(text.split(":")[0])
    # Every kind of difference was met: a call missing, an argument, a count or order.
    assert {"book was not called", "book.id", "search.id"} <= texts
    assert any(t.endswith("in another number or order") for t in texts)
