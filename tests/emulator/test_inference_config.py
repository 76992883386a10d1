"""``run --inference-config``: the run's inferenceConfigs, sent as given; the emulator, which
cannot produce responses, refuses a run that needs it (the CLI before uploading anything)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from platform_eval.cli import main
from platform_eval.target import connect

RUN = ["-q", "run", "data/weather.evalset.json", "--metrics", "tool_trajectory_avg_score"]


def _config(path: Path, body: object) -> str:
    path.write_text(json.dumps(body))
    return str(path)


def test_a_run_that_needs_inference_is_refused_before_anything_is_uploaded(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(work / "inference.json", {"agent": {"model": "gemini-2.5-flash"}})
    assert main([*RUN, "--inference-config", config]) == 2
    err = capsys.readouterr().err
    assert "agent.model: the emulator does not run inference" in err
    assert not (work / ".platform-eval" / "manifests").exists()


def test_a_misspelled_inference_config_is_a_usage_error_naming_it(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(work / "inference.json", {"agent": {"modle": "gemini-2.5-flash"}})
    assert main([*RUN, "--inference-config", config]) == 2
    err = capsys.readouterr().err
    assert "$.agent: unknown field 'modle' for InferenceConfig (did you mean 'model'?)" in err


def test_agents_alone_describe_the_candidate_and_are_sent(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``agents`` describes the agents whose recorded responses are evaluated: no inference."""
    body = {"agent": {"agents": {"weather": {"agentId": "weather", "instruction": "Be brief."}}}}
    config = _config(work / "inference.json", body)
    code = main(
        [
            *RUN,
            "--traces",
            "data/weather_traces.otlp.json",
            "--inference-config",
            config,
            "--format",
            "json",
        ]
    )
    assert code == 2  # recorded responses and inference do not mix: one gives the candidates
    assert "--inference-config has the service produce the responses" in capsys.readouterr().err
    main([*RUN, "--inference-config", config, "--format", "json", "--no-wait"])
    run_name = capsys.readouterr().out.strip()
    with connect() as target:
        served = httpx.get(f"{target.emulator.url}/v1beta1/{run_name}").json()
    assert served["inferenceConfigs"] == body
