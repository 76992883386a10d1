"""A judge that takes media is shown the conversation's images and files: the service's rubric
metrics (judged here by platform-eval's rubric judge) send each attached image beside the
transcript, which says where it was attached; within bounds, and never silently dropped."""

from __future__ import annotations

import base64
import json
from typing import Any

from factories import agent_data, reply
from fake_gemini import model_judges

from platform_eval.metrics.judges import JudgeInput
from platform_eval.metrics.model_rubrics import MAX_ATTACHMENTS, decide, transcript
from platform_eval.types import CandidateResponse, EvaluationRequest, Rubric

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()


def _subject(images: int) -> JudgeInput:
    parts: list[dict[str, Any]] = [{"text": "What is in this picture?"}]
    parts += [{"inlineData": {"mimeType": "image/png", "data": PNG}} for _ in range(images)]
    asked = {"author": "user", "content": {"role": "user", "parts": parts}}
    data = agent_data([asked, reply("A cat.")])
    candidate = CandidateResponse.model_validate({"candidate": "agent", "agentData": data})
    request = EvaluationRequest.model_validate({"candidateResponses": [candidate.to_wire()]})
    return JudgeInput("general_quality_v1", request, candidate, "cat")


def test_the_judge_is_shown_the_image_and_told_where_it_was_attached() -> None:
    def judge(seen: Any) -> str:
        return json.dumps(
            {"verdicts": [{"rubric_id": "r", "verdict": True, "reasoning": "a cat it is"}]}
        )

    subject = _subject(1)
    with model_judges(judge) as (judges, fake):
        [verdict] = decide(judges.model, "gemini-test", [Rubric.of("Names the animal", rubric_id="r")],
                           subject)  # fmt: skip
    assert verdict.verdict is True
    [asked] = fake.seen
    parts = asked.body["contents"][0]["parts"]
    assert "user ATTACHES image/png (attachment 1, given after this text)" in parts[0]["text"]
    # As google-genai writes it for the Gemini API (its own key spelling for the type).
    assert parts[1]["inlineData"]["data"] == PNG


def test_beyond_what_a_judge_is_given_the_transcript_names_what_was_left_out() -> None:
    text = transcript(_subject(MAX_ATTACHMENTS + 2))
    assert text.count("given after this text") == MAX_ATTACHMENTS
    assert text.count("not shown: beyond what a judge is given") == 2
