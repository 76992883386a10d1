"""Pairwise preference between two runs: a judge model reads both answers to each case.

For every case both runs answered, the judge is asked which answer serves the user's request
better, twice, the answers in one order and then the other. It prefers the later run's answer
only when it does so in both orders (a *win*), the earlier one likewise (a *loss*); a verdict
that follows the order, or a tie, is a *tie*. An answer whose verdict cannot be read (no A, B
or TIE on its first line) is no tie: the case is *not evaluated*, left out of the counts, and
``PairwiseReport.complete`` is false, so that a gate cannot pass on it. The report gives wins,
losses and ties, a 95% interval of the net preference ((wins - losses) / cases, bootstrap over
cases) and a sign-test p-value on wins against losses. Calls go through the judge handed in
(its replay cache and its accounting, as every judged metric's do).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from google.genai import types as genai_types

from ..metrics.model_judge import CallLabel, JudgeUnavailableError, ModelJudge
from ..types import AgentData
from .model import RunResults
from .significance import DEFAULT_SEED, RESAMPLES, sign_test_p

PROMPT = """You compare two answers of an AI agent to the same user request.

# User request
{request}

# Answer A
{first}

# Answer B
{second}

Which answer serves the user's request better: more correct, more complete, more helpful?
Answer with one word on the first line, A, B or TIE, then one line saying why."""

_VERDICT = re.compile(r"^\W*(A|B|TIE)\b", re.IGNORECASE)
#: A verdict that could not be read, and the outcome of a case with one.
UNREAD = "?"
NOT_EVALUATED = "not evaluated"


@dataclass(frozen=True)
class Preference:
    eval_case_id: str
    #: "win" (the later run's answer is better), "loss", "tie", or "not evaluated" (a verdict
    #: that could not be read).
    outcome: str
    #: The judge's first line in each order (later run second, then first).
    verdicts: tuple[str, str]
    reasons: tuple[str, str]


@dataclass
class PairwiseReport:
    before: str
    after: str
    model: str
    preferences: list[Preference] = field(default_factory=list)
    #: Cases that could not be compared (no request or answer to show), each with why.
    skipped: list[str] = field(default_factory=list)
    #: Cases put to the judge that it did not answer (the model failed), each with why.
    unjudged: list[str] = field(default_factory=list)
    ci95: tuple[float, float] | None = None
    p_value: float | None = None

    def count(self, outcome: str) -> int:
        return sum(1 for p in self.preferences if p.outcome == outcome)

    @property
    def decided(self) -> list[Preference]:
        """The cases whose verdicts were read in both orders."""
        return [p for p in self.preferences if p.outcome != NOT_EVALUATED]

    @property
    def not_evaluated(self) -> list[str]:
        """Each case the judge did not decide, with why: an unreadable verdict, or no answer."""
        unread = [
            f"{p.eval_case_id}: the judge's verdict could not be read ({p.verdicts[0]}, "
            f"{p.verdicts[1]})"
            for p in self.preferences
            if p.outcome == NOT_EVALUATED
        ]
        return unread + self.unjudged

    @property
    def complete(self) -> bool:
        """Every case that was put to the judge was decided."""
        return not self.not_evaluated

    @property
    def net(self) -> float | None:
        decided = self.decided
        if not decided:
            return None
        return (self.count("win") - self.count("loss")) / len(decided)

    def as_dict(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "after": self.after,
            "model": self.model,
            "cases": len(self.decided),
            "wins": self.count("win"),
            "losses": self.count("loss"),
            "ties": self.count("tie"),
            "notEvaluated": self.not_evaluated,
            "complete": self.complete,
            "net": self.net,
            "ci95": list(self.ci95) if self.ci95 else None,
            "pValue": self.p_value,
            "preferences": [
                {"evalCaseId": p.eval_case_id, "outcome": p.outcome, "verdicts": list(p.verdicts)}
                for p in self.preferences
            ],
            "skipped": self.skipped,
        }

    def to_text(self) -> str:
        if not self.decided:
            return "pairwise: no case could be compared" + "".join(
                [
                    *(f"\n  skipped: {why}" for why in self.skipped),
                    *(f"\n  NOT_EVALUATED: {why}" for why in self.not_evaluated),
                ]
            )
        ci = f" [{self.ci95[0]:+.3f}, {self.ci95[1]:+.3f}]" if self.ci95 else ""
        p = f", p {self.p_value:.3g}" if self.p_value is not None else ""
        lines = [
            f"pairwise ({self.model}, each case judged in both orders): {self.count('win')} "
            f"wins, {self.count('loss')} losses, {self.count('tie')} ties for the later run; "
            f"net {self.net:+.3f}{ci}{p}"
        ]
        lines += [f"  skipped: {why}" for why in self.skipped]
        lines += [f"  NOT_EVALUATED: {why}" for why in self.not_evaluated]
        return "\n".join(lines)


def final_answer(data: AgentData | str | None) -> str | None:
    """A candidate's last answer: its text, or the last text an agent said in the last turn."""
    if isinstance(data, str):
        return data or None
    for turn in reversed((data.turns if data else None) or []):
        for event in reversed(turn.events or []):
            if event.author == "user" or event.content is None:
                continue
            text = "".join(part.text or "" for part in event.content.parts or [])
            if text.strip():
                return text
        break
    return None


def _interval(outcomes: list[int], seed: int) -> tuple[float, float]:
    rng = random.Random(f"{seed}:pairwise")
    draws = sorted(
        sum(rng.choice(outcomes) for _ in outcomes) / len(outcomes) for _ in range(RESAMPLES)
    )
    return draws[int(0.025 * (RESAMPLES - 1))], draws[math.ceil(0.975 * (RESAMPLES - 1))]


async def _ask(judge: ModelJudge, model: str, prompt: str, label: CallLabel) -> tuple[str, str]:
    contents = [genai_types.Content(role="user", parts=[genai_types.Part(text=prompt)])]
    for _ in range(2):
        reply = await judge.generate(model, contents, None, sample=0, label=label)
        lines = [line.strip() for line in reply.text.strip().splitlines() if line.strip()]
        found = _VERDICT.match(lines[0]) if lines else None
        if found:
            return found.group(1).upper(), " ".join(lines[1:])[:300]
        # An answer with no verdict is not given again; a replayed one is asked afresh.
        if not judge.unusable(reply):
            break
    return UNREAD, " ".join(lines[1:])[:300]


def pairwise(
    before: RunResults,
    after: RunResults,
    judge: ModelJudge,
    *,
    model: str | None = None,
    seed: int = DEFAULT_SEED,
) -> PairwiseReport:
    """Asks ``judge`` which run answered each case better; see the module's docstring."""
    chosen = model or judge.model
    report = PairwiseReport(before.run_name or "", after.run_name or "", chosen)
    asks: list[tuple[str, str, str, str]] = []
    for case, record in after.conversations.items():
        earlier = before.conversations.get(case)
        if earlier is None:
            continue
        request = earlier.prompt or record.prompt or None
        old = next(filter(None, map(final_answer, earlier.candidates.values())), None)
        new = next(filter(None, map(final_answer, record.candidates.values())), None)
        if request is None or old is None or new is None:
            missing = "request" if request is None else "answer"
            report.skipped.append(f"{case}: no {missing} to show the judge")
            continue
        asks.append((case, request, old, new))

    async def judge_case(case: str, request: str, old: str, new: str) -> Preference:
        label = CallLabel("pairwise", case, "before|after")
        swapped = CallLabel("pairwise", case, "after|before")
        first, second = await asyncio.gather(
            _ask(judge, chosen, PROMPT.format(request=request, first=old, second=new), label),
            _ask(judge, chosen, PROMPT.format(request=request, first=new, second=old), swapped),
        )
        # In the first order the later run's answer is B; in the second it is A.
        if UNREAD in (first[0], second[0]):
            outcome = NOT_EVALUATED
        elif first[0] == "B" and second[0] == "A":
            outcome = "win"
        elif first[0] == "A" and second[0] == "B":
            outcome = "loss"
        else:
            outcome = "tie"
        return Preference(case, outcome, (first[0], second[0]), (first[1], second[1]))

    async def everything() -> list[Preference | BaseException]:
        return await asyncio.gather(*(judge_case(*ask) for ask in asks), return_exceptions=True)

    for (case, *_), found in zip(asks, judge.run(everything()), strict=True):
        if isinstance(found, JudgeUnavailableError):
            report.unjudged.append(f"{case}: {found}")
        elif isinstance(found, BaseException):
            raise found
        else:
            report.preferences.append(found)
    if report.decided:
        outcomes = [{"win": 1, "loss": -1}.get(p.outcome, 0) for p in report.decided]
        report.ci95 = _interval(outcomes, seed)
        report.p_value = sign_test_p(report.count("win"), report.count("loss"))
    return report


def to_json(report: PairwiseReport) -> str:
    return json.dumps(report.as_dict(), indent=2)
