"""User scenarios written by the model judge for an agent (``:generateUserScenarios``): each a
starting prompt and a conversation plan a simulated user follows, ready for ``run --agent``.

The model is told what the agent is (the root agent's instruction, description and tools, and
its sub-agents') and asked for at most ``BATCH`` scenarios a call; the calls go on until the
count is reached, each told the titles already written so that it writes others. A model that
stops giving new ones ends the loop: the answer then holds fewer, and says so in the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..types import AgentConfig, UserScenario
from ._spec import MetricError
from .judges import JudgeError, Judges
from .model_judge import CallLabel
from .model_rubrics import ask_json

#: The most scenarios one request may ask for, as the service caps it.
MAX_SCENARIOS = 100
#: Scenarios asked of the model per call.
BATCH = 10

_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "scenarios": {
            "type": "ARRAY",
            "items": {
                "type": "OBJECT",
                "properties": {
                    "starting_prompt": {"type": "STRING"},
                    "conversation_plan": {"type": "STRING"},
                    "test_case_title": {"type": "STRING"},
                },
                "required": ["starting_prompt", "conversation_plan"],
            },
        }
    },
    "required": ["scenarios"],
}


def describe_agents(agents: Mapping[str, AgentConfig], root: str | None) -> str:
    """The agents as the model is told them, the root first."""
    order = [root] if root is not None and root in agents else []
    order += sorted(name for name in agents if name != root)
    lines = []
    for name in order:
        agent = agents[name]
        lines.append(f"Agent {name}" + (" (the root agent)" if name == root else "") + ":")
        for label, value in (
            ("type", agent.agent_type),
            ("description", agent.description),
            ("instruction", agent.instruction),
        ):
            if value:
                lines.append(f"  {label}: {value}")
        for tool in agent.tools or []:
            for declaration in tool.function_declarations or []:
                lines.append(f"  tool {declaration.name}: {declaration.description or ''}".rstrip())
        if agent.sub_agents:
            lines.append(f"  delegates to: {', '.join(agent.sub_agents)}")
    return "\n".join(lines)


def scenario_prompt(
    agents_text: str,
    count: int,
    instruction: str | None,
    environment: str | None,
    written: list[str],
) -> str:
    return (
        "You write test scenarios for a conversational AI agent. A simulated user will play "
        "each one against the agent. Write "
        f"{count} different, realistic scenarios that exercise what the agent can do (its "
        "tools and its sub-agents), including ones where the user is unclear or changes "
        "their mind. Each has a starting_prompt (the user's first message), a "
        "conversation_plan (what the user wants and how they reply to the agent, in a few "
        "sentences) and a test_case_title (3 to 5 words).\n"
        + (f"Guidance: {instruction}\n" if instruction else "")
        + (f"Environment the agent works in: {environment}\n" if environment else "")
        + ("Already written (write others): " + "; ".join(written) + "\n" if written else "")
        + 'Answer with JSON: {"scenarios": [{"starting_prompt", "conversation_plan", '
        '"test_case_title"}]}.\n\n'
        f"THE AGENT:\n{agents_text}"
    )


def _scenarios(data: Any) -> list[dict[str, Any]]:
    listed = data["scenarios"]
    if not isinstance(listed, list) or not all(isinstance(s, dict) for s in listed):
        raise TypeError("expected a list of scenario objects")
    return listed


def write_scenarios(
    judges: Judges,
    agents: Mapping[str, AgentConfig],
    *,
    root: str | None,
    count: int,
    instruction: str | None = None,
    environment: str | None = None,
    model: str | None = None,
) -> list[UserScenario]:
    """``count`` scenarios for the agents; MetricError for a bad count, without a model judge,
    or when the model's answers do not reach the count."""
    if not 1 <= count <= MAX_SCENARIOS:
        raise MetricError(
            f"userScenarioGenerationConfig.userScenarioCount: {count} is not between 1 and "
            f"{MAX_SCENARIOS}"
        )
    judge = judges.model
    if judge is None:
        raise MetricError(
            "writing scenarios needs a judge model, and none is configured "
            "(--judge-model or PLATFORM_EVAL_JUDGE_MODEL)"
        )
    agents_text = describe_agents(agents, root)
    found: list[UserScenario] = []
    seen: set[str] = set()
    while len(found) < count:
        asked = min(BATCH, count - len(found))
        titles = [s.test_case_title or s.starting_prompt or "" for s in found]
        try:
            entries = ask_json(
                judge,
                model or judge.model,
                scenario_prompt(agents_text, asked, instruction, environment, titles),
                _SCHEMA,
                _scenarios,
                None,
                CallLabel("user_scenarios", root or "", ""),
            )
        except JudgeError as exc:
            raise MetricError(str(exc)) from None
        new = 0
        for entry in entries[:asked]:
            start = str(entry.get("starting_prompt") or "").strip()
            if not start or start.casefold() in seen:
                continue
            seen.add(start.casefold())
            new += 1
            found.append(
                UserScenario(
                    starting_prompt=start,
                    conversation_plan=str(entry.get("conversation_plan") or "").strip() or None,
                    test_case_title=str(entry.get("test_case_title") or "").strip() or None,
                )
            )
        if new == 0:
            raise MetricError(
                f"the judge model wrote {len(found)} different scenarios of the {count} asked, "
                "and no new one when asked again"
            )
    return found
