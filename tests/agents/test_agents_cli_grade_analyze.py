"""agents-cli 1.11's ``eval grade`` and ``eval analyze`` code paths against the emulator.

Their own commands run unchanged; only the Agent Platform client they build is pointed at the
emulator (``http_options.base_url`` and a token), as our fidelity tests point the official
client. ``grade`` scores a trace file through ``:evaluateInstances`` and writes its results
file; ``analyze`` reads that file and clusters its failures through ``:generateLossClusters``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from fake_gemini import model_judges
from loss_failures import EXPECTED, failure_judge, results

from platform_eval.emulator import Emulator

pytest.importorskip("google.agents.cli.eval.cmd_grade")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _trace_file(path: Path) -> None:
    """agents-cli's trace file: each case the conversation the agent had."""
    cases = []
    for n, row in enumerate(results()):
        prompt = row["request"]["prompt"]["text"]
        cases.append(
            {
                "eval_case_id": f"case-{n}",
                "agent_data": {
                    "turns": [
                        {
                            "turn_index": 0,
                            "events": [
                                {"author": "user", "content": _text("user", prompt)},
                                {"author": "shop_agent", "content": _text("model", "Sure.")},
                            ],
                        }
                    ]
                },
            }
        )
    path.write_text(json.dumps({"eval_cases": cases}))


@pytest.fixture
def pointed(monkeypatch: pytest.MonkeyPatch) -> Any:
    """agents-cli's client construction, pointed at whatever emulator ``pointed.url`` names."""
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform

    real = agentplatform.Client

    class Target:
        url = ""

    def client(*args: Any, **kwargs: Any) -> Any:
        options = dict(kwargs.pop("http_options", None) or {})
        options["base_url"] = Target.url
        options.pop("retry_options", None)
        token = Credentials(token="t")  # type: ignore[no-untyped-call]
        return real(*args, http_options=options, credentials=token, **kwargs)

    monkeypatch.setattr(agentplatform, "Client", client)
    return Target


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_eval_grade_then_eval_analyze_write_their_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pointed: Any
) -> None:
    from google.agents.cli.eval import cmd_analyze
    from google.agents.cli.eval.cmd_grade import cmd_grade

    monkeypatch.chdir(tmp_path)
    # An agents-cli project's root (analyze runs from it); the name is all it needs here.
    (tmp_path / "agents-cli-manifest.yaml").write_text("name: shop\n")
    traces = tmp_path / "traces.json"
    _trace_file(traces)
    config = tmp_path / "eval_config.yaml"
    config.write_text("metrics_to_run:\n  - multi_turn_task_success_v1\n")
    with model_judges(failure_judge) as (judges, fake), Emulator(judges=judges) as emulator:
        pointed.url = emulator.url
        cmd_grade.callback(  # type: ignore[misc]
            traces_path=str(traces),
            metrics_str=None,
            output_path=str(tmp_path / "grade"),
            config_path=str(config),
            project="shop-project",
            region="us-central1",
            qps=100.0,
        )
        (written,) = (tmp_path / "grade").glob("results_*.json")
        graded = json.loads(written.read_text())
        metric = graded["summary_metrics"][0]
        assert metric["metric_name"] == "multi_turn_task_success_v1"
        assert metric["num_cases_total"] == 45 and metric.get("num_cases_error", 0) == 0

        out = tmp_path / "analysis.json"
        cmd_analyze.cmd_analyze.callback(  # type: ignore[misc]
            eval_result_path=str(written),
            top_k=None,
            metric="multi_turn_task_success_v1",
            output_path=str(out),
            output_format="json",
            project="shop-project",
        )
        analysis = json.loads(out.read_text())
        (result,) = analysis["results"]
        counts = {
            (c["taxonomy_entry"]["l1_category"], c["taxonomy_entry"]["l2_category"]): c[
                "item_count"
            ]
            for c in result["clusters"]
        }
        assert counts == EXPECTED
        assert sum("FAILURES:" in seen.prompt for seen in fake.seen) == 1
