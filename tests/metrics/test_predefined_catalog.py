"""The service's whole predefined metric catalog (the installed official SDK's
SUPPORTED_PREDEFINED_METRICS) is known here: each name goes to the service against a project,
the unversioned names resolve to their newest version as agents-cli resolves them, and each
judged one computes on the emulator with the configured judge, a verdict per rubric, or is
refused before upload naming why."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from factories import agent_data, reply, request_item, user
from fake_gemini import Seen, model_judges

from platform_eval import jobs, metrics
from platform_eval.emulator import Emulator
from platform_eval.formats.config import parse_eval_config
from platform_eval.metrics import service_only
from platform_eval.types.predefined_metrics import (
    SDK_2_7_PREDEFINED,
    newest_version,
    predefined_metrics,
)


def _sdk_names() -> list[str]:
    constants = pytest.importorskip("vertexai._genai._evals_constant")
    return sorted(constants.SUPPORTED_PREDEFINED_METRICS)


def test_every_name_the_installed_sdk_supports_is_known_and_goes_to_the_service() -> None:
    names = _sdk_names()
    # The installed SDK's names are read at run time, beside our copy of 2.7.0's.
    assert set(names) <= predefined_metrics() and predefined_metrics() >= SDK_2_7_PREDEFINED
    for name in names:
        info = metrics.REGISTRY.get(name)
        assert info is not None, name
        assert info.service_defined, name  # against a project: sent to the service by name


def test_unversioned_names_resolve_to_the_newest_version_as_agents_cli_resolves_them() -> None:
    pytest.importorskip("google.agents.cli.eval.eval_utils")
    from google.agents.cli.eval.eval_utils import _resolve_predefined_metric_name

    bases = {re.sub(r"_v\d+$", "", name) for name in _sdk_names()}
    for base in sorted(bases):
        assert newest_version(base) == _resolve_predefined_metric_name(base), base
    assert newest_version("general_quality") == "general_quality_v2"
    assert newest_version("rouge_1") == "rouge_1"  # not a predefined name: as it is
    assert newest_version("general_quality_v1") == "general_quality_v1"
    # Everywhere a name is given: a config's metrics_to_run and metrics=[...].
    config, problems = parse_eval_config({"metrics_to_run": ["hallucination", "bleu"]}, "c.yaml")
    assert problems == []
    assert [m.metric for m in config.run_metrics()] == ["hallucination_v2", "bleu"]
    chosen, _ = jobs.choose_metrics(["multi_turn_general_quality", "rouge_1"], None)
    assert chosen == ["multi_turn_general_quality_v2", "rouge_1"]


def _judge(seen: Seen) -> str:
    """Writes two rubrics about what the prompt says the metric checks, one met, one not."""
    metric = re.search(r"metric '([a-z0-9_]+)'", seen.prompt)
    name = metric.group(1) if metric else "?"
    return json.dumps(
        {
            "verdicts": [
                {"rubric_id": f"{name}-1", "rubric": "first", "verdict": True, "reasoning": "r1"},
                {"rubric_id": f"{name}-2", "rubric": "second", "verdict": False, "reasoning": "r2"},
            ]
        }
    )


def test_each_judged_catalog_metric_computes_on_the_emulator_a_verdict_per_rubric(
    project: str,
) -> None:
    judged = [
        n
        for n in _sdk_names()
        if metrics.REGISTRY[n].needs_judge
        and n not in service_only.SERVICE_ONLY
        and n not in ("final_response_match_v2",)  # google-adk's own evaluator: tested apart
    ]
    turns = agent_data([user("Capital of France?"), reply("Paris, since 1944.")])
    item: dict[str, Any] = request_item(
        "capital",
        prompt="Capital of France?",
        candidates=[{"candidate": "agent", "agentData": turns}],
    )
    item["evaluationRequest"]["goldenResponse"] = {"text": "Paris."}
    with (
        model_judges(_judge) as (judges, fake),
        Emulator(judges=judges) as emulator,
        emulator.client(project) as client,
    ):
        evaluation_set = client.create_set(display_name="catalog", items=[client.create_item(item)])
        run = client.wait_for_run(
            client.create_run(evaluation_set=evaluation_set, metrics=judged),
            poll_interval=0.02,
            timeout=60,
        )
        results = client.get_results(run)
    by_metric = {
        r.metric: r for item in results for r in item.evaluation_response.candidate_results or []
    }
    assert set(by_metric) == set(judged)
    for name in judged:
        result = by_metric[name]
        assert result.score == 0.5, (name, result.explanation)
        assert [v.evaluated_rubric.rubric_id for v in result.rubric_verdicts or []] == [
            f"{name}-1",
            f"{name}-2",
        ]
    asked = {re.search(r"metric '([a-z0-9_]+)'", s.prompt).group(1): s.prompt for s in fake.seen}
    # The model is told what the service's metric checks, and the match metric the reference.
    assert "claim by claim" in asked["hallucination_v2"]
    assert "REFERENCE ANSWER:\nParis." in asked["final_response_match_v3"]
    assert "REFERENCE ANSWER" not in asked["general_quality_v2"]


@pytest.mark.parametrize("name", sorted(service_only.SERVICE_ONLY))
def test_what_the_emulator_does_not_compute_is_refused_before_upload_naming_why(
    name: str, work: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from platform_eval.cli import main

    code = main(["run", "data/weather.evalset.json", "--metrics", name, "--judge-model", "m"])
    err = capsys.readouterr().err
    assert code == 2
    assert name in err and "--project" in err
    if name.startswith("gecko"):
        assert "judge that reads" in err
    assert main(["-q", "runs", "list"]) == 0
    assert capsys.readouterr().out == ""


def test_the_sdks_catalog_is_read_without_importing_the_sdk() -> None:
    """The installed SDK's names, read from its constant module alone, in a fresh process: the
    same names its own import gives, and the SDK itself (4 s of a command's start) not imported."""
    import subprocess
    import sys

    pytest.importorskip("vertexai")
    script = (
        "import sys\n"
        "from platform_eval.types.predefined_metrics import predefined_metrics\n"
        "names = predefined_metrics()\n"
        "assert 'vertexai' not in sys.modules, 'the SDK was imported'\n"
        "from vertexai._genai._evals_constant import SUPPORTED_PREDEFINED_METRICS as sdk\n"
        "assert {n.lower() for n in sdk} <= names, 'a name of the SDK is missing'\n"
        "print(len(names))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
