"""Two runs side by side: per-metric deltas, and the cases and rubrics that moved."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .significance import DEFAULT_SEED, MetricTest, assess, rule_line
from .status import format_score

if TYPE_CHECKING:
    from .model import Row, RunResults


@dataclass(frozen=True)
class Change:
    eval_case_id: str
    candidate: str
    metric: str
    before: float | None
    after: float | None
    #: The rubric that flipped, for rubric changes; None for score changes.
    rubric: str | None = None

    @property
    def regressed(self) -> bool:
        if self.rubric is not None:
            return bool(self.before) and not self.after
        if self.before is None:
            return False
        return self.after is None or self.after < self.before


@dataclass(frozen=True)
class Comparison:
    before: RunResults
    after: RunResults
    deltas: dict[str, tuple[float | None, float | None]]
    changes: list[Change]
    #: How many (eval case, candidate) pairs were compared.
    paired: int = 0
    #: Eval cases only one of the runs has.
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    #: Cases both runs have whose candidates could not be paired, each saying why.
    unpaired: list[str] = field(default_factory=list)
    #: Per metric: the paired delta over cases, its interval and p-value (see significance).
    tests: dict[str, MetricTest] = field(default_factory=dict)

    @property
    def regressed_metrics(self) -> list[MetricTest]:
        """Metrics whose drop is more than noise (significant, and beyond ``min_delta``): what
        ``--fail-on-regression`` fails on."""
        return [t for t in self.tests.values() if t.regressed]

    def why_nothing_paired(self) -> str:
        """Why no result of one run could be set beside one of the other."""
        reasons = list(self.unpaired[:5])
        if not reasons:
            before, after = self.before.cases, self.after.cases
            reasons.append(
                f"no eval case is in both runs (before: {before[:5]}, after: {after[:5]})"
            )
        return "nothing to compare: " + "; ".join(reasons)

    def decisions(self) -> list[str]:
        """How each metric's verdict was reached, on how many paired cases (one line each)."""
        return [rule_line(test) for test in self.tests.values()]

    def usage_lines(self) -> list[str]:
        """What the agent's runs cost and took, before and after, and the trade-off in a line
        (``same quality, 30% cheaper``); none where either run recorded no usage."""
        before, after = self.before.usage(), self.after.usage()
        if before is None or after is None:
            return []
        lines = []
        changed: list[str] = []
        for name, unit, less, more in (
            ("cost_per_case_usd", "USD a case", "cheaper", "dearer"),
            ("latency_p95_s", "s p95", "faster", "slower"),
        ):
            a, b = before.value(name), after.value(name)
            if a is None or b is None:
                continue
            share = f" ({(b - a) / a:+.0%})" if a else ""
            lines.append(f"agent {name}: {a:.6g} -> {b:.6g} {unit}{share}")
            if a and abs(b - a) / a >= 0.05:
                changed.append(f"{abs(b - a) / a:.0%} {less if b < a else more}")
        regressed = bool(self.regressed_metrics)
        improved = any(t.verdict == "improved" for t in self.tests.values())
        quality = "worse" if regressed else "better" if improved else "same quality"
        lines.append(f"trade-off: {quality}, " + (", ".join(changed) or "same cost and speed"))
        return lines

    def _coverage(self) -> list[str]:
        lines = []
        if self.only_before:
            lines.append(f"only in {self.before.run_name}: {', '.join(self.only_before)}")
        if self.only_after:
            lines.append(f"only in {self.after.run_name}: {', '.join(self.only_after)}")
        lines += [f"not paired: {reason}" for reason in self.unpaired]
        return lines

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.regressed]

    @property
    def improvements(self) -> list[Change]:
        return [c for c in self.changes if not c.regressed]

    def _test_cells(self, metric: str) -> tuple[str, str, str]:
        """(95% interval, p-value, verdict) of a metric, ``-`` where none."""
        test = self.tests.get(metric)
        if test is None or test.delta is None:
            return "-", "-", "not compared"
        ci = f"[{test.ci95[0]:+.3f}, {test.ci95[1]:+.3f}]" if test.ci95 else "-"
        p = f"{test.p_value:.3g}" if test.p_value is not None else "-"
        return ci, p, test.verdict

    def _rows(self) -> Iterator[tuple[str, str, str, str, str, str, str]]:
        """Each metric's cells, as every format shows them: metric, before, after, delta,
        95% interval, p-value, verdict."""
        for metric, (a, b) in self.deltas.items():
            delta = "-" if a is None or b is None else f"{b - a:+.3f}"
            yield (metric, format_score(a), format_score(b), delta, *self._test_cells(metric))

    def to_table(self) -> str:
        width = max([len("metric"), *map(len, self.deltas)])
        lines = [
            f"{'metric':{width}} {'before':>8} {'after':>8} {'delta':>8}  "
            f"{'95% CI (paired)':<18} {'p':>7}  verdict"
        ]
        for metric, a, b, delta, ci, p, verdict in self._rows():
            lines.append(f"{metric:{width}} {a:>8} {b:>8} {delta:>8}  {ci:<18} {p:>7}  {verdict}")
        for test in self.tests.values():
            if test.moved_most and test.verdict in ("regressed", "improved"):
                moved = ", ".join(
                    f"{m.eval_case_id} {m.before:.3f}->{m.after:.3f}" for m in test.moved_most
                )
                lines.append(f"  {test.metric}: moved most: {moved}")
        for title, changes in (("regressed", self.regressions), ("improved", self.improvements)):
            if changes:
                lines.append(f"\n{title}:")
                lines += [f"  {_describe(c)}" for c in changes]
        lines += ["", *self.decisions()]
        spent = self.usage_lines()
        if spent:
            lines += ["", *spent]
        coverage = self._coverage()
        if coverage:
            lines += ["", *coverage]
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        return json.dumps(
            {
                "before": self.before.run_name,
                "after": self.after.run_name,
                "metrics": {
                    m: {
                        "before": a,
                        "after": b,
                        **(self.tests[m].as_dict() if m in self.tests else {}),
                    }
                    for m, (a, b) in self.deltas.items()
                },
                "regressedMetrics": [t.metric for t in self.regressed_metrics],
                "regressed": [c.__dict__ for c in self.regressions],
                "improved": [c.__dict__ for c in self.improvements],
                "paired": self.paired,
                "onlyBefore": self.only_before,
                "onlyAfter": self.only_after,
                "unpaired": self.unpaired,
                "agentUsage": self._usage_json(),
            },
            indent=2,
        )

    def _usage_json(self) -> dict[str, Any] | None:
        before, after = self.before.usage(), self.after.usage()
        if before is None or after is None:
            return None
        names = ("cost_per_case_usd", "latency_p50_s", "latency_p95_s")
        return {
            "before": {n: before.value(n) for n in names},
            "after": {n: after.value(n) for n in names},
            "tradeOff": self.usage_lines()[-1],
        }

    def to_markdown(self) -> str:
        lines = [
            "| metric | before | after | delta | 95% CI (paired) | p | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for metric, a, b, delta, ci, p, verdict in self._rows():
            lines.append(f"| {metric} | {a} | {b} | {delta} | {ci} | {p} | {verdict} |")
        for title, changes in (("Regressed", self.regressions), ("Improved", self.improvements)):
            if changes:
                lines += ["", f"**{title}**", ""] + [f"- {_describe(c)}" for c in changes]
        lines += ["", *(f"- {line}" for line in self.decisions())]
        spent = self.usage_lines()
        if spent:
            lines += ["", *(f"- {line}" for line in spent)]
        coverage = self._coverage()
        if coverage:
            lines += ["", *(f"- {line}" for line in coverage)]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        from ._templates import render

        rows = [
            {
                "metric": metric,
                "before": a,
                "after": b,
                "delta": delta,
                "ci": ci,
                "p": p,
                "verdict": verdict,
                "css": verdict.replace(" ", "-"),
            }
            for metric, a, b, delta, ci, p, verdict in self._rows()
        ]
        changes = [
            f"{title}: {_describe(c)}"
            for title, group in (("regressed", self.regressions), ("improved", self.improvements))
            for c in group
        ]
        return render(
            "compare.html.j2",
            title=f"{self.before.run_name or ''} vs {self.after.run_name or ''}",
            paired=self.paired,
            rows=rows,
            changes=changes,
            decisions=self.decisions(),
        )


def _describe(change: Change) -> str:
    where = f"{change.eval_case_id} [{change.candidate}] {change.metric}"
    if change.rubric is not None:
        return f"{where} rubric {change.rubric}: {change.before} -> {change.after}"
    return f"{where}: {format_score(change.before)} -> {format_score(change.after)}"


def _key(row: Row) -> tuple[str, str, str]:
    return row.eval_case_id, row.candidate, row.metric


def _candidates_by_case(results: RunResults) -> dict[str, list[str]]:
    found: dict[str, dict[str, None]] = {}
    for row in results.rows:
        found.setdefault(row.eval_case_id, {})[row.candidate] = None
    return {case: list(names) for case, names in found.items()}


def _pairs(
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    candidates: Mapping[str, str],
) -> tuple[dict[tuple[str, str], str], list[str]]:
    """{(case, candidate after): candidate before} for each pair, and why cases did not pair.

    A case pairs its candidates by ``candidates`` (before -> after) when given; else a case
    with one candidate in each run pairs them whatever their names (two agents, or one agent
    renamed); else candidates pair by name.
    """
    pairs: dict[tuple[str, str], str] = {}
    unpaired: list[str] = []
    for case, names_after in after.items():
        names_before = before.get(case)
        if names_before is None:
            continue
        if candidates:
            matched = {
                new: old
                for old, new in candidates.items()
                if old in names_before and new in names_after
            }
        elif len(names_before) == 1 and len(names_after) == 1:
            matched = {names_after[0]: names_before[0]}
        else:
            matched = {name: name for name in names_after if name in names_before}
        if not matched:
            unpaired.append(
                f"{case}: candidates {names_before} before and {names_after} after share no name"
                " (pass --candidate BEFORE=AFTER)"
            )
        pairs.update({(case, new): old for new, old in matched.items()})
    return pairs, unpaired


def merge_runs(runs: Sequence[RunResults]) -> RunResults:
    """Several runs of one side as one: each case's results of every run are its candidates
    (``agent@2`` for the second run's ``agent``), so that a comparison takes each case's mean
    over the runs and their spread. One run is returned as it is."""
    if len(runs) == 1:
        return runs[0]
    rows = [
        dataclasses.replace(row, candidate=f"{row.candidate}@{index}")
        for index, results in enumerate(runs, start=1)
        for row in results.rows
    ]
    first = runs[0]
    names = ",".join(r.run_name or "?" for r in runs)
    run = first.run.model_copy(update={"name": names}) if first.run is not None else None
    # The class of the runs merged: the results model renders itself through this module.
    merged = type(first)(run, rows, {k: v for r in runs for k, v in r.conversations.items()})
    return merged


def _higher_is_better(metric: str) -> bool:
    from ..metrics import REGISTRY  # the metric's direction, where the registry knows it

    info = REGISTRY.get(metric)
    return info.higher_is_better if info is not None else True


def _case_scores(
    results: RunResults, keep: set[tuple[str, str]]
) -> dict[str, dict[str, list[float]]]:
    """metric -> eval case -> the scores of its kept candidates."""
    out: dict[str, dict[str, list[float]]] = {}
    for row in results.rows:
        # NaN is no score: it is not equal to itself.
        scored = row.score is not None and row.score == row.score
        if scored and (row.eval_case_id, row.candidate) in keep:
            assert row.score is not None
            out.setdefault(row.metric, {}).setdefault(row.eval_case_id, []).append(row.score)
    return out


def compare(
    before: RunResults,
    after: RunResults,
    *,
    candidates: Mapping[str, str] | None = None,
    alpha: float = 0.05,
    min_delta: float = 0.0,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """Per-metric means of both runs, what moved in each pair of results, and per metric
    whether the paired change over cases is more than noise (``Comparison.tests``).

    Results pair by eval case, then candidate: see ``_pairs``. ``candidates`` maps a candidate
    name of ``before`` to one of ``after``, to pair them explicitly. A case with several
    candidates (repeated runs) is its candidates' mean, and their spread widens the interval.
    A metric regressed when its drop is significant at ``alpha`` and larger than ``min_delta``.
    """
    means_before = {s.metric: s.mean for s in before.summary()}
    means_after = {s.metric: s.mean for s in after.summary()}
    metrics = list(dict.fromkeys([*means_before, *means_after]))
    deltas = {m: (means_before.get(m), means_after.get(m)) for m in metrics}
    cases_before, cases_after = _candidates_by_case(before), _candidates_by_case(after)
    pairs, unpaired = _pairs(cases_before, cases_after, candidates or {})
    old = {_key(r): r for r in before.rows}
    changes: list[Change] = []
    for row in after.rows:
        paired_with = pairs.get((row.eval_case_id, row.candidate))
        earlier = (
            old.get((row.eval_case_id, paired_with, row.metric))
            if paired_with is not None
            else None
        )
        if earlier is None:
            continue
        who = row.candidate if paired_with == row.candidate else f"{paired_with}->{row.candidate}"
        where = (row.eval_case_id, who, row.metric)
        if earlier.score != row.score:
            changes.append(Change(*where, earlier.score, row.score))
        verdicts = {v.rubric_id or v.rubric: v.verdict for v in earlier.verdicts}
        for verdict in row.verdicts:
            rubric = verdict.rubric_id or verdict.rubric
            if rubric in verdicts and verdicts[rubric] != verdict.verdict:
                changes.append(
                    Change(
                        *where,
                        float(bool(verdicts[rubric])),
                        float(bool(verdict.verdict)),
                        rubric=rubric,
                    )
                )
    kept_after = set(pairs)
    kept_before = {(case, old_name) for (case, _), old_name in pairs.items()}
    scores_before, scores_after = _case_scores(before, kept_before), _case_scores(after, kept_after)
    thresholds = {**before.thresholds, **after.thresholds}
    tests = {
        metric: assess(
            metric,
            scores_before.get(metric, {}),
            scores_after.get(metric, {}),
            threshold=thresholds.get(metric),
            higher_is_better=_higher_is_better(metric),
            alpha=alpha,
            min_delta=min_delta,
            seed=seed,
        )
        for metric in metrics
    }
    return Comparison(
        before,
        after,
        deltas,
        changes,
        tests=tests,
        paired=len(pairs),
        only_before=[case for case in cases_before if case not in cases_after],
        only_after=[case for case in cases_after if case not in cases_before],
        unpaired=unpaired,
    )
