"""``run --agent --mock-tools golden``: the agent's tool calls are answered from the eval case's
expected tool responses, and the tools do not run: no file written, no request to the service
the tool calls; the scores equal a run with the real tools returning the same values; a call
the case has no answer for is NOT_EVALUATED, naming it. A function tool and an AgentTool."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from conftest import work_offline
from fake_gemini import FakeGemini, Seen, fake_gemini
from sockets import serve_in_thread

from platform_eval.agents.tool_mocks import UnmockedToolCallError, golden_calls, plan_mocks
from platform_eval.cli import main
from platform_eval.formats import adk

AGENT = '''
import json
import os
import urllib.request

from google.adk.agents import Agent
from google.adk.tools.agent_tool import AgentTool

FORECASTS = {"paris": "sunny", "oslo": "snowing"}


def get_weather(city: str) -> dict:
    """Returns today's forecast for a city (and writes it down, and tells the weather service)."""
    with open(os.environ["TOOL_LOG"], "a") as log:
        log.write(city + "\\n")
    urllib.request.urlopen(os.environ["WEATHER_SERVICE"] + "/" + city.lower()).read()
    return {"city": city, "forecast": FORECASTS.get(city.lower(), "unknown")}


forecaster = Agent(
    name="forecaster",
    model="gemini-2.5-flash",
    instruction="You are the forecast desk: answer with the forecast.",
)

root_agent = Agent(
    name="tooled_agent",
    model="gemini-2.5-flash",
    instruction="You help travellers.",
    tools=[get_weather, AgentTool(agent=forecaster)],
)
'''


def _turn(
    question: str, answer: str, tool: str, args: dict[str, Any], response: dict[str, Any]
) -> dict[str, Any]:
    return {
        "invocation_id": question,
        "user_content": {"role": "user", "parts": [{"text": question}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {
            "tool_uses": [{"name": tool, "args": args}],
            "tool_responses": [{"name": tool, "response": response}],
        },
    }


EVAL_SET = {
    "eval_set_id": "tooled",
    "eval_cases": [
        {
            "eval_id": "paris",
            "conversation": [
                _turn(
                    "Weather in Paris?",
                    "The weather in Paris is sunny.",
                    "get_weather",
                    {"city": "Paris"},
                    {"city": "Paris", "forecast": "sunny"},
                )
            ],
        },
        {
            "eval_id": "desk",
            "conversation": [
                _turn(
                    "Ask the desk about Oslo",
                    "The desk says: snowing.",
                    "forecaster",
                    {"request": "Oslo"},
                    {"result": "snowing"},
                )
            ],
        },
        {
            # The golden call is Oslo's: the agent asks about Lima, which nothing answers.
            "eval_id": "lima",
            "conversation": [
                _turn(
                    "Weather in Lima?",
                    "The weather in Lima is unknown.",
                    "get_weather",
                    {"city": "Oslo"},
                    {"city": "Oslo", "forecast": "snowing"},
                )
            ],
        },
    ],
}


def _rule(seen: Seen) -> str | dict[str, Any]:
    body = seen.body
    system = " ".join(
        p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts") or []
    )
    parts = (body.get("contents") or [{}])[-1].get("parts") or []
    if "forecast desk" in system:
        return "snowing"
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    if responses:
        response = responses[-1]
        result = response.get("response") or {}
        if response.get("name") == "forecaster":
            return f"The desk says: {result.get('result')}."
        return f"The weather in {result.get('city')} is {result.get('forecast')}."
    text = " ".join(p.get("text", "") for p in parts)
    if match := re.search(r"weather in ([A-Za-z]+)", text, re.I):
        return {
            "role": "model",
            "parts": [{"functionCall": {"name": "get_weather", "args": {"city": match.group(1)}}}],
        }
    if match := re.search(r"desk about ([A-Za-z]+)", text, re.I):
        return {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "forecaster", "args": {"request": match.group(1)}}}
            ],
        }
    return "How can I help?"


class _Service:
    def __init__(self) -> None:
        self.asked: list[str] = []


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeGemini, _Service, Path]]:
    work_offline(tmp_path, monkeypatch)
    (tmp_path / "tooled_agent").mkdir()
    (tmp_path / "tooled_agent" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "tooled_agent" / "agent.py").write_text(AGENT)
    (tmp_path / "tooled.evalset.json").write_text(json.dumps(EVAL_SET))
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    (tmp_path / "eval_config.json").write_text(json.dumps({"criteria": criteria}))
    service = _Service()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            service.asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    log = tmp_path / "tool.log"
    with ThreadingHTTPServer(("127.0.0.1", 0), Handler) as server, fake_gemini(_rule) as model:
        serve_in_thread(server)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.setenv("TOOL_LOG", str(log))
        monkeypatch.setenv("WEATHER_SERVICE", f"http://127.0.0.1:{server.server_port}")
        try:
            yield model, service, log
        finally:
            server.shutdown()


def _run(*extra: str, output: str) -> tuple[int, dict[tuple[str, str], Any]]:
    code = main(
        [
            "-q",
            "run",
            "tooled.evalset.json",
            "--agent",
            "tooled_agent",
            "--config",
            "eval_config.json",
            "--format",
            "json",
            "-o",
            output,
            *extra,
        ]
    )
    rows = json.loads(Path(output).read_text())["rows"]
    return code, {(r["evalCaseId"], r["metric"]): (r["score"], r["explanation"]) for r in rows}


def test_golden_mocks_answer_the_tools_and_the_scores_equal_the_real_tools(
    project: tuple[FakeGemini, _Service, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    model, service, log = project
    code, mocked = _run("--mock-tools", "golden", output="mocked.json")
    assert code == 1  # lima is not evaluated
    assert not log.exists() and service.asked == []  # no tool ran
    prompts = [seen.prompt for seen in model.seen]
    assert not any("forecast desk" in json.dumps(seen.body) for seen in model.seen), prompts
    lima = mocked[("lima", "tool_trajectory_avg_score")]
    assert lima[0] is None
    assert (
        'the agent called get_weather({"city": "Lima"}) and the case has no golden response'
        in (lima[1])
    )
    capsys.readouterr()

    code, real = _run(
        "--real-tools",
        "forecaster",
        "--unmocked",
        "real",
        "--mock-tools",
        "golden",
        output="mixed.json",
    )
    assert log.read_text().split() == ["Lima"] and service.asked == ["/lima"]  # only the unmatched
    # The AgentTool ran for real (its agent asked the model) and answered what the case holds.
    assert any("forecast desk" in json.dumps(seen.body) for seen in model.seen)
    assert real[("desk", "response_match_score")][0] == 1.0
    assert real[("lima", "tool_trajectory_avg_score")][0] == 0.0  # evaluated: Lima is not Oslo

    log.unlink()
    service.asked.clear()
    code, unmocked = _run(output="real.json")
    assert sorted(log.read_text().split()) == ["Lima", "Paris"] and len(service.asked) == 2
    # The real tools returned what the golden responses hold: the same scores.
    for case in ("paris", "desk"):
        for metric in ("tool_trajectory_avg_score", "response_match_score"):
            assert mocked[(case, metric)][0] == unmocked[(case, metric)][0] == 1.0, (case, metric)


def test_golden_calls_pair_calls_with_responses_by_id_then_by_order() -> None:
    case = adk.EvalCase.model_validate(
        {
            "eval_id": "c",
            "conversation": [
                {
                    "invocation_id": "t",
                    "user_content": {"role": "user", "parts": [{"text": "q"}]},
                    "intermediate_data": {
                        "tool_uses": [
                            {"id": "b", "name": "f", "args": {"x": 2}},
                            {"name": "g", "args": {}},
                            {"id": "a", "name": "f", "args": {"x": 1}},
                        ],
                        "tool_responses": [
                            {"id": "a", "name": "f", "response": {"r": 1}},
                            {"name": "g", "response": {"r": "g"}},
                            {"id": "b", "name": "f", "response": {"r": 2}},
                        ],
                    },
                }
            ],
        }
    )
    calls = golden_calls(case)
    assert [(c.name, c.args, c.response) for c in calls] == [
        ("f", {"x": 2}, {"r": 2}),
        ("g", {}, {"r": "g"}),
        ("f", {"x": 1}, {"r": 1}),
    ]
    plan = plan_mocks("golden", [case])
    assert plan is not None
    mocks = plan.for_case(case)
    assert mocks.answer("f", {"x": 1}) == {"r": 1}
    assert mocks.answer("f", {"x": 1}) == {"r": 1}  # asked again: answered again
    with pytest.raises(UnmockedToolCallError, match=r'f\(\{"x": 3\}\)'):
        mocks.answer("f", {"x": 3})


def test_an_unknown_mock_mode_or_choice_is_refused_before_any_run(
    project: tuple[FakeGemini, _Service, Path],
) -> None:
    from platform_eval import jobs
    from platform_eval.target import connect

    model, _, _ = project
    with connect(db=None) as target:
        for options, said in (
            (
                {"mock_tools": "gold"},
                "mock_tools 'gold' is neither 'golden', a mock file .YAML or JSON. nor sessions:DIR",
            ),
            ({"mock_tools": "golden", "unmatched_tools": "skip"}, "unknown unmatched_tools 'skip'"),
        ):
            with pytest.raises(ValueError, match=said):
                jobs.evaluate(
                    target.client,
                    "tooled.evalset.json",
                    agent="tooled_agent",
                    config="eval_config.json",
                    **options,
                )
    assert model.seen == []  # the agent never ran


MOCK_FILE = """
get_weather:
  - args: {city: {case_insensitive: paris}}
    response: {city: Paris, forecast: sunny}
  - args: {city: {regex: "L.*"}}
    response: {city: Lima, forecast: unknown}
forecaster:
  response: snowing
"""


def test_a_mock_file_answers_the_tools_by_their_arguments(
    project: tuple[FakeGemini, _Service, Path],
) -> None:
    model, service, log = project
    Path("mocks.yaml").write_text(MOCK_FILE)
    code, mocked = _run("--mock-tools", "mocks.yaml", output="mocked.json")
    assert not log.exists() and service.asked == []  # no tool ran
    assert not any("forecast desk" in json.dumps(seen.body) for seen in model.seen)
    for case in ("paris", "desk"):
        for metric in ("tool_trajectory_avg_score", "response_match_score"):
            assert mocked[(case, metric)][0] == 1.0, (case, metric, mocked[(case, metric)])
    # Lima is answered by the regex entry: evaluated (its golden call is Oslo's, so 0).
    assert mocked[("lima", "tool_trajectory_avg_score")][0] == 0.0
    assert mocked[("lima", "response_match_score")][0] == 1.0
    assert code == 1


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_recorded_sessions_answer_the_tools_as_they_answered_then(
    project: tuple[FakeGemini, _Service, Path],
) -> None:
    _, service, log = project
    _, real = _run("--save-sessions", "recorded", output="real.json")
    assert sorted(log.read_text().split()) == ["Lima", "Paris"]
    log.unlink()
    service.asked.clear()
    _, replayed = _run("--mock-tools", "sessions:recorded", output="replayed.json")
    assert not log.exists() and service.asked == []  # no tool ran
    assert replayed.keys() == real.keys()
    for key, (score, _) in real.items():
        assert replayed[key][0] == score, (key, replayed[key], score)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "get_weather:\n  - respons: {a: 1}\n",
            r"\$\.get_weather\[0\]\.respons: unknown field "
            r"\(did you mean 'response'\?\)",
        ),
        ("get_weather:\n  - args: {city: Paris}\n", r"\$\.get_weather\[0\]: missing response"),
        (
            'get_weather:\n  args: {city: {regex: "("}}\n  response: 1\n',
            r"\$\.get_weather\.args\.city: regex '\(' does not compile",
        ),
        ("get_weather: []\n", r"\$\.get_weather: an empty list answers no call"),
        ("- 1\n", r"\$: expected an object of tool name"),
    ],
)
def test_a_mock_file_s_problem_names_the_file_and_where(
    project: tuple[FakeGemini, _Service, Path],
    capsys: pytest.CaptureFixture[str],
    text: str,
    said: str,
) -> None:
    Path("mocks.yaml").write_text(text)
    code = main(
        [
            "-q",
            "run",
            "tooled.evalset.json",
            "--agent",
            "tooled_agent",
            "--config",
            "eval_config.json",
            "--mock-tools",
            "mocks.yaml",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert re.search("mocks.yaml.*" + said, err), err
    assert "Traceback" not in err


def test_the_summary_lists_which_calls_were_mocked() -> None:
    from platform_eval.agents.reports import AgentRunReport, CaseRun

    runs = [
        CaseRun("paris", 1, tool_calls=[("get_weather", '{"city": "Paris"}', "mocked")]),
        CaseRun("lima", 1, tool_calls=[("get_weather", '{"city": "Lima"}', "real")] * 21),
    ]
    lines = AgentRunReport(runs).summary().splitlines()
    assert lines[1] == "tool calls: 1 mocked, 21 ran the real tool"
    assert lines[2] == '  paris#1: get_weather({"city": "Paris"}) mocked'
    assert lines[3] == '  lima#1: get_weather({"city": "Lima"}) real'
    assert lines[-1] == "  (and 2 more calls)"


def test_a_changed_mock_file_is_another_run_for_the_journal(tmp_path: Path) -> None:
    mocks = tmp_path / "mocks.json"
    mocks.write_text(json.dumps({"f": {"response": {"r": 1}}}))
    first = plan_mocks(str(mocks), [])
    assert first is not None and first.file is not None
    assert first.file.answer("f", {"x": 1}) == {"r": 1}
    mocks.write_text(json.dumps({"f": {"response": {"r": 2}}}))
    second = plan_mocks(str(mocks), [])
    assert second is not None and second.fingerprint != first.fingerprint
    golden = plan_mocks("golden", [])
    assert golden is not None and golden.fingerprint[0] == "golden"


def test_the_documented_mock_file_reads_as_documented(tmp_path: Path) -> None:
    from platform_eval.agents.mock_sources import read_mock_file

    docs = (Path(__file__).parents[2] / "docs" / "agents.md").read_text()
    block = re.search(r"```yaml\n(# mocks\.yaml.*?)```", docs, re.S)
    assert block is not None
    (tmp_path / "mocks.yaml").write_text(block.group(1))
    mocks = read_mock_file(tmp_path / "mocks.yaml")
    assert mocks.answer("get_weather", {"city": "PARIS"}) == {"city": "Paris", "forecast": "sunny"}
    assert mocks.answer("get_weather", {"city": "Lima", "days": 2})["city"] == "Lima"  # type: ignore[index]
    assert mocks.answer("get_weather", {"city": "Oslo"}) == {"forecast": "unknown"}
    assert mocks.answer("book_flight", {}) == {"status": "booked"}
    assert mocks.answer("cancel", {}) is None


def test_the_pytest_plugin_mocks_the_tools_too(
    project: tuple[FakeGemini, _Service, Path], tmp_path: Path
) -> None:
    from platform_eval.pytest_plugin import PlatformEval
    from platform_eval.target import connect

    _, service, log = project
    with connect(db=None) as target:
        results = PlatformEval(target, tmp_path / "manifests").evaluate(
            "tooled.evalset.json",
            agent="tooled_agent",
            config="eval_config.json",
            mock_tools="golden",
            unmatched_tools="real",
        )
    assert log.read_text().split() == ["Lima"] and service.asked == ["/lima"]  # only unmatched
    scores = {(r.eval_case_id, r.metric): r.score for r in results.rows}
    assert scores[("paris", "tool_trajectory_avg_score")] == 1.0
    assert scores[("desk", "response_match_score")] == 1.0


@pytest.mark.parametrize("value", ["sunny", 3, [1, 2], None, {"forecast": "sunny"}])
def test_a_mocked_answer_is_wrapped_as_google_adk_wraps_a_tool_s_return(value: Any) -> None:
    """A mock file's response that is not an object reaches the model as google-adk hands it a
    function tool's return value: google-adk's own normalisation beside ours."""
    from platform_eval.agents.mock_sources import as_response

    caller = pytest.importorskip("google.adk.flows.llm_flows.tools._caller")
    normalize = getattr(caller, "_normalize_tool_result", None)
    if normalize is None:
        pytest.skip("this google-adk has no _normalize_tool_result to compare with")
    assert as_response(value) == normalize(value)


def test_a_regex_that_backtracks_without_end_is_an_error_naming_it_not_a_hung_case(
    tmp_path: Path,
) -> None:
    """``(a|aa)+$`` on a long value that almost matches: Python's re backtracks for hours; the
    rule stops within its second and says which pattern, and a sane pattern still matches."""
    from platform_eval.agents.mock_sources import read_mock_file
    from platform_eval.metrics._spec import MetricError

    (tmp_path / "mocks.yaml").write_text(
        "get_weather:\n"
        "  - args: {city: {regex: '(a|aa)+$'}}\n"
        "    response: {forecast: never}\n"
        "  - args: {city: {regex: 'Li.*'}}\n"
        "    response: {forecast: sunny}\n"
    )
    mocks = read_mock_file(tmp_path / "mocks.yaml")
    said = r"regex .\(a\|aa\)\+\$. took over 1 s on a value of 65"
    with pytest.raises(MetricError, match=said):
        mocks.answer("get_weather", {"city": "a" * 64 + "!"})
    assert mocks.answer("get_weather", {"city": "aaa"}) == {"forecast": "never"}
