"""agents-cli configs' local code metrics (custom_function, custom_function_file): read as
agents-cli reads them, run in the evaluating process as the GenAI Eval SDK runs them, each
failure that case's alone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from platform_eval.cli import main

CONFIG = """\
metrics_to_run:
  - rouge_1
  - agent_turn_count
  - answer_words
custom_metrics:
  - name: agent_turn_count
    custom_function: |
      def evaluate(instance):
          turns = (instance.get("agent_data") or {}).get("turns", [])
          return {"score": len(turns), "explanation": "turns counted"}
  - name: answer_words
    custom_function_file: words.py
  - name: not_run
    custom_function: |
      def evaluate(instance):
          raise AssertionError("only metrics_to_run run")
"""

WORDS = """\
def evaluate(instance):
    text = instance["response"]["parts"][0]["text"]
    if instance.get("reference") is None:
        raise ValueError("a case without a reference")
    return len(text.split())
"""


def test_code_metrics_score_each_case_with_the_users_function(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "eval_config.yaml").write_text(CONFIG)
    (work / "words.py").write_text(WORDS)
    run = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
    assert main(["-q", *run, "--config", "eval_config.yaml", "--format", "json"]) == 0
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert set(rows) == {"rouge_1", "agent_turn_count", "answer_words"}
    assert rows["agent_turn_count"]["score"] == 3.0
    assert rows["agent_turn_count"]["explanation"] == "turns counted"
    assert rows["answer_words"]["score"] == 2.0


def test_results_of_the_run_show_the_rows_run_printed_code_metrics_included(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The code metrics' results are kept with the run (RESULT items whose payloads are Cloud
    Storage objects, in a set the run's metadata names): ``results RUN`` reads them back."""
    (work / "eval_config.yaml").write_text(CONFIG)
    (work / "words.py").write_text(WORDS)
    run = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
    assert main(["-q", *run, "--config", "eval_config.yaml", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert {r["metric"] for r in printed["rows"]} >= {"agent_turn_count", "answer_words"}
    assert main(["-q", "results", printed["run"], "--format", "json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["rows"] == printed["rows"]


def test_a_function_that_raises_leaves_that_case_not_evaluated_with_its_last_line(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "eval_config.yaml").write_text(CONFIG)
    (work / "words.py").write_text(WORDS.replace("is None", "is not None"))
    run = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
    main(["-q", *run, "--config", "eval_config.yaml", "--format", "json"])
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["answer_words"]["status"] == "NOT_EVALUATED"
    assert rows["answer_words"]["explanation"] == (
        "not evaluated: ValueError: a case without a reference"
    )
    assert rows["agent_turn_count"]["score"] == 3.0  # the others go on


@pytest.mark.parametrize(
    ("entry", "where", "said"),
    [
        (
            "    custom_function_file: missing.py\n",
            "$.custom_metrics[0].custom_function_file",
            "cannot read",
        ),
        (
            "    custom_function: |\n      def score(i):\n          return 1\n",
            "$.custom_metrics[0].custom_function",
            "defines no function evaluate(instance)",
        ),
        (
            "    custom_function: |\n      def evaluate(i)\n          return 1\n",
            "$.custom_metrics[0].custom_function",
            "does not parse: line 1",
        ),
        # Read until memory ran out, and a FIFO with no writer hung the command.
        (
            "    custom_function_file: /dev/zero\n",
            "$.custom_metrics[0].custom_function_file",
            "is a device: platform-eval reads only regular files",
        ),
        (
            "    custom_function_file: metric.fifo\n",
            "$.custom_metrics[0].custom_function_file",
            "is a FIFO: platform-eval reads only regular files",
        ),
    ],
    ids=["missing", "no-evaluate", "syntax", "device", "fifo"],
)
def test_a_code_metric_that_cannot_run_is_refused_before_anything_is_uploaded(
    work: Path, capsys: pytest.CaptureFixture[str], entry: str, where: str, said: str
) -> None:
    config = "metrics_to_run:\n  - mine\ncustom_metrics:\n  - name: mine\n" + entry
    (work / "eval_config.yaml").write_text(config)
    os.mkfifo(work / "metric.fifo")
    for command in (
        ["validate", "eval_config.yaml"],
        ["run", "data/weather.evalset.json", "--config", "eval_config.yaml"],
    ):
        assert main(["-q", *command]) == 2
        captured = capsys.readouterr()
        said_all = captured.out + captured.err
        assert "eval_config.yaml" in said_all and where in said_all and said in said_all, said_all
    assert main(["-q", "runs", "list"]) == 0
    assert capsys.readouterr().out == ""


def test_agents_cli_scaffold_config_and_its_code_metric_are_read_as_agents_cli_reads_them(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """agents-cli 1.11's own scaffold files, from the installed google-agents-cli package."""
    scaffold = _scaffold()
    for name in ("eval_config.yaml", "response_quality.py"):
        (work / name).write_text((scaffold / name).read_text())
    assert main(["-q", "validate", "eval_config.yaml"]) == 0


def _scaffold() -> Path:
    try:
        import google.agents.cli as agents_cli
    except ImportError:
        pytest.skip("google-agents-cli is not installed (the dev extra installs it)")
    found = Path(agents_cli.__file__).parent / "scaffold" / "agents" / "adk" / "tests" / "eval"
    if not (found / "eval_config.yaml").exists():
        pytest.skip(f"no scaffold eval config in this google-agents-cli ({found})")
    return found


def test_a_prompt_template_metric_becomes_the_llm_metric_the_sdk_sends() -> None:
    from platform_eval.formats.config import parse_eval_config

    config, problems = parse_eval_config(
        {
            "metrics_to_run": ["helpful", "rouge_1"],
            "custom_metrics": [
                {
                    "name": "helpful",
                    "prompt_template": "Is {response} helpful for {prompt}? Score 1 to 5.",
                    "system_instruction": "Be strict.",
                }
            ],
        },
        "eval_config.yaml",
    )
    assert problems == []
    helpful, rouge = config.run_metrics()
    spec = helpful.metric_config.llm_based_metric_spec
    assert helpful.metric == "helpful" and rouge.metric == "rouge_1"
    assert spec.metric_prompt_template == "Is {response} helpful for {prompt}? Score 1 to 5."
    assert spec.system_instruction == "Be strict."


@pytest.mark.slow  # seconds of its own (an SDK, a process): CI runs it
def test_the_instance_is_the_one_the_official_sdks_handler_passes() -> None:
    """The official SDK's own CustomMetricHandler, given the same case, hands the user's
    evaluate() the same instance as ours (prompt, reference, response, agent_data)."""
    pytest.importorskip("vertexai._genai._evals_metric_handlers")
    from google.genai import types as genai_types
    from vertexai import types as vt
    from vertexai._genai._evals_metric_handlers import CustomMetricHandler

    from platform_eval.metrics import code_metrics
    from platform_eval.types import (
        AgentData,
        CandidateResponse,
        EvaluationPrompt,
        EvaluationRequest,
    )

    def content(role: str, text: str) -> genai_types.Content:
        return genai_types.Content(role=role, parts=[genai_types.Part(text=text)])

    question, golden, answer = "Capital of France?", "Paris.", "It is Paris."
    turns = {
        "turns": [
            {
                "turn_index": 0,
                "events": [
                    {"author": "user", "content": content("user", question).model_dump()},
                    {"author": "agent", "content": content("model", answer).model_dump()},
                ],
            }
        ]
    }
    seen: list[dict[str, object]] = []

    def capture(instance: dict[str, object]) -> float:
        seen.append(instance)
        return 1.0

    handler = CustomMetricHandler(None, vt.Metric(name="probe", custom_function=capture))  # type: ignore[arg-type]
    handler.get_metric_result(
        vt.EvalCase(
            eval_case_id="capital",
            prompt=content("user", question),
            reference=vt.ResponseCandidate(response=content("model", golden)),
            responses=[vt.ResponseCandidate(response=content("model", answer))],
            agent_data=vt.evals.AgentData.model_validate(turns),
        ),
        0,
    )
    [theirs] = seen
    request = EvaluationRequest(
        prompt=EvaluationPrompt(text=question),
        golden_response=CandidateResponse(text=golden),
        candidate_responses=[
            CandidateResponse(candidate="agent", agent_data=AgentData.model_validate(turns))
        ],
    )
    ours = code_metrics.instance("capital", request, request.candidate_responses[0])
    for key in ("eval_case_id", "prompt", "reference", "response", "agent_data"):
        assert ours[key] == theirs[key], key


def _quality_judge(travel_rule: Any) -> Any:
    """The agent as the travel script answers it; the scaffold's response_quality.py, asking
    its own model through google-genai, answered with the verdict its schema asks for."""

    def rule(seen: Any) -> Any:
        if "expert QA evaluator" in seen.prompt:
            assert seen.body["generationConfig"]["responseMimeType"] == "application/json"
            score = 5 if "Paris" in seen.prompt.split("Final Response:")[1] else 3
            return json.dumps({"score": score, "explanation": f"graded {score}"})
        return travel_rule(seen)

    return rule


def _scaffold_project(source: str) -> None:
    """agents-cli's scaffold files in the current folder: its dataset and config from the
    installed package, or from the corpus (which lacks the config's response_quality.py: the
    package's is put beside them, as a project created by agents-cli has it)."""
    scaffold = _scaffold()
    quality = (scaffold / "response_quality.py").read_text()
    # What agents-cli's cookiecutter writes in a new project in place of the template field.
    Path("response_quality.py").write_text(quality.replace("{{cookiecutter.default_model}}", "m"))
    if source == "corpus":
        from conftest import CORPUS

        files = {"eval_config.yaml": CORPUS / "agents-cli" / "eval_config.yaml"}
        files["basic-dataset.json"] = CORPUS / "agents-cli" / "basic-dataset.json"
    else:
        files = {"eval_config.yaml": scaffold / "eval_config.yaml"}
        files["basic-dataset.json"] = scaffold / "datasets" / "basic-dataset.json"
    for name, path in files.items():
        Path(name).write_text(path.read_text())


@pytest.mark.parametrize("source", ["installed", pytest.param("corpus", marks=pytest.mark.corpus)])
def test_agents_cli_scaffold_project_runs_with_the_scores_its_code_metrics_return(
    agent_project: Any, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    """agents-cli 1.11's scaffold as a project holds it (its dataset, its eval_config.yaml,
    whose two metrics are both local code metrics, and response_quality.py, which asks its own
    model): `validate` passes it, and `run --agent` grades the agent's answers with those
    functions, and starts no run."""
    agent_project.rule = _quality_judge(agent_project.rule)
    _scaffold_project(source)
    assert main(["-q", "validate", "basic-dataset.json", "eval_config.yaml"]) == 0
    capsys.readouterr()
    run = ["run", "basic-dataset.json", "--agent", "agents/travel_agent"]
    code = main([*run, "--config", "eval_config.yaml", "--format", "json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert code == 0, captured.err
    assert document["run"] is None and "no evaluation run" in captured.err
    rows = {(r["evalCaseId"], r["metric"]): r for r in document["rows"]}
    cases = ("greeting", "weather_query", "capital_lookup")
    # agent_turn_count is defined, but not in metrics_to_run: not run, as agents-cli runs it.
    assert set(rows) == {(c, "custom_response_quality") for c in cases}
    assert rows["greeting", "custom_response_quality"]["score"] == 3.0
    assert rows["greeting", "custom_response_quality"]["explanation"] == "graded 3"
    judged = [s for s in agent_project.seen if "expert QA evaluator" in s.prompt]
    assert len(judged) == 3 and {s.model for s in judged} == {"m"}
    # The capital case carries its reference to the function, as agents-cli passes it.
    references = [s.prompt.partition("Expected Answer (ground truth): ")[2] for s in judged]
    assert [r for r in references if r] == [
        r for r in references if r.startswith("{'response': {'parts': [{'text': 'The capital")
    ]
    assert sum(1 for r in references if r) == 1
    assert main(["-q", "runs", "list"]) == 0
    assert capsys.readouterr().out == ""  # nothing for the target to compute: no run


REMOTE = """\
metrics_to_run:
  - rouge_1
  - answer_length
custom_metrics:
  - name: answer_length
    execution: remote
    custom_function: |
      def evaluate(instance):
          if "reference" not in instance:
              raise ValueError("no reference for " + instance["prompt"]["text"])
          words = len(instance["response"]["text"].split())
          turns = len(instance["agent_data"]["turns"])
          return {"score": words, "explanation": f"{words} words in {turns} turns"}
"""


def test_a_remote_code_metric_is_refused_on_the_emulator_unless_allowed(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "eval_config.yaml").write_text(REMOTE)
    run = ["run", "data/weather.evalset.json", "--traces", "data/weather_traces.otlp.json"]
    assert main(["-q", *run, "--config", "eval_config.yaml"]) == 2
    said = capsys.readouterr().err
    assert "answer_length" in said and "--allow-code-metrics" in said
    assert main(["-q", "runs", "list"]) == 0
    assert capsys.readouterr().out == ""  # nothing uploaded, no run
    code = main(
        ["-q", *run, "--config", "eval_config.yaml", "--allow-code-metrics", "--format", "json"]
    )
    rows = {r["metric"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert code == 0
    # Sent in the run, computed by the emulator in a subprocess, on the service's instance.
    assert rows["answer_length"]["score"] == 2.0
    assert rows["answer_length"]["explanation"] == "2 words in 3 turns"


@pytest.mark.slow  # seconds of waiting or many runs: CI runs it (.ci/run)
def test_the_code_runner_bounds_time_and_memory_and_keeps_the_users_prints_apart() -> None:
    from platform_eval.judges.code_runner import SubprocessCodeRunner
    from platform_eval.metrics.judges import CodeRunError

    runner = SubprocessCodeRunner(timeout=2, memory_mb=256)
    chatty = "def evaluate(instance):\n    print('hello')\n    return 0.5\n"
    assert runner.run(chatty, {}) == (0.5, None)
    for source, said in (
        ("def evaluate(instance):\n    while True: pass\n", "longer than 2 s"),
        ("def evaluate(instance):\n    return bytearray(1 << 30)\n", "MemoryError"),
        ("def evaluate(instance):\n    raise KeyError('x')\n", "KeyError: 'x'"),
        ("def evaluate(instance):\n    return 'high'\n", "evaluate returned 'high'"),
        ("import os\ndef evaluate(instance):\n    return len(os.environ)\n", None),
    ):
        if said is None:
            # Nothing of the emulator's environment (credentials) reaches the user's code.
            score, _ = runner.run(source, {})
            assert score <= 3
            continue
        with pytest.raises(CodeRunError, match=said):
            runner.run(source, {})


def test_a_yaml_syntax_error_is_one_line_naming_the_file_and_where(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "eval_config.yaml").write_text("metrics_to_run:\n  - rouge_1\n custom_metrics: [\n")
    for command in (
        ["validate", "eval_config.yaml"],
        ["run", "data/weather.evalset.json", "--config", "eval_config.yaml"],
    ):
        assert main(["-q", *command]) == 2
        said = "".join(capsys.readouterr())
        (line,) = [s for s in said.splitlines() if "invalid YAML" in s]
        assert "eval_config.yaml: line 3 column 2: invalid YAML: expected <block end>" in line
    assert main(["-q", "runs", "list"]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.slow  # processes of their own, and waits: CI runs it (.ci/run)
def test_a_metric_that_prints_without_end_forks_or_writes_fd_1_costs_bounded_and_ends() -> None:
    """Prints for a second hold 64 KiB of them, not gigabytes; a process the metric starts ends
    with the call; a line written straight to file descriptor 1 is never taken for the answer
    (it was a 500, now the score is read from the child's own descriptor)."""
    import time

    from platform_eval.judges.code_runner import PRINTS_KEPT, SubprocessCodeRunner
    from platform_eval.metrics.judges import CodeRunError

    runner = SubprocessCodeRunner(timeout=2, memory_mb=256)
    writes_fd_1 = (
        "import os\n"
        "def evaluate(instance):\n"
        "    os.write(1, b'not the answer\\n')\n"
        "    return 0.75\n"
    )
    assert runner.run(writes_fd_1, {}) == (0.75, None)
    floods = (
        "import sys, time\n"
        "def evaluate(instance):\n"
        "    end = time.monotonic() + 1\n"
        "    while time.monotonic() < end:\n"
        "        sys.stderr.write('x' * 65536)\n"
        "    raise ValueError('flooded')\n"
    )
    with pytest.raises(CodeRunError, match="ValueError: flooded"):
        runner.run(floods, {})
    assert PRINTS_KEPT <= 65536
    marker = f"pe-orphan-{time.monotonic_ns()}"
    forks = (
        "import subprocess, sys\n"
        "def evaluate(instance):\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "    return 1.0\n"
    )
    assert runner.run(forks, {}) == (1.0, None)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
        if not alive.strip():
            break
        time.sleep(0.05)
    assert not alive.strip(), "a process the metric started outlived the call"


@pytest.mark.parametrize("then", ["loops", "returns"])
def test_a_process_the_metric_starts_in_a_session_of_its_own_ends_with_the_call(
    tmp_path: Path, then: str
) -> None:
    """A child that calls ``setsid()`` leaves the call's process group: it still ends with the
    call, whether the metric then runs past its deadline or returns."""
    import os
    import time

    from platform_eval.judges.code_runner import SubprocessCodeRunner
    from platform_eval.metrics.judges import CodeRunError

    pid_file = tmp_path / "escaped.pid"
    escapes = (
        "import subprocess, sys, time\n"
        "def evaluate(instance):\n"
        "    subprocess.Popen([sys.executable, '-c', 'import os, sys, time; os.setsid(); "
        f'open(sys.argv[1], "w").write(str(os.getpid())); time.sleep(600)\', {str(pid_file)!r}])\n'
        "    while not __import__('os').path.exists("
        + repr(str(pid_file))
        + "): time.sleep(0.01)\n"
        + ("    while True: pass\n" if then == "loops" else "    time.sleep(0.2)\n    return 1.0\n")
    )
    runner = SubprocessCodeRunner(timeout=5, memory_mb=256)
    if then == "loops":
        with pytest.raises(CodeRunError, match="longer than 5 s"):
            runner.run(escapes, {})
    else:
        assert runner.run(escapes, {}) == (1.0, None)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        # A process killed and not yet reaped by init is a zombie: gone as far as work goes.
        with open(f"/proc/{pid}/stat", "rb") as stat:
            if stat.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                break
        time.sleep(0.05)
    else:
        pytest.fail("a process the metric started in its own session outlived the call")
