""":generateUserScenarios on the emulator: scenarios the judge model writes for an agent,
through the official SDK's ``generate_conversation_scenarios`` and our client."""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest
from fake_gemini import Seen, model_judges

from platform_eval import errors
from platform_eval.emulator import Emulator
from platform_eval.metrics.scenario_generation import write_scenarios
from platform_eval.types import AgentConfig

AGENTS = {
    "root": {
        "agent_id": "root",
        "instruction": "You book flights.",
        "sub_agents": ["refunds"],
        "tools": [{"function_declarations": [{"name": "book", "description": "books a flight"}]}],
    },
    "refunds": {"agent_id": "refunds", "description": "handles refunds"},
}


def _writer(seen: Seen) -> str:
    """As many scenarios as asked, numbered after those the prompt says are written."""
    asked = int(re.search(r"Write (\d+) different", seen.prompt).group(1))  # type: ignore[union-attr]
    written = re.findall(r"title \d+", seen.prompt.partition("Already written")[2])
    return json.dumps(
        {
            "scenarios": [
                {
                    "starting_prompt": f"I need a flight, case {len(written) + n}",
                    "conversation_plan": "Ask for Paris; change to Rome when offered.",
                    "test_case_title": f"title {len(written) + n}",
                }
                for n in range(asked)
            ]
        }
    )


def test_the_sdks_conversation_scenarios_are_ours_and_capped() -> None:
    pytest.importorskip("agentplatform")
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform

    with model_judges(_writer) as (judges, fake), Emulator(judges=judges) as emulator:
        official = agentplatform.Client(
            project="scenarios",
            location="us-central1",
            credentials=Credentials(token="t"),  # type: ignore[no-untyped-call]
            http_options={"base_url": emulator.url},
        ).evals
        dataset = official.generate_conversation_scenarios(
            agent_info={"agents": AGENTS, "root_agent_id": "root"},
            config={"count": 12, "generation_instruction": "include a refund"},
        )
        rows = dataset.eval_dataset_df.to_dict("records")
        # Two calls (10 then 2), the second told what the first wrote.
        assert len(rows) == 12 and len(fake.seen) == 2
        assert "Guidance: include a refund" in fake.seen[0].prompt
        assert "tool book: books a flight" in fake.seen[0].prompt
        assert "delegates to: refunds" in fake.seen[0].prompt
        ours = write_scenarios(
            judges,
            {k: AgentConfig.model_validate(v) for k, v in AGENTS.items()},
            root="root",
            count=12,
            instruction="include a refund",
        )
        assert [r["starting_prompt"] for r in rows] == [s.starting_prompt for s in ours]
        with emulator.client("scenarios") as client:
            body: dict[str, Any] = {
                "agents": AGENTS,
                "rootAgentId": "root",
                "userScenarioGenerationConfig": {"userScenarioCount": "101"},
            }
            with pytest.raises(errors.InvalidArgument, match="101 is not between 1 and 100"):
                client.generate_user_scenarios(body)
            body["rootAgentId"] = "nobody"
            body["userScenarioGenerationConfig"] = {"userScenarioCount": "2"}
            with pytest.raises(errors.InvalidArgument, match="rootAgentId: 'nobody'"):
                client.generate_user_scenarios(body)


def test_a_model_that_repeats_itself_is_an_error_saying_how_many_it_wrote() -> None:
    same = json.dumps({"scenarios": [{"starting_prompt": "hi", "conversation_plan": "p"}] * 3})
    with (
        model_judges(lambda seen: same) as (judges, _),
        Emulator(judges=judges) as emulator,
        emulator.client("scenarios") as client,
        pytest.raises(errors.InvalidArgument, match="wrote 1 different scenarios of the 3"),
    ):
        client.generate_user_scenarios(
            {
                "agents": AGENTS,
                "rootAgentId": "root",
                "userScenarioGenerationConfig": {"userScenarioCount": 3},
            }
        )
