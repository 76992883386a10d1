"""Whether a metric moved between two runs by more than noise.

Per metric, over the eval cases both runs scored: each case's value is the mean of its scores
(its candidates, or the runs of a side), and the paired difference after - before is what
moves. Reported:

- ``delta``: the mean paired difference;
- ``ci95``: its 95% confidence interval by a paired bootstrap over cases; where a case has
  several scores on a side, each resample also resamples them, so the run-to-run spread of a
  case widens the interval;
- ``p_value``: a paired permutation test (the signs of the case differences flipped at random;
  every assignment when there are 12 cases or fewer), two-sided;
- ``mcnemar_p``: with a threshold, McNemar's exact test on the cases that flipped between pass
  and fail;
- the cases that moved most.

Random draws come from one ``random.Random(seed)``: the same inputs give the same report.

Which rule decides. The permutation test's smallest two-sided p-value over n cases is 2/2^n:
with too few cases to reach ``alpha`` (5 or fewer at 0.05, as most ADK eval sets have), it could
never call anything a regression. There the decision falls back to a deterministic rule: the
metric regressed when its mean dropped by more than ``min_delta``, or when a case went from pass
to fail (with a threshold). ``MetricTest.rule`` says which rule decided, and ``cases`` on how
many paired cases.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: Resamples of the bootstrap and of the permutation test (when not exact).
RESAMPLES = 4000
#: Up to this many cases the permutation test is exact: every one of 2^n sign assignments.
EXACT_PERMUTATION_CASES = 12
DEFAULT_SEED = 20261124

#: The decision rules (``MetricTest.rule``).
SIGNIFICANCE = "significance"
ANY_DROP = "any drop"


def smallest_p(cases: int) -> float:
    """The smallest two-sided p-value the permutation test can give over ``cases`` cases."""
    if cases > EXACT_PERMUTATION_CASES:
        return 1 / (RESAMPLES + 1)
    return 2.0 ** (1 - cases)


@dataclass(frozen=True)
class CaseMove:
    eval_case_id: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


@dataclass(frozen=True)
class MetricTest:
    """What one metric did between the runs, and whether that is more than noise."""

    metric: str
    cases: int
    delta: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    mcnemar_p: float | None
    higher_is_better: bool
    alpha: float
    min_delta: float
    moved_most: list[CaseMove] = field(default_factory=list)
    #: ``significance``, or ``any drop`` where the cases are too few for the test to reach
    #: ``alpha`` (see the module's docstring).
    rule: str = SIGNIFICANCE
    #: Cases that went from pass to fail under the threshold (0 without one).
    flipped_to_fail: int = 0

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < self.alpha

    @property
    def worse(self) -> bool:
        if self.delta is None:
            return False
        return self.delta < 0 if self.higher_is_better else self.delta > 0

    @property
    def beyond_min_delta(self) -> bool:
        return self.delta is not None and abs(self.delta) > self.min_delta

    @property
    def regressed(self) -> bool:
        """By significance: a drop significant at ``alpha`` and larger than ``min_delta``. By
        the any-drop rule: a drop larger than ``min_delta``, or a case gone from pass to fail."""
        if self.rule == ANY_DROP:
            return (self.worse and self.beyond_min_delta) or self.flipped_to_fail > 0
        assert self.delta is not None or not self.significant
        return self.significant and self.worse and self.beyond_min_delta

    @property
    def verdict(self) -> str:
        """``regressed``, ``improved``, ``within noise`` or ``unchanged`` (or ``not compared``)."""
        if self.delta is None:
            return "not compared"
        if self.regressed:
            return "regressed"
        decided = self.significant or self.rule == ANY_DROP
        if decided and not self.worse and self.beyond_min_delta:
            return "improved"
        if self.delta == 0 and (self.ci95 is None or self.ci95 == (0.0, 0.0)):
            return "unchanged"
        return "within noise"

    def as_dict(self) -> dict[str, object]:
        return {
            "cases": self.cases,
            "delta": self.delta,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "pValue": self.p_value,
            "mcnemarPValue": self.mcnemar_p,
            "significant": self.significant,
            "regressed": self.regressed,
            "verdict": self.verdict,
            "rule": self.rule,
            "flippedToFail": self.flipped_to_fail,
            "movedMost": [
                {"evalCaseId": m.eval_case_id, "before": m.before, "after": m.after}
                for m in self.moved_most
            ],
        }


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def bootstrap_ci(
    before: Sequence[Sequence[float]], after: Sequence[Sequence[float]], rng: random.Random
) -> tuple[float, float]:
    """95% interval of the mean paired difference: cases resampled, and each case's scores
    on each side resampled too."""
    count = len(before)
    draws = []
    for _ in range(RESAMPLES):
        total = 0.0
        for _ in range(count):
            case = rng.randrange(count)
            old, new = before[case], after[case]
            old_mean = old[0] if len(old) == 1 else _mean(rng.choices(old, k=len(old)))
            new_mean = new[0] if len(new) == 1 else _mean(rng.choices(new, k=len(new)))
            total += new_mean - old_mean
        draws.append(total / count)
    draws.sort()
    low = draws[int(0.025 * (RESAMPLES - 1))]
    high = draws[math.ceil(0.975 * (RESAMPLES - 1))]
    return low, high


def permutation_p(differences: Sequence[float], rng: random.Random) -> float:
    """Two-sided p-value of a paired sign-flip permutation test of the mean difference."""
    observed = abs(math.fsum(differences))
    if observed == 0:
        return 1.0
    tolerance = 1e-12 * max(1.0, observed)
    if len(differences) <= EXACT_PERMUTATION_CASES:
        extreme = total = 0
        for signs in itertools.product((1, -1), repeat=len(differences)):
            total += 1
            flipped = abs(math.fsum(s * d for s, d in zip(signs, differences, strict=True)))
            extreme += flipped >= observed - tolerance
        return extreme / total
    extreme = 0
    for _ in range(RESAMPLES):
        flipped = abs(math.fsum(d if rng.random() < 0.5 else -d for d in differences))
        extreme += flipped >= observed - tolerance
    return (extreme + 1) / (RESAMPLES + 1)


def sign_test_p(ups: int, downs: int) -> float:
    """The exact two-sided sign (binomial) test: how likely a split at least this uneven is
    when each of the ``ups + downs`` changes goes either way with even odds."""
    n = ups + downs
    if n == 0:
        return 1.0
    k = min(ups, downs)
    tail: float = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def mcnemar_p(flipped_to_fail: int, flipped_to_pass: int) -> float:
    """McNemar's exact test, two-sided: the sign test on the discordant cases."""
    return sign_test_p(flipped_to_fail, flipped_to_pass)


def assess(
    metric: str,
    before: Mapping[str, Sequence[float]],
    after: Mapping[str, Sequence[float]],
    *,
    threshold: float | None = None,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    min_delta: float = 0.0,
    seed: int = DEFAULT_SEED,
) -> MetricTest:
    """One metric's scores per eval case on each side (cases without a score on both sides
    are left out)."""
    rng = random.Random(f"{seed}:{metric}")
    cases = [c for c in before if before[c] and after.get(c)]
    if not cases:
        return MetricTest(metric, 0, None, None, None, None, higher_is_better, alpha, min_delta)
    old = [list(before[c]) for c in cases]
    new = [list(after[c]) for c in cases]
    means_old = [_mean(s) for s in old]
    means_new = [_mean(s) for s in new]
    differences = [b - a for a, b in zip(means_old, means_new, strict=True)]
    delta = _mean(differences)
    spread = any(len(s) > 1 for s in (*old, *new))
    constant = not spread and len(set(differences)) == 1
    ci = (delta, delta) if constant else bootstrap_ci(old, new, rng)
    p_value = permutation_p(differences, rng)
    mcnemar = None
    to_fail = 0
    if threshold is not None:
        passed_old = [(m >= threshold) == higher_is_better for m in means_old]
        passed_new = [(m >= threshold) == higher_is_better for m in means_new]
        to_fail = sum(1 for a, b in zip(passed_old, passed_new, strict=True) if a and not b)
        to_pass = sum(1 for a, b in zip(passed_old, passed_new, strict=True) if b and not a)
        mcnemar = mcnemar_p(to_fail, to_pass)
    moves = sorted(
        (CaseMove(c, a, b) for c, a, b in zip(cases, means_old, means_new, strict=True)),
        key=lambda m: -abs(m.delta),
    )
    return MetricTest(
        metric,
        len(cases),
        delta,
        ci,
        p_value,
        mcnemar,
        higher_is_better,
        alpha,
        min_delta,
        [m for m in moves[:5] if m.delta != 0],
        SIGNIFICANCE if smallest_p(len(cases)) < alpha else ANY_DROP,
        to_fail,
    )


def describe(test: MetricTest) -> str:
    """``-0.150 [-0.230, -0.070], p 0.001: regressed`` (one line of a report)."""
    if test.delta is None:
        return "no case scored in both runs"
    ci = f" [{test.ci95[0]:+.3f}, {test.ci95[1]:+.3f}]" if test.ci95 else ""
    p = f", p {test.p_value:.3g}" if test.p_value is not None else ""
    return f"{test.delta:+.3f}{ci}{p}: {test.verdict}"


def rule_line(test: MetricTest) -> str:
    """How the verdict was reached and on how many paired cases, in a sentence."""
    if test.delta is None:
        return f"{test.metric}: no case scored in both runs"
    if test.rule == SIGNIFICANCE:
        return (
            f"{test.metric}: decided on {test.cases} paired cases by a paired permutation test "
            f"at alpha {test.alpha:g}, beyond a change of {test.min_delta:g}"
        )
    cases = "1 paired case is" if test.cases == 1 else f"{test.cases} paired cases are"
    return (
        f"{test.metric}: {cases} too few for the permutation test to reach "
        f"alpha {test.alpha:g} (its smallest p is {smallest_p(test.cases):.3g}); decided by the "
        f"any-drop rule: a drop larger than {test.min_delta:g}, or a case gone from pass to fail, "
        "regresses"
    )
