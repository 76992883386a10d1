"""Repeated runs of an agent (``--num-runs N``): does a case pass at least once in k tries
(pass@k), every time in k tries (pass^k, the reliability figure tau-bench made standard), and
which cases are flaky?

A run of a case passes when every result of it with a threshold passed: a result that could not
be evaluated fails it, one without a threshold (or not applicable) does not count. With n runs
of a case of which c passed, the unbiased estimators: pass@k = 1 - C(n-c, k) / C(n, k) (Chen et
al. 2021, HumanEval) and pass^k = C(c, k) / C(n, k) (Yao et al. 2024, tau-bench), for k = 1..n.
The run's figures are their means over the cases that ran k times or more. A case whose runs
disagree (0 < c < n) is flaky. A quarantined case is reported and counted apart: it decides
no threshold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import comb
from typing import TYPE_CHECKING, Any

from ..metrics.thresholds import reliability_name
from .status import Status

if TYPE_CHECKING:
    from .model import RunResults


def pass_at(n: int, c: int, k: int) -> float:
    """The chance that at least one of k runs drawn from n, c of them passing, passes."""
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat(n: int, c: int, k: int) -> float:
    """The chance that every one of k runs drawn from n, c of them passing, passes."""
    return comb(c, k) / comb(n, k)


@dataclass(frozen=True)
class CaseReliability:
    eval_case_id: str
    #: Runs of the case, and how many passed.
    runs: int
    passed: int
    quarantined: bool = False

    @property
    def flaky(self) -> bool:
        return 0 < self.passed < self.runs

    def pass_at(self, k: int) -> float | None:
        return pass_at(self.runs, self.passed, k) if k <= self.runs else None

    def pass_hat(self, k: int) -> float | None:
        return pass_hat(self.runs, self.passed, k) if k <= self.runs else None


@dataclass(frozen=True)
class Reliability:
    """Every case's runs that passed, and the run's pass@k and pass^k."""

    cases: tuple[CaseReliability, ...]

    @property
    def runs(self) -> int:
        """The most runs a case had: k goes from 1 to it."""
        return max((c.runs for c in self.cases), default=0)

    @property
    def counted(self) -> list[CaseReliability]:
        return [c for c in self.cases if not c.quarantined]

    @property
    def flaky(self) -> list[str]:
        return [c.eval_case_id for c in self.cases if c.flaky]

    @property
    def quarantined(self) -> list[str]:
        return [c.eval_case_id for c in self.cases if c.quarantined]

    def value(self, name: str) -> float | None:
        """``pass@k`` or ``pass^k`` of the run: the mean over the counted cases that ran k
        times or more; None where none did."""
        parsed = reliability_name(name)
        if parsed is None:
            raise ValueError(f"{name!r} is not pass@k or pass^k")
        kind, k = parsed
        values = [
            c.pass_at(k) if kind == "@" else c.pass_hat(k) for c in self.counted if c.runs >= k
        ]
        found = [v for v in values if v is not None]
        return sum(found) / len(found) if found else None

    def names(self) -> list[str]:
        return [f"pass{kind}{k}" for kind in "@^" for k in range(1, self.runs + 1)]

    def misses(self, thresholds: Mapping[str, float]) -> list[str]:
        """Each reliability threshold the run misses, said: below it, or not computable."""
        missed = []
        for name, threshold in thresholds.items():
            value = self.value(name)
            if value is None:
                missed.append(
                    f"{name}: cannot be computed, no counted case ran {name[5:]} times or more "
                    f"(--num-runs {name[5:]} or more)"
                )
            elif value < threshold:
                missed.append(f"{name}: {value:.3f} < {threshold:g}")
        return missed

    def line(self) -> str:
        """``over 3 runs: pass@1 0.667, ... pass^3 0.333; 2 flaky: a, b; 1 quarantined``."""
        figures = ", ".join(
            f"{name} {value:.3f}"
            for name in self.names()
            if (value := self.value(name)) is not None
        )
        said = f"reliability over {self.runs} runs: {figures or 'nothing counted'}"
        if self.flaky:
            said += f"; {len(self.flaky)} flaky: {', '.join(self.flaky[:10])}"
            said += " ..." if len(self.flaky) > 10 else ""
        if self.quarantined:
            said += f"; {len(self.quarantined)} quarantined (their failures fail no gate)"
        return said

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            **{name: self.value(name) for name in self.names()},
            "flaky": self.flaky,
            "quarantined": self.quarantined,
            "cases": [
                {
                    "evalCaseId": c.eval_case_id,
                    "runs": c.runs,
                    "passed": c.passed,
                    "flaky": c.flaky,
                    "quarantined": c.quarantined,
                    **{f"pass@{k}": c.pass_at(k) for k in range(1, c.runs + 1)},
                    **{f"pass^{k}": c.pass_hat(k) for k in range(1, c.runs + 1)},
                }
                for c in self.cases
            ],
        }


def reliability(results: RunResults) -> Reliability | None:
    """The runs' reliability, where a case has several candidates (repeated runs) and results
    have thresholds to pass; None otherwise."""
    by_run: dict[str, dict[str, list[Status]]] = {}
    for row in results.rows:
        statuses = by_run.setdefault(row.eval_case_id, {}).setdefault(row.candidate, [])
        if row.threshold is not None and row.status != Status.NOT_APPLICABLE:
            statuses.append(row.status)
    if all(len(runs) < 2 for runs in by_run.values()):
        return None
    cases = []
    for case, runs in by_run.items():
        judged = [statuses for statuses in runs.values() if statuses]
        if not judged:
            continue  # no threshold judged any run of it: it passes nothing and fails nothing
        passed = sum(1 for statuses in judged if all(s == Status.PASSED for s in statuses))
        cases.append(CaseReliability(case, len(judged), passed, case in results.quarantine))
    return Reliability(tuple(cases)) if cases else None
