"""Two runs side by side: per-metric deltas, and the cases and rubrics that moved."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .model import Row, RunResults, format_score


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

    def why_nothing_paired(self) -> str:
        """Why no result of one run could be set beside one of the other."""
        reasons = list(self.unpaired[:5])
        if not reasons:
            before, after = self.before.cases, self.after.cases
            reasons.append(
                f"no eval case is in both runs (before: {before[:5]}, after: {after[:5]})"
            )
        return "nothing to compare: " + "; ".join(reasons)

    def _coverage(self) -> list[str]:
        lines = []
        if self.only_before:
            lines.append(f"only in {self.before.run.name}: {', '.join(self.only_before)}")
        if self.only_after:
            lines.append(f"only in {self.after.run.name}: {', '.join(self.only_after)}")
        lines += [f"not paired: {reason}" for reason in self.unpaired]
        return lines

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.regressed]

    @property
    def improvements(self) -> list[Change]:
        return [c for c in self.changes if not c.regressed]

    def to_table(self) -> str:
        width = max([len("metric"), *map(len, self.deltas)])
        lines = [f"{'metric':{width}} {'before':>8} {'after':>8} {'delta':>8}"]
        for metric, (a, b) in self.deltas.items():
            delta = "-" if a is None or b is None else f"{b - a:+.3f}"
            lines.append(f"{metric:{width}} {format_score(a):>8} {format_score(b):>8} {delta:>8}")
        for title, changes in (("regressed", self.regressions), ("improved", self.improvements)):
            if changes:
                lines.append(f"\n{title}:")
                lines += [f"  {_describe(c)}" for c in changes]
        coverage = self._coverage()
        if coverage:
            lines += ["", *coverage]
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        return json.dumps(
            {
                "before": self.before.run.name,
                "after": self.after.run.name,
                "metrics": {m: {"before": a, "after": b} for m, (a, b) in self.deltas.items()},
                "regressed": [c.__dict__ for c in self.regressions],
                "improved": [c.__dict__ for c in self.improvements],
                "paired": self.paired,
                "onlyBefore": self.only_before,
                "onlyAfter": self.only_after,
                "unpaired": self.unpaired,
            },
            indent=2,
        )

    def to_markdown(self) -> str:
        lines = ["| metric | before | after | delta |", "|---|---|---|---|"]
        for metric, (a, b) in self.deltas.items():
            delta = "-" if a is None or b is None else f"{b - a:+.3f}"
            lines.append(f"| {metric} | {format_score(a)} | {format_score(b)} | {delta} |")
        for title, changes in (("Regressed", self.regressions), ("Improved", self.improvements)):
            if changes:
                lines += ["", f"**{title}**", ""] + [f"- {_describe(c)}" for c in changes]
        coverage = self._coverage()
        if coverage:
            lines += ["", *(f"- {line}" for line in coverage)]
        return "\n".join(lines) + "\n"


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


def compare(
    before: RunResults, after: RunResults, *, candidates: Mapping[str, str] | None = None
) -> Comparison:
    """Per-metric means of both runs, and what moved in each pair of results.

    Results pair by eval case, then candidate: see ``_pairs``. ``candidates`` maps a candidate
    name of ``before`` to one of ``after``, to pair them explicitly.
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
    return Comparison(
        before,
        after,
        deltas,
        changes,
        paired=len(pairs),
        only_before=[case for case in cases_before if case not in cases_after],
        only_after=[case for case in cases_after if case not in cases_before],
        unpaired=unpaired,
    )
