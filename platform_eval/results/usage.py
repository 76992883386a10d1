"""What the agent's runs cost and took, as results: per case and over the run, its model calls,
prompt, output and thinking tokens, cost (tokens priced by ``PRICES``, or a table given) and
latency (a case run's seconds: the sum of its turns', each from the user's message to the
agent's last event), p50 and p95 over the runs.

``latency_p50_s``, ``latency_p95_s`` and ``cost_per_case_usd`` are thresholds too, upper bounds:
a run above one fails; one that cannot be computed (no usage recorded, a model with no price)
never passes. A live run (``--agent-mode live``) adds the time from each user turn to the
agent's first audio and to its last, over every turn: ``first_audio_p50_s``,
``first_audio_p95_s``, ``last_audio_p50_s``, ``last_audio_p95_s``, upper bounds too.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..formats.reading import read_text
from ..metrics.thresholds import USAGE_THRESHOLDS

if TYPE_CHECKING:
    from .model import RunResults

#: USD per million tokens (prompt, output; thinking is billed as output), list prices of the
#: Gemini API for prompts up to 200K tokens (ai.google.dev pricing, 2026). ``--prices FILE``
#: (JSON: model -> {"input": X, "output": Y}) replaces or adds to them.
PRICES: dict[str, tuple[float, float]] = {
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.0-flash-lite": (0.075, 0.30),
}


def load_prices(path: str | Path) -> dict[str, tuple[float, float]]:
    """A price table file (JSON: model -> {"input": USD per 1M, "output": USD per 1M}) over
    the built-in one; ValueError naming the file and the entry that is wrong."""
    # A regular file, read under the files' size limit: not /dev/zero until memory runs out.
    text = read_text(path)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object of model -> {{input, output}}")
    table = dict(PRICES)
    for model, price in data.items():
        ok = isinstance(price, dict) and all(
            isinstance(price.get(k), int | float) and price[k] >= 0 for k in ("input", "output")
        )
        if not ok:
            raise ValueError(f'{path}: $.{model}: expected {{"input": USD, "output": USD}}')
        table[str(model)] = (float(price["input"]), float(price["output"]))
    return table


def price_of(model: str, prices: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    """A model's price: its own entry, else the longest entry its name begins with
    (``gemini-2.5-flash-001`` is ``gemini-2.5-flash``)."""
    name = model.removeprefix("models/")
    if name in prices:
        return prices[name]
    found = [key for key in prices if name.startswith(key)]
    return prices[max(found, key=len)] if found else None


def percentile(values: list[float], share: float) -> float:
    """The ``share`` percentile, linear between the nearest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class RunUsage:
    """One case run's usage, as recorded (``agents.usage.session_usage``), priced."""

    eval_case_id: str
    candidate: str
    recorded: Mapping[str, Any]
    prices: Mapping[str, tuple[float, float]]

    def tokens(self, kind: str) -> int:
        return int(self.recorded.get(kind) or 0)

    def audio_seconds(self, which: str) -> list[float]:
        """Each live turn's seconds to the agent's ``first`` or ``last`` audio."""
        key = f"{which}AudioSeconds"
        return [
            float(t[key])
            for t in self.recorded.get("liveTurns") or []
            if isinstance(t, dict) and isinstance(t.get(key), int | float)
        ]

    @property
    def seconds(self) -> float | None:
        value = self.recorded.get("seconds")
        return float(value) if isinstance(value, int | float) else None

    @property
    def unpriced(self) -> list[str]:
        return [m for m in self.recorded.get("byModel") or {} if price_of(m, self.prices) is None]

    @property
    def cost(self) -> float | None:
        """USD, or None where a model it called has no price."""
        total = 0.0
        for model, counts in (self.recorded.get("byModel") or {}).items():
            price = price_of(model, self.prices)
            if price is None:
                return None
            output = int(counts.get("outputTokens") or 0) + int(counts.get("thinkingTokens") or 0)
            total += (int(counts.get("promptTokens") or 0) * price[0] + output * price[1]) / 1e6
        return total


@dataclass(frozen=True)
class Usage:
    """Every case run's usage, and the run's figures."""

    runs: tuple[RunUsage, ...]

    def total(self, kind: str) -> int:
        return sum(r.tokens(kind) for r in self.runs)

    @property
    def unpriced(self) -> list[str]:
        return sorted({m for r in self.runs for m in r.unpriced})

    def value(self, name: str) -> float | None:
        """``latency_p50_s``, ``latency_p95_s`` or ``cost_per_case_usd``; None where it cannot
        be computed."""
        if name == "cost_per_case_usd":
            costs = [r.cost for r in self.runs]
            found = [c for c in costs if c is not None]
            return statistics.fmean(found) if found and len(found) == len(costs) else None
        share = 0.5 if name.endswith("_p50_s") else 0.95
        if name.startswith(("first_audio", "last_audio")):
            turns = [s for r in self.runs for s in r.audio_seconds(name.split("_")[0])]
            return percentile(turns, share) if turns else None
        seconds = [s for r in self.runs if (s := r.seconds) is not None]
        if not seconds:
            return None
        return percentile(seconds, share)

    def misses(self, thresholds: Mapping[str, float]) -> list[str]:
        missed = []
        for name, bound in thresholds.items():
            value = self.value(name)
            if value is None:
                why = (
                    f"no price for {', '.join(self.unpriced)} (--prices FILE)"
                    if name == "cost_per_case_usd" and self.unpriced
                    else "no turn was live (--agent-mode live) or the agent sent no audio"
                    if name.startswith(("first_audio", "last_audio"))
                    else "the agent's runs recorded none"
                )
                missed.append(f"{name}: cannot be computed: {why}")
            elif value > bound:
                missed.append(f"{name}: {value:.4g} > {bound:g}")
        return missed

    def per_case(self) -> list[dict[str, Any]]:
        by_case: dict[str, list[RunUsage]] = {}
        for run in self.runs:
            by_case.setdefault(run.eval_case_id, []).append(run)
        cases = []
        for case, runs in by_case.items():
            seconds = [s for r in runs if (s := r.seconds) is not None]
            costs = [c for r in runs if (c := r.cost) is not None]
            cases.append(
                {
                    "evalCaseId": case,
                    "runs": len(runs),
                    "modelCalls": statistics.fmean(r.tokens("modelCalls") for r in runs),
                    "promptTokens": statistics.fmean(r.tokens("promptTokens") for r in runs),
                    "outputTokens": statistics.fmean(r.tokens("outputTokens") for r in runs),
                    "thinkingTokens": statistics.fmean(r.tokens("thinkingTokens") for r in runs),
                    "costUsd": statistics.fmean(costs) if len(costs) == len(runs) else None,
                    "secondsP50": percentile(seconds, 0.5) if seconds else None,
                    "secondsP95": percentile(seconds, 0.95) if seconds else None,
                    "turnSeconds": [t for r in runs for t in r.recorded.get("turnSeconds") or []],
                    **_live_case(runs),
                }
            )
        return cases

    def line(self) -> str:
        """``agent: 9 model calls, 63 prompt, 108 output, 27 thinking tokens; $0.0003 a case;
        latency p50 0.41 s, p95 0.77 s``."""
        said = (
            f"agent: {self.total('modelCalls')} model calls, {self.total('promptTokens')} "
            f"prompt, {self.total('outputTokens')} output, {self.total('thinkingTokens')} "
            "thinking tokens"
        )
        cost = self.value("cost_per_case_usd")
        said += f"; ${cost:.6f} a case" if cost is not None else ""
        said += f" (no price for {', '.join(self.unpriced)})" if self.unpriced else ""
        p50, p95 = self.value("latency_p50_s"), self.value("latency_p95_s")
        if p50 is not None and p95 is not None:
            said += f"; latency p50 {p50:.3f} s, p95 {p95:.3f} s"
        first, last = self.value("first_audio_p95_s"), self.value("last_audio_p95_s")
        if first is not None and last is not None:
            said += f"; live turns: first audio p95 {first:.3f} s, last audio p95 {last:.3f} s"
        return said

    def as_dict(self) -> dict[str, Any]:
        return {
            "modelCalls": self.total("modelCalls"),
            "promptTokens": self.total("promptTokens"),
            "outputTokens": self.total("outputTokens"),
            "thinkingTokens": self.total("thinkingTokens"),
            **{name: self.value(name) for name in USAGE_THRESHOLDS},
            "unpriced": self.unpriced,
            "perCase": self.per_case(),
        }


def _live_case(runs: list[RunUsage]) -> dict[str, Any]:
    """A case's live turns, in the order they ran: seconds to the first and last audio."""
    turns = [t for r in runs for t in r.recorded.get("liveTurns") or [] if isinstance(t, dict)]
    if not turns:
        return {}
    return {
        "firstAudioSeconds": [t.get("firstAudioSeconds") for t in turns],
        "lastAudioSeconds": [t.get("lastAudioSeconds") for t in turns],
    }


def usage(results: RunResults) -> Usage | None:
    """The agent's usage of the run's case runs, where it was recorded (``run --agent``)."""
    if not results.agent_usage:
        return None
    prices = results.prices if results.prices is not None else PRICES
    runs = tuple(
        RunUsage(case, candidate, recorded, prices)
        for (case, candidate), recorded in results.agent_usage.items()
    )
    return Usage(runs)
