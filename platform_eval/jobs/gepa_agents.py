"""GEPA over several texts of an agent at once (``optimize --target sub-agents|all|skills``).

google-adk's GEPA prompt optimizer changes the root agent's instruction only. The gepa package
itself optimizes a candidate of several named texts, one reflected on at a time (round robin):
here a text per agent of the tree (its name -> its instruction), or per skill of its
``SkillToolset``s (``skill_instructions:<skill>`` -> the skill's instructions, the SKILL.md body:
google-adk's GEPARootAgentOptimizer names them so), the agent tree rebuilt with them for every
evaluation. A skill's text is reflected on with the cases whose runs mention the skill, as
google-adk's optimizer does. The cases run and are scored as for the root
(``optimize._Scorer``); GEPA's reflection reads each case's messages, tool calls, answer and
metric explanations, and the reflection model is asked through google-genai.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Mapping, Sequence
from typing import Any

from ..formats import adk

#: Which texts ``--target`` optimizes: the root agent's instruction, the sub-agents', all the
#: agents', or the instructions of the skills the agents' SkillToolsets hold.
TARGETS = ("root", "sub-agents", "all", "skills")

#: A skill's text in a candidate: google-adk's GEPARootAgentOptimizer's key for it.
SKILL_KEY = "skill_instructions:"


def _agents(root: Any) -> list[Any]:
    agents: list[Any] = []

    def walk(agent: Any) -> None:
        agents.append(agent)
        for child in getattr(agent, "sub_agents", None) or []:
            walk(child)

    walk(root)
    return agents


def _skill_toolsets(agent: Any) -> list[Any]:
    try:
        from google.adk.tools.skill_toolset import SkillToolset
    except ImportError:  # a google-adk without skills
        return []
    return [t for t in getattr(agent, "tools", None) or [] if isinstance(t, SkillToolset)]


def skills_of(root: Any) -> dict[str, str]:
    """``skill_instructions:<skill>`` -> its instructions, for every skill of every agent's
    SkillToolsets (a skill two toolsets hold is one text)."""
    found: dict[str, str] = {}
    for agent in _agents(root):
        for toolset in _skill_toolsets(agent):
            for skill in toolset.skills:
                found.setdefault(f"{SKILL_KEY}{skill.name}", skill.instructions)
    return found


def instructions_of(root: Any, target: str) -> dict[str, str]:
    """Agent name -> its instruction, for the agents ``target`` names (``sub-agents``: every
    agent below the root; ``all``: the root too), or each skill's key -> its instructions
    (``skills``). ValueError naming an agent whose instruction is not a string (a provider
    function is resolved per call: there is no text to change), or saying there is nothing."""
    if target == "skills":
        skills = skills_of(root)
        if not skills:
            raise ValueError(
                "--target skills: no agent of the tree has a SkillToolset with skills to optimize"
            )
        return skills
    agents = _agents(root)
    chosen = agents if target == "all" else agents[1:]
    found: dict[str, str] = {}
    for agent in chosen:
        if not hasattr(agent, "instruction"):
            continue  # a workflow agent (sequential, parallel, loop): nothing to say
        if not isinstance(agent.instruction, str):
            raise ValueError(
                f"agent {agent.name}: its instruction is not a string (a function builds it per "
                "call), so there is no text to optimize"
            )
        found[agent.name] = agent.instruction
    if not found:
        raise ValueError(f"--target {target}: no agent of the tree has an instruction to optimize")
    return found


def with_instructions(root: Any, instructions: Mapping[str, str]) -> Any:
    """A copy of the agent tree whose named agents have these instructions, and whose skills
    (``skill_instructions:<skill>``) these: each SkillToolset cloned with them, the original's
    left as it was."""
    copy = root.clone()
    skills = {
        k.removeprefix(SKILL_KEY): v for k, v in instructions.items() if k.startswith(SKILL_KEY)
    }

    def walk(agent: Any) -> None:
        if agent.name in instructions:
            agent.instruction = instructions[agent.name]
        if skills and _skill_toolsets(agent):
            agent.tools = [_with_skills(tool, skills) for tool in agent.tools]
        for child in getattr(agent, "sub_agents", None) or []:
            walk(child)

    walk(copy)
    return copy


def _with_skills(tool: Any, skills: Mapping[str, str]) -> Any:
    if not _is_skill_toolset(tool):
        return tool
    updated = [
        s.model_copy(update={"instructions": skills[s.name]}) if s.name in skills else s
        for s in tool.skills
    ]
    return tool.clone_with_updated_skills(updated)


def _is_skill_toolset(tool: Any) -> bool:
    from google.adk.tools.skill_toolset import SkillToolset

    return isinstance(tool, SkillToolset)


def _feedback(detail: Mapping[str, Any]) -> str:
    metrics = detail.get("metrics") or {}
    said = [
        f"{name}: {found.get('score')}"
        + (f" ({found['explanation']})" if found.get("explanation") else "")
        for name, found in metrics.items()
    ]
    return "; ".join(said) or str(detail.get("error") or "")


def _adapter_class() -> Any:
    from gepa.core.adapter import EvaluationBatch, GEPAAdapter

    class AgentsAdapter(GEPAAdapter[str, dict[str, Any], dict[str, Any]]):
        """gepa's adapter: a candidate (agent name -> instruction) run on a batch of cases."""

        def __init__(self, scorer: Any, root: Any, cases: Sequence[adk.EvalCase], loop: Any):
            self.scorer = scorer
            self.root = root
            self.cases = {case.eval_id: case for case in cases}
            self.loop = loop

        def evaluate(
            self, batch: list[str], candidate: dict[str, str], capture_traces: bool = False
        ) -> Any:
            agent = with_instructions(self.root, candidate)
            cases = [self.cases[case] for case in batch]
            tried = asyncio.run_coroutine_threadsafe(
                self.scorer.score(agent, cases), self.loop
            ).result()
            scores = [sum(s) / len(s) if (s := tried.scores.get(c)) else 0.0 for c in batch]
            details = [tried.details.get(case, {}) for case in batch]
            return EvaluationBatch(
                outputs=details, scores=scores, trajectories=details if capture_traces else None
            )

        def make_reflective_dataset(
            self, candidate: dict[str, str], eval_batch: Any, components_to_update: list[str]
        ) -> dict[str, list[dict[str, Any]]]:
            records = [
                {
                    "Inputs": {"user": detail.get("user")},
                    "Generated Outputs": {
                        "tool_calls": detail.get("tool_calls"),
                        "answer": detail.get("answer"),
                    },
                    "Feedback": f"score {score}: {_feedback(detail)}",
                }
                for score, detail in zip(
                    eval_batch.scores, eval_batch.trajectories or [], strict=True
                )
            ]
            return {
                component: _about(component, records, eval_batch.trajectories or [])
                for component in components_to_update
            }

    return AgentsAdapter


def _about(component: str, records: list[Any], details: Sequence[Any]) -> list[Any]:
    """The cases a text is reflected on with: a skill's, those whose run mentions the skill
    (google-adk's optimizer's rule); all of them where none does, or for an agent's text."""
    if not component.startswith(SKILL_KEY):
        return records
    name = component.removeprefix(SKILL_KEY)
    mention = [r for r, d in zip(records, details, strict=True) if name in str(d)]
    return mention or records


def _reflection(model: str) -> Any:
    """The reflection model as gepa calls it: a prompt in, its text out (google-genai)."""
    from google import genai

    client = genai.Client()

    def ask(prompt: Any) -> str:
        answer = client.models.generate_content(model=model, contents=str(prompt))
        return answer.text or ""

    return ask


async def optimize_agents(
    scorer: Any,
    root: Any,
    train: Sequence[adk.EvalCase],
    target: str,
    model: str,
    max_metric_calls: int,
    minibatch: int,
    run_dir: str | None,
) -> dict[str, str]:
    """The best candidate GEPA found on the training cases: agent name -> instruction."""
    from gepa.api import optimize as gepa_optimize

    seed = instructions_of(root, target)
    loop = asyncio.get_running_loop()
    adapter = _adapter_class()(scorer, root, train, loop)
    ids = [case.eval_id for case in train]

    def run() -> Any:
        return gepa_optimize(
            seed_candidate=seed,
            trainset=ids,
            valset=ids,
            adapter=adapter,
            reflection_lm=_reflection(model),
            reflection_minibatch_size=minibatch,
            max_metric_calls=max_metric_calls,
            run_dir=run_dir,
        )

    context = contextvars.copy_context()
    result = await loop.run_in_executor(None, lambda: context.run(run))
    return dict(result.best_candidate)
