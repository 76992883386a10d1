"""Every `platform-eval` command line of the README and the docs runs as written (placeholders such as RUN
filled with what the commands before them made), in a folder laid out as the README assumes,
with the agent's and the judge's model the fake Gemini server: none is refused as a usage or
input error (exit 2). Lines that elide their arguments (`...`) are the only ones left out."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from served_agents import adk_api_server
from test_readme import DATA, DOCUMENTS, ROOT, _workspace

from platform_eval.cli import main

README = "\n".join(document.read_text() for document in DOCUMENTS)
#: The deployed agent's URL in docs/agents.md, served here by google-adk's api_server.
DEPLOYED = "https://my-agent-abc123-uc.a.run.app"


def _shell_blocks(text: str) -> list[str]:
    """The README's fenced blocks that hold commands (```bash, or no language)."""
    blocks, current, language = [], [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if language is None:
                language, current = line[3:].strip(), []
            else:
                if language in ("", "bash"):
                    blocks.append("\n".join(current))
                language = None
        elif language is not None:
            current.append(line)
    return blocks


BLOCKS = _shell_blocks(README)


def _commands() -> list[str]:
    found = []
    for block in BLOCKS:
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if "platform-eval " in line and " ... " not in line + " ":
                found.append(line[line.index("platform-eval") :])
    return found


COMMANDS = _commands()


def test_the_readme_has_its_command_lines() -> None:
    assert len(COMMANDS) >= 10


def _project(root: Path) -> None:
    """The README's folders: ADK's and agents-cli's, an agent at my_agent/ and app/."""
    _workspace(root)
    shutil.copytree(DATA, root / "samples" / "data")
    agents_cli = ROOT / "samples" / "agents_cli"
    datasets = root / "tests" / "eval" / "datasets"
    datasets.mkdir(parents=True)
    shutil.copy(agents_cli / "datasets" / "basic-dataset.json", datasets / "basic-dataset.json")
    shutil.copy(agents_cli / "datasets" / "basic-dataset.json", root / "basic-dataset.json")
    for folder in (root / "tests" / "eval", root):
        shutil.copy(agents_cli / "eval_config.yaml", folder / "eval_config.yaml")
        shutil.copy(agents_cli / "answer_words.py", folder / "answer_words.py")
    traces = root / "artifacts" / "traces"
    traces.mkdir(parents=True)
    shutil.copy(
        agents_cli / "artifacts" / "traces" / "traces_example.json", traces / "traces_X.json"
    )
    agent = ROOT / "samples" / "agent" / "travel_agent"
    for name in ("my_agent", "app"):
        shutil.copytree(agent, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    # The live agent of docs/agents.md: the sample voice agent, and its eval set.
    voice = ROOT / "samples" / "voice"
    shutil.copytree(
        voice / "voice_agent", root / "voice_agent", ignore=shutil.ignore_patterns("__pycache__")
    )
    evalsets = root / "tests" / "eval" / "evalsets"
    evalsets.mkdir(parents=True, exist_ok=True)
    shutil.copy(voice / "voice.evalset.json", evalsets / "voice.evalset.json")


def _runs(capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["-q", "runs", "list", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    return [json.loads(line)["name"] for line in lines if line.strip()]


@pytest.mark.slow
def test_every_readme_command_line_runs_as_written(
    agent_project: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agent_script import synthesis_rule, voice_rule
    from fake_gemini_live import fake_gemini_live

    root = tmp_path / "project"
    root.mkdir()
    _project(root)
    monkeypatch.chdir(root)
    ran = []
    # The agent's model, and the judge that writes scenarios, rubrics and clusters; the live
    # agent's Live model on the same address (over TLS, as google-genai opens it).
    live = fake_gemini_live(voice_rule, synthesis_rule)
    with live as model:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        monkeypatch.setenv("SSL_CERT_FILE", model.cert_file)
        ran = _run_commands(root, capsys)
    assert len(ran) == len(COMMANDS)


def _run_commands(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    ran = []
    # The docs' deployed agent: google-adk's api_server serving the project's my_agent/ here.
    with adk_api_server(root) as served:
        for line in COMMANDS:
            argv = shlex.split(line, comments=True)[1:]
            names = _runs(capsys)
            fill = {"RUN": names[0] if names else "RUN", "RUN_A": names[-1] if names else "RUN_A"}
            fill["RUN_B"] = names[0] if names else "RUN_B"
            fill[DEPLOYED] = served
            argv = [fill.get(arg, arg) for arg in argv]
            code = main(argv)
            said = capsys.readouterr()
            assert code in (0, 1), f"{line}\nexit {code}\n{said.err[-2000:]}"
            ran.append(line)
    return ran
