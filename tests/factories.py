"""Builders of test payloads in wire form."""

from __future__ import annotations

from typing import Any


def user(text: str) -> dict[str, Any]:
    return {"author": "user", "content": {"role": "user", "parts": [{"text": text}]}}


def call(name: str, author: str = "agent", **args: Any) -> dict[str, Any]:
    return {
        "author": author,
        "content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]},
    }


def reply(text: str, author: str = "agent") -> dict[str, Any]:
    return {"author": author, "content": {"role": "model", "parts": [{"text": text}]}}


def agent_data(*turns: list[dict[str, Any]]) -> dict[str, Any]:
    return {"turns": [{"turnIndex": i, "events": events} for i, events in enumerate(turns)]}


def request_item(
    display_name: str = "item",
    *,
    prompt: str | None = "hello",
    golden: dict[str, Any] | None = None,
    candidates: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    request: dict[str, Any] = {}
    if prompt is not None:
        request["prompt"] = {"text": prompt}
    if golden is not None:
        request["goldenResponse"] = golden
    if candidates is not None:
        request["candidateResponses"] = candidates
    item: dict[str, Any] = {
        "displayName": display_name,
        "evaluationItemType": "REQUEST",
        "evaluationRequest": request,
    }
    if labels:
        item["labels"] = labels
    return item
