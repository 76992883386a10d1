"""A metric the target cannot compute is refused once, before anything is uploaded or an agent
runs, by every way in: ``jobs.evaluate`` (the Python API), the command line, the emulator's own
answer to ``POST /_emulator/computable``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from paths import SAMPLE_DATA

from platform_eval import jobs
from platform_eval.client import AsyncClient, Client
from platform_eval.emulator import Emulator
from platform_eval.jobs.metric_check import EMULATOR_ONLY, service_refusals
from platform_eval.metrics import DEFAULT_JUDGES
from platform_eval.metrics.computable import ADK, CODE, JUDGE, SERVICE, UNKNOWN

EVALSET = SAMPLE_DATA / "weather.evalset.json"
TRACES = SAMPLE_DATA / "weather_traces.otlp.json"


@pytest.fixture(scope="module")
def unjudged() -> Iterator[Emulator]:
    """An emulator with the local judge alone: no judge model, no code metrics."""
    with Emulator(judges=DEFAULT_JUDGES) as emulator:
        yield emulator


def _items(client: Client) -> int:
    return len(list(client.list_items()))


@pytest.mark.parametrize(
    ("metric", "kind"),
    [
        ("final_response_match_v2", JUDGE),
        ("no_such_metric_anywhere", UNKNOWN),
        ("safety_v1", SERVICE),
    ],
)
def test_evaluate_refuses_before_anything_is_uploaded(
    unjudged: Emulator, project: str, metric: str, kind: str
) -> None:
    with unjudged.client(project) as client:
        with pytest.raises(jobs.MetricsRefusedError) as refused:
            jobs.evaluate(client, str(EVALSET), traces=[TRACES], metrics=["rouge_1", metric])
        assert [(r.metric, r.kind) for r in refused.value.refusals] == [(metric, kind)]
        assert metric in str(refused.value)
        assert _items(client) == 0  # nothing was uploaded
        assert list(client.list_sets()) == []


def test_the_async_client_is_refused_alike(unjudged: Emulator, project: str) -> None:
    import asyncio

    async def attempt() -> jobs.MetricsRefusedError:
        async with AsyncClient(project=project, api_endpoint=unjudged.url) as client:
            try:
                await jobs.evaluate(client, str(EVALSET), traces=[TRACES], metrics=["safety_v1"])
            except jobs.MetricsRefusedError as exc:
                return exc
        raise AssertionError("not refused")

    refused = asyncio.run(attempt())
    assert refused.refusals[0].kind == SERVICE


def test_a_rubric_metric_is_refused_only_where_the_cases_rubrics_need_a_model(
    unjudged: Emulator, project: str, tmp_path: Path
) -> None:
    """The sample's rubrics are of types the local judge decides: let through. The same cases
    with a free-text rubric need a model: refused, naming the rubric types."""
    with unjudged.client(project) as client:
        assert client.metric_refusals(["rubric_based_final_response_quality_v1"], []) != []
        assert client.metric_refusals(["general_quality_v1"], ["TEXT_CONTAINS"]) == []
        refused = client.metric_refusals(["general_quality_v1"], [None])
    assert refused is not None and refused[0]["kind"] == JUDGE
    assert "free-text rubrics" in refused[0]["reason"]


def test_a_code_metric_is_refused_without_allow_code_metrics(
    unjudged: Emulator, project: str
) -> None:
    metric = {
        "metric": "answer_length",
        "metricConfig": {
            "customCodeExecutionSpec": {"evaluationFunction": "def evaluate(i):\n  return 1\n"}
        },
    }
    with unjudged.client(project) as client:
        [refused] = client.metric_refusals([metric]) or [{}]
    assert refused["kind"] == CODE and "--allow-code-metrics" in refused["reason"]


def test_an_adk_criterion_without_google_adk_is_refused_saying_what_to_install(
    unjudged: Emulator, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `[cli,emulator]` extras do not install google-adk: its criteria are refused before
    anything is uploaded, naming the extra that brings it, not NOT_EVALUATED case by case."""
    from platform_eval.metrics import computable

    monkeypatch.setattr(computable, "adk_available", lambda: False)
    with unjudged.client(project) as client:
        with pytest.raises(jobs.MetricsRefusedError) as refused:
            jobs.evaluate(
                client, str(EVALSET), traces=[TRACES], metrics=["final_response_match_v2"]
            )
        assert _items(client) == 0
    [refusal] = refused.value.refusals
    assert refusal.kind == ADK
    assert "google-adk is not installed" in str(refused.value)
    assert "pip install 'platform-eval[adk]'" in str(refused.value)


def test_adks_rubric_criterion_without_google_adk_is_decided_by_the_local_judge(
    unjudged: Emulator, project: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without a model judge, ADK's rubric criteria are this engine's (the local judge decides
    their typed rubrics): the `[cli]` extra's Quick start runs without google-adk."""
    from platform_eval.metrics import computable

    monkeypatch.setattr(computable, "adk_available", lambda: False)
    config = json.loads((SAMPLE_DATA / "eval_config.json").read_text())
    with unjudged.client(project) as client:
        evaluation = jobs.evaluate(client, str(EVALSET), traces=[TRACES], config=config)
        assert client.metric_refusals(["rubric_based_final_response_quality_v1"]) == []
    scored = [
        r
        for item in evaluation.results
        for r in (item.evaluation_response.candidate_results or [])
        if item.evaluation_response and r.metric == "rubric_based_final_response_quality_v1"
    ]
    assert scored and all(r.score is not None for r in scored)


def test_the_check_answers_a_bad_body_with_400_naming_what_was_expected(
    unjudged: Emulator,
) -> None:
    for body in ({"metrics": "rouge_1"}, [1], {"metrics": [{"metric": 5}]}):
        answer = httpx.post(f"{unjudged.url}/_emulator/computable", json=body)
        assert answer.status_code == 400, body
        assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_the_service_is_not_asked_and_refuses_what_only_the_emulator_computes() -> None:
    from google.auth.credentials import AnonymousCredentials

    client = Client(
        project="p", api_endpoint="https://example.invalid", credentials=AnonymousCredentials()
    )
    try:
        assert client.metric_refusals(["rouge_1"]) is None  # no request was sent
    finally:
        client.close()
    refused = service_refusals(
        [
            "rouge_1",
            "tool_trajectory_avg_score",
            {
                "metric": "tool_trajectory_avg_score",
                "computationBasedMetricSpec": {
                    "parameters": {"args_match": {"get_weather": {"city": "ignore"}}}
                },
            },
        ]
    )
    assert [r.kind for r in refused] == [EMULATOR_ONLY, EMULATOR_ONLY]
    assert "args_match" in refused[0].reason
    assert "trajectory_exact_match" in refused[1].reason


def test_the_command_refuses_with_its_own_flags_and_exit_2(
    unjudged: Emulator, project: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_eval.cli import main

    (work / "config.json").write_text(json.dumps({"criteria": {"final_response_match_v2": 0.5}}))
    argv = ["--endpoint", unjudged.host_port, "--project", project]
    run = ["run", str(EVALSET), "--traces", str(TRACES), "--config", "config.json"]
    assert main(["-q", *argv, *run]) == 2
    err = capsys.readouterr().err
    assert "'final_response_match_v2' is judged by a model" in err
    assert "--judge-model MODEL" in err  # the command's advice, not the Python API's
    with unjudged.client(project) as client:
        assert _items(client) == 0
