""":generateInstanceRubrics on the emulator: the official SDK's ``generate_rubrics`` gets the
rubrics the judge model writes, asked with the SDK's own recipe where it ships one."""

from __future__ import annotations

import json
import warnings
from typing import Any

import httpx
import pytest
from fake_gemini import Seen, model_judges

from platform_eval import errors, metrics
from platform_eval.emulator import Emulator
from platform_eval.metrics import rubric_generation
from platform_eval.metrics.rubric_generation import write_rubrics

pd = pytest.importorskip("pandas")
pytest.importorskip("agentplatform")


def _writer(seen: Seen) -> str:
    topic = "Paris" if "France" in seen.prompt else "Jupiter"
    return json.dumps({"questions": [f"Does the response name {topic}?", "Is it one sentence?"]})


def _official(url: str) -> Any:
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform

        return agentplatform.Client(
            project="rubrics",
            location="us-central1",
            credentials=Credentials(token="t"),  # type: ignore[no-untyped-call]
            http_options={"base_url": url},
        )


def _texts(cell: Any) -> list[str]:
    return [rubric.content.property.description for rubric in cell["mine"]]


def test_the_sdk_gets_each_prompts_rubrics_as_our_engine_writes_them() -> None:
    frame = pd.DataFrame({"prompt": ["Capital of France?", "Largest planet?"]})
    with model_judges(_writer) as (judges, fake), Emulator(judges=judges) as emulator:
        official = _official(emulator.url).evals
        out = official.generate_rubrics(
            src=frame, rubric_group_name="mine", predefined_spec_name="general_quality_v1"
        )
        cells = list(out.eval_dataset_df["rubric_groups"])
        ours = write_rubrics(judges, "Capital of France?", metric="general_quality_v1")
        assert _texts(cells[0]) == [r.description for r in ours]
        assert _texts(cells[1]) == ["Does the response name Jupiter?", "Is it one sentence?"]
        assert [r.rubric_id for r in cells[0]["mine"]] == [
            "general_quality_v1-1",
            "general_quality_v1-2",
        ]
        # A catalog metric is asked about what it checks.
        assert "checks overall quality against rubrics" in fake.seen[0].prompt
        official.generate_rubrics(
            src=frame, rubric_group_name="mine", predefined_spec_name="hallucination_v2"
        )
        focus = rubric_generation.focus_of("hallucination_v2")
        assert focus is not None and focus[0] in fake.seen[-1].prompt

        official.generate_rubrics(
            src=frame, rubric_group_name="mine", predefined_spec_name="instruction_following_v1"
        )
        sdk = rubric_generation.sdk_template("instruction_following_v1")
        assert sdk is not None
        assert fake.seen[-1].prompt == sdk.format(prompt="Largest planet?")

        official.generate_rubrics(
            src=frame, rubric_group_name="mine", prompt_template="List checks for: {prompt}"
        )
        assert fake.seen[-1].prompt == "List checks for: Largest planet?"


@pytest.mark.slow  # seconds of its own: CI runs it (.ci/run)
def test_a_cached_answer_is_reused_and_no_judge_model_is_a_clear_refusal(tmp_path: Any) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Capital of France?"}]}]}
    cache = str(tmp_path / "judge.db")
    for _ in range(2):
        with model_judges(_writer, cache=cache) as (judges, fake), Emulator(judges=judges) as emu:
            with emu.client("rubrics") as client:
                path = f"{client.parent}:generateInstanceRubrics"
                answer = httpx.post(f"{emu.url}/v1beta1/{path}", json=body).json()
            assert [
                r["content"]["property"]["description"] for r in answer["generatedRubrics"]
            ] == [
                "Does the response name Paris?",
                "Is it one sentence?",
            ]
    assert fake.seen == []  # the second emulator's call was answered by the cache
    with Emulator(judges=metrics.Judges()) as emulator:
        answer = httpx.post(
            f"{emulator.url}/v1/projects/p/locations/l:generateInstanceRubrics", json=body
        )
    assert answer.status_code == 400
    assert "needs a judge model" in answer.json()["error"]["message"]
    with (
        Emulator() as emulator,
        emulator.client("rubrics") as client,
        pytest.raises(errors.InvalidArgument, match="contents: the prompt"),
    ):
        client.generate_rubrics({})
