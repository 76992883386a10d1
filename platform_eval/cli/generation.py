"""``analyze``, ``synthesize`` and ``rubrics``: failure clusters of a run, scenarios written for
an agent, and rubrics written for an eval set's cases. Each asks the target's location methods
(``generateLossClusters``, ``generateUserScenarios``, ``generateInstanceRubrics``): the
emulator's judge model, or the service."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from ..formats import load
from ..formats.load import Kind, eval_set_from
from ..formats.migrate import write_json
from ..metrics._invocations import content_text
from ..results.loss import AnalysisError, analyze
from ..target import Target
from ..types import Rubric
from ._common import EXIT_OK, UsageError, emit, note, output_format

#: The rubric group the written rubrics go in, in an EvaluationDataset's ``rubric_groups``.
RUBRIC_GROUP = "generated"


def analyze_run(args: argparse.Namespace, target: Target) -> int:
    try:
        report = analyze(target.client, args.run, metric=args.metric, top_k=args.top_k)
    except AnalysisError as exc:
        raise UsageError(str(exc)) from None
    if report.recorded:
        note("the clusters recorded with the run (no new analysis)", quiet=args.quiet)
    chosen = output_format(args.format, args.output)
    text = {"json": report.to_json, "html": report.to_html}.get(chosen, report.to_table)()
    emit(text, args.output)
    return EXIT_OK


def synthesize(args: argparse.Namespace, target: Target) -> int:
    from ..agents import load_agent
    from ..agents.describe import agent_configs

    output = Path(args.output)
    if output.exists() and not args.force:
        raise UsageError(f"{output} exists; --force replaces it")
    loaded = asyncio.run(load_agent(args.agent))
    agents, root = agent_configs(loaded.root_agent)
    config: dict[str, Any] = {"userScenarioCount": args.count}
    if args.instruction:
        config["simulationInstruction"] = args.instruction
    if args.environment:
        config["environmentData"] = args.environment
    response = target.client.generate_user_scenarios(
        {
            "agents": {name: agent.to_wire() for name, agent in agents.items()},
            "rootAgentId": root,
            "userScenarioGenerationConfig": config,
        }
    )
    scenarios = response.user_scenarios or []
    if output.name.endswith(".evalset.json"):
        cases = [
            {
                "eval_id": _case_id(s.test_case_title, n),
                "conversation_scenario": {
                    "starting_prompt": s.starting_prompt or "",
                    "conversation_plan": s.conversation_plan or "",
                },
            }
            for n, s in enumerate(scenarios, 1)
        ]
        data: dict[str, Any] = {"eval_set_id": output.name.removesuffix(".evalset.json")}
        data["eval_cases"] = cases
    else:
        data = {
            "eval_cases": [
                {
                    "eval_case_id": _case_id(s.test_case_title, n),
                    "user_scenario": {
                        "starting_prompt": s.starting_prompt or "",
                        "conversation_plan": s.conversation_plan or "",
                    },
                }
                for n, s in enumerate(scenarios, 1)
            ]
        }
    write_json(output, data)
    note(f"{len(scenarios)} scenarios for {root} written to {output}", quiet=args.quiet)
    return EXIT_OK


def _case_id(title: str | None, number: int) -> str:
    words = "_".join((title or "").lower().split())
    slug = "".join(c for c in words if c.isalnum() or c == "_")[:48]
    return f"{number:03d}_{slug}" if slug else f"scenario_{number:03d}"


def rubrics(args: argparse.Namespace, target: Target) -> int:
    output = Path(args.output)
    if output.exists() and not args.force:
        raise UsageError(f"{output} exists; --force replaces it")
    loaded = load(args.evalset)
    if loaded.kind not in (Kind.EVAL_SET, Kind.DATASET):
        raise UsageError(
            f"{args.evalset}: rubrics are written into an ADK eval set or an EvaluationDataset "
            f"file; this is {loaded.kind}"
        )
    eval_set = eval_set_from(loaded)
    data = json.loads(Path(args.evalset).read_text(encoding="utf-8"))
    key = "evalCases" if "evalCases" in data else "eval_cases"
    raw_cases = data[key]
    request: dict[str, Any] = {}
    if args.metric:
        request["predefinedRubricGenerationSpec"] = {"metricSpecName": args.metric}
    if args.prompt_template:
        request["rubricGenerationSpec"] = {"promptTemplate": args.prompt_template}
    written = kept = 0
    for raw, case in zip(raw_cases, eval_set.eval_cases, strict=True):
        prompt = _first_prompt(case)
        if not prompt:
            note(f"{case.eval_id}: no user prompt to write rubrics for; left as it is")
            continue
        contents = [{"role": "user", "parts": [{"text": prompt}]}]
        answer = target.client.generate_rubrics({**request, "contents": contents})
        found = answer.generated_rubrics or []
        written += len(found)
        if loaded.kind == Kind.EVAL_SET:
            # The case's own rubrics stay, first; the generated ones follow, under ids of
            # their own (a shared id would be refused, as adk eval refuses it).
            own = [r for r in raw.get("rubrics") or [] if isinstance(r, dict)]
            taken = {str(r.get("rubric_id") or r.get("rubricId")) for r in own}
            made = [_adk_rubric(r, case.eval_id, n, taken) for n, r in enumerate(found, 1)]
            raw["rubrics"] = own + made
            kept += len(own)
        else:
            groups = raw.setdefault("rubric_groups", {})
            kept += sum(
                len((group or {}).get("rubrics") or [])
                for key, group in groups.items()
                if key != RUBRIC_GROUP and isinstance(group, dict)
            )
            groups[RUBRIC_GROUP] = {
                "group_id": RUBRIC_GROUP,
                "rubrics": [r.to_wire() for r in found],
            }
    write_json(output, data)
    also = f", beside the {kept} the cases had, kept as they were" if kept else ""
    note(
        f"{written} rubrics for {len(raw_cases)} cases written to {output}{also}: review them "
        "before they become golden",
        quiet=args.quiet,
    )
    return EXIT_OK


def _first_prompt(case: Any) -> str:
    if case.conversation_scenario is not None:
        return str(case.conversation_scenario.starting_prompt)
    for invocation in case.conversation or []:
        text = content_text(invocation.user_content)
        if text:
            return text
    return ""


def _adk_rubric(rubric: Rubric, case: str, number: int, taken: set[str]) -> dict[str, Any]:
    rubric_id = rubric.rubric_id or f"{case}-generated-{number}"
    while rubric_id in taken:
        rubric_id = f"{rubric_id}-generated"
    taken.add(rubric_id)
    found: dict[str, Any] = {
        "rubric_id": rubric_id,
        "rubric_content": {"text_property": rubric.description or ""},
    }
    if rubric.type:
        found["type"] = rubric.type
    return found
