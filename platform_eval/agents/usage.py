"""What an agent's run of a case cost and took, read from its session as ADK records it: each
model answer's ``usageMetadata`` (prompt, output and thinking tokens, by ``modelVersion``) and
each event's ``timestamp`` (a turn takes from its user message to its last event).

Kept per candidate with the run (``record_agent_usage``): the results' cost and latency
(``results.usage``), beside the judge's."""

from __future__ import annotations

from typing import Any

from .live import LIVE_KEY


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def session_usage(
    session: dict[str, Any], turn_seconds: list[float] | None = None
) -> dict[str, Any]:
    """``{"modelCalls", "promptTokens", "outputTokens", "thinkingTokens", "byModel": {model:
    the same}, "turnSeconds": [...], "seconds"}`` of one ADK session (camelCase or snake_case
    JSON); seconds are omitted where events carry no timestamps. ``turn_seconds``: each turn's
    time by our own clock (``CaseRun.turn_seconds``), which then stands for the events'. A
    live run's turns add ``"liveTurns"``: each turn's time to the agent's first and last
    audio (``LIVE_KEY``)."""
    totals = {"modelCalls": 0, "promptTokens": 0, "outputTokens": 0, "thinkingTokens": 0}
    by_model: dict[str, dict[str, int]] = {}
    turns: dict[str, list[float]] = {}
    live: list[dict[str, Any]] = []
    for event in session.get("events") or []:
        if not isinstance(event, dict):
            continue
        metadata = event.get("customMetadata") or event.get("custom_metadata")
        timing = metadata.get(LIVE_KEY) if isinstance(metadata, dict) else None
        if isinstance(timing, dict):
            live.append(timing)
        invocation = str(event.get("invocationId") or event.get("invocation_id") or "")
        stamp = _number(event.get("timestamp"))
        if stamp is not None and invocation:
            turns.setdefault(invocation, []).append(stamp)
        usage = event.get("usageMetadata") or event.get("usage_metadata")
        if not isinstance(usage, dict) or event.get("partial"):
            continue
        model = str(event.get("modelVersion") or event.get("model_version") or "unknown")
        counted = {
            "modelCalls": 1,
            "promptTokens": int(_number(usage.get("promptTokenCount")) or 0),
            "outputTokens": int(_number(usage.get("candidatesTokenCount")) or 0),
            "thinkingTokens": int(_number(usage.get("thoughtsTokenCount")) or 0),
        }
        book = by_model.setdefault(model, dict.fromkeys(totals, 0))
        for key, value in counted.items():
            totals[key] += value
            book[key] += value
    found: dict[str, Any] = {**totals, "byModel": by_model}
    if live:
        found["liveTurns"] = live
    spans = [max(stamps) - min(stamps) for stamps in turns.values() if len(stamps) > 1]
    if turn_seconds is not None:
        spans = list(turn_seconds)
    if spans:
        found["turnSeconds"] = [round(s, 6) for s in spans]
        found["seconds"] = round(sum(spans), 6)
    return found
