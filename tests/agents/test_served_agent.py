"""``run --agent URL``: the cases run on a served agent, google-adk's own api_server serving the
sample agent on loopback (tests/served_agents.py), its model the fake Gemini; scored as the same
agent run in-process is, its sessions saved and read back alike, its failures one line each."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from fake_gemini import FakeGemini
from served_agents import adk_api_server, answering_first, bearer_required

from platform_eval.cli import main

CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


@pytest.fixture
def served(agent_project: FakeGemini, tmp_path: Path) -> Any:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with adk_api_server(tmp_path / "agents") as url:
        yield url


def _rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    rows = json.loads(capsys.readouterr().out)["rows"]
    return [{k: v for k, v in r.items() if k not in ("item", "request")} for r in rows]


def _run(*args: str) -> int:
    common = ["--config", "eval_config.json", "--format", "json"]
    return main(["-q", "run", "agents/travel.evalset.json", *args, *common])


@pytest.mark.slow  # an api_server, two agent runs and a replay: CI runs it (.ci/run)
def test_a_served_agent_scores_as_the_same_agent_run_here(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--agent", "agents/travel_agent") == 1  # weather_oslo misses its thresholds
    here = _rows(capsys)
    assert _run("--agent", served, "--save-sessions", "sessions") == 1
    there = _rows(capsys)
    assert there == here
    assert len(list(Path("sessions").iterdir())) == 4
    assert _run("--traces", "sessions") == 1
    assert _rows(capsys) == there  # the server's sessions, saved and read back


@pytest.mark.slow
def test_the_app_is_the_one_the_server_lists_or_the_one_named(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--agent", served, "--app-name", "travel_agent") == 1
    assert len(_rows(capsys)) == 8
    assert _run("--agent", served, "--app-name", "nope") == 2
    err = capsys.readouterr().err
    assert f"{served} serves no app 'nope'; it serves: travel_agent" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2


@pytest.mark.slow
def test_headers_go_with_every_request_and_are_never_shown(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    secret = "s3cret-token-value"
    with adk_api_server(tmp_path / "agents", bearer_required(secret)) as url:
        assert _run("--agent", url, "--agent-header", f"Authorization: Bearer {secret}") == 1
        assert len(_rows(capsys)) == 8
        # Without it: the loopback server's 401, in one line naming the URL.
        assert _run("--agent", url) == 2
        err = capsys.readouterr().err
        assert f"{url}/list-apps answered GET with 401" in err
        assert _run("--agent", url, "--agent-header", "Authorization: Bearer wrong") == 2
        assert secret not in capsys.readouterr().err


def test_what_cannot_be_done_with_a_served_agent_is_refused_before_it_runs(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}"
    for extra, said in (
        ([], f"the served agent at {nowhere} cannot be reached"),
        (["--mock-tools", "golden"], "runs its tools on its server"),
        (["--save-traces", "t"], "recorded on its server"),
        (["--agent-header", "Authorization"], "expected 'Name: value'"),
    ):
        assert _run("--agent", nowhere, *extra) == 2, extra
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    assert _run("--agent", "http://agents.example", "--agent-header", "X-Key: k") == 2
    assert "clear text" in capsys.readouterr().err
    assert _run("--agent", "agents/travel_agent", "--app-name", "x") == 2
    assert "--app-name goes with --agent URL" in capsys.readouterr().err
    assert not agent_project.seen  # no model was asked


@pytest.mark.slow
def test_judged_criteria_are_shown_the_served_agents_instruction_and_tools(
    agent_project: FakeGemini, served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app details of a served agent are built as ADK builds them (its instruction from
    app-info's template and the session's state, by google-adk's request processors, its tool
    declarations as a request holds them): the judges are asked byte for byte what they are
    asked of the same agent run in-process."""
    from agent_script import APP_DETAILS_CONFIG
    from fake_gemini import judge_requests

    Path("judged.json").write_text(json.dumps(APP_DETAILS_CONFIG))
    common = ["--config", "judged.json", "--format", "json", "--no-judge-cache"]
    agent_project.seen.clear()
    code = main(
        ["-q", "run", "agents/travel.evalset.json", "--agent", "agents/travel_agent", *common]
    )
    here_rows, here_asked = _rows(capsys), judge_requests(agent_project.seen)
    agent_project.seen.clear()
    assert main(["-q", "run", "agents/travel.evalset.json", "--agent", served, *common]) == code
    rows = _rows(capsys)
    assert rows and all(r["score"] is not None for r in rows), rows
    assert rows == here_rows
    asked = judge_requests(agent_project.seen)
    assert asked == here_asked
    # The instruction as sent: its {user_name?} filled from the case's state.
    assert any("The traveller's name is Ada." in request for request in asked)
    assert not any("{user_name?}" in request for request in asked)
    assert any("book_hotel" in request for request in asked)


@pytest.mark.slow
@pytest.mark.parametrize(
    "wrap",
    [
        answering_first("/run_sse", 404),
        answering_first("/run_sse", 429, times=2),
        # adk api_server's SQLite session file under load: the cases run again, from the start.
        answering_first("/run_sse", 500, times=2, detail="OperationalError: database is locked"),
    ],
    ids=["no-sse-so-run", "busy-twice", "database-locked-twice"],
)
def test_a_server_without_sse_or_busy_for_a_while_gives_the_same_rows(
    agent_project: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str], wrap: Any
) -> None:
    (tmp_path / "eval_config.json").write_text(json.dumps(CONFIG))
    assert _run("--agent", "agents/travel_agent") == 1
    here = _rows(capsys)
    with adk_api_server(tmp_path / "agents", wrap) as url:
        assert _run("--agent", url) == 1
    assert _rows(capsys) == here


CONTINUED = {
    "eval_cases": [
        {
            "eval_case_id": "continued",
            "agent_data": {
                "turns": [
                    {"turn_index": 0, "turn_id": "t0", "events": [
                        {"author": "user", "content": {"role": "user", "parts": [
                            {"text": "What is the weather in Paris?"}]}},
                        {"author": "travel_agent", "content": {"role": "model", "parts": [
                            {"text": "The weather in Paris is sunny."}]}},
                    ]},
                    {"turn_index": 1, "turn_id": "t1", "events": [
                        {"author": "user", "content": {"role": "user", "parts": [
                            {"text": "What is the weather in Oslo?"}]}},
                    ]},
                ]
            },
            "reference": {"response": {"role": "model", "parts": [
                {"text": "The weather in Oslo is snowing."}]}},
        }
    ]
}  # fmt: skip


@pytest.mark.slow
def test_a_scenario_and_a_continued_conversation_run_there_as_here(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scenario case's user is ADK's simulator, here, as adk eval makes it; a case that
    continues a conversation starts from its earlier turns, given to the server as the
    session's events: the same rows either way."""
    Path("continued-dataset.json").write_text(json.dumps(CONTINUED))
    scenario = ["--judge-model", "gemini-2.5-flash", "run", "agents/scenario.evalset.json"]
    Path("scenario.json").write_text(
        json.dumps({"criteria": {"per_turn_user_simulator_quality_v1": {"threshold": 0.5}}})
    )
    for command, config in ((scenario, "scenario.json"),
                            (["run", "continued-dataset.json"], "eval_config.json")):  # fmt: skip
        rows = []
        for agent in ("agents/travel_agent", served):
            main(["-q", *command, "--agent", agent, "--config", config, "--format", "json"])
            rows.append(_rows(capsys))
        assert rows[0] == rows[1] and all(r["score"] is not None for r in rows[0]), rows


def test_a_cloud_run_url_that_asks_for_credentials_gets_a_google_id_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No Application Default Credentials exist here: the token is the one mocked part. Over
    https only, for the service's URL as its audience, and only where no header was given."""
    import asyncio

    import httpx

    from platform_eval.agents import served

    audiences: list[str] = []

    def fetch_id_token(request: Any, audience: str) -> str:
        audiences.append(audience)
        return "id-token"

    monkeypatch.setattr("google.oauth2.id_token.fetch_id_token", fetch_id_token)

    def cloud_run(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") != "Bearer id-token":
            return httpx.Response(403, json={"detail": "forbidden"})
        if request.url.path == "/list-apps":
            return httpx.Response(200, json=["my_agent"])
        return httpx.Response(404, json={"detail": "no app-info"})

    real_client = httpx.AsyncClient

    def client(**kwargs: Any) -> httpx.AsyncClient:
        return real_client(transport=httpx.MockTransport(cloud_run), **kwargs)

    monkeypatch.setattr(served.httpx, "AsyncClient", client)

    async def connected(agent: Any) -> Any:
        async with served.connect(agent) as app:
            return app.app_name, app.agents, app.notes

    url = "https://my-agent-abc123-uc.a.run.app"
    name, agents, notes = asyncio.run(connected(served.ServedAgent(url)))
    assert (name, agents, audiences) == ("my_agent", {}, [url])
    assert "gives no app details" in notes[0]
    # A header given is the caller's choice: no token is asked for in its place.
    with pytest.raises(served.ServedAgentError, match="answered GET with 403"):
        asyncio.run(connected(served.ServedAgent(url, headers={"X-Api-Key": "k"})))
    assert audiences == [url]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAEA4iG8MwAAAABJRU5ErkJggg=="


@pytest.mark.slow
def test_an_image_in_a_case_reaches_the_agents_model_on_both_routes(
    agent_project: FakeGemini, served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    eval_set = json.loads(Path("agents/travel.evalset.json").read_text())
    case = eval_set["eval_cases"][0]
    image = {"inline_data": {"mime_type": "image/png", "data": PNG}}
    case["conversation"][0]["user_content"]["parts"].append(image)
    eval_set["eval_cases"] = [case]
    Path("image.evalset.json").write_text(json.dumps(eval_set))
    rows = []
    for agent in ("agents/travel_agent", served):
        before = len(agent_project.seen)
        main(["-q", "run", "image.evalset.json", "--agent", agent, "--config", "eval_config.json",
              "--format", "json"])  # fmt: skip
        rows.append(_rows(capsys))
        asked = [json.dumps(s.body) for s in agent_project.seen[before:] if s.body.get("tools")]
        assert asked and all(PNG in request for request in asked), agent
    assert rows[0] == rows[1]


@pytest.mark.slow
def test_a_server_that_stops_answering_ends_the_waiting_cases_and_a_rerun_resumes(
    agent_project: FakeGemini, tmp_path: Path, sync_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Two turns answered, then none: every case still waiting ends NOT_EVALUATED once its
    turn's time is up (no hang), the finished ones are evaluated; run again when the server
    answers, the agent runs only the cases it had not finished (their sessions of the first
    attempt are still on the server: the new ones take ids of the server's, said once)."""
    from served_agents import Silence

    from platform_eval import jobs
    from platform_eval.agents.remote import ServedAgent

    silence = Silence(after=2)
    options: dict[str, Any] = {"config": CONFIG, "agent_concurrency": 1}
    with adk_api_server(tmp_path / "agents", silence) as url:
        # Long enough for a turn the server answers on a busy machine; the silent ones wait it out.
        agent = ServedAgent(url, turn_timeout=8)
        first = jobs.evaluate(sync_client, "agents/travel.evalset.json", agent=agent, **options)
        report = first.agent_runs
        assert report is not None
        failed = {run.eval_id for run in report.runs if run.error}
        finished = {run.eval_id for run in report.runs if not run.error}
        assert finished and failed and len(finished | failed) == 4
        assert all("did not answer in time" in (r.error or "") for r in report.runs if r.error)
        silence.quiet = False
        again = jobs.evaluate(sync_client, "agents/travel.evalset.json", agent=agent, **options)
    assert again.agent_runs is not None
    resumed = {run.eval_id for run in again.agent_runs.runs if run.resumed}
    assert resumed == finished
    assert not any(run.error for run in again.agent_runs.runs)
    said = [
        r.getMessage() for r in caplog.records if "holds sessions of an earlier" in r.getMessage()
    ]
    assert len(said) == 1


@pytest.mark.slow
def test_an_image_in_a_datasets_prompt_reaches_the_agent_and_the_stored_request(
    agent_project: FakeGemini, served: str, capsys: pytest.CaptureFixture[str], sync_client: Any
) -> None:
    """A dataset case (the platform's own shape) whose prompt holds an image: the stored request
    keeps it (prompt.agentData), and the agent's model is sent it, in-process and served."""
    from platform_eval import jobs

    prompt = {
        "role": "user",
        "parts": [
            {"text": "What is the weather in Paris?"},
            {"inline_data": {"mime_type": "image/png", "data": PNG}},
        ],
    }
    dataset = {"eval_cases": [{"eval_case_id": "paris_photo", "prompt": prompt}]}
    Path("photo-dataset.json").write_text(json.dumps(dataset))
    for agent in ("agents/travel_agent", served):
        before = len(agent_project.seen)
        evaluation = jobs.evaluate(
            sync_client, "photo-dataset.json", agent=agent, metrics=["rouge_1"], resume=False
        )
        asked = [json.dumps(s.body) for s in agent_project.seen[before:] if s.body.get("tools")]
        assert asked and all(PNG in request for request in asked), agent
        (name,) = evaluation.evaluation_set.evaluation_items or []
        stored = sync_client.get_item(name).to_wire()["evaluationRequest"]
        user = stored["prompt"]["agentData"]["turns"][0]["events"][0]["content"]["parts"]
        assert user[1]["inlineData"]["mimeType"] == "image/png"
