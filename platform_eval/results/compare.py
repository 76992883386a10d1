"""Two runs side by side: per-metric deltas, and the cases and rubrics that moved."""

from __future__ import annotations

import json
from dataclasses import dataclass

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
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        return json.dumps(
            {
                "before": self.before.run.name,
                "after": self.after.run.name,
                "metrics": {m: {"before": a, "after": b} for m, (a, b) in self.deltas.items()},
                "regressed": [c.__dict__ for c in self.regressions],
                "improved": [c.__dict__ for c in self.improvements],
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
        return "\n".join(lines) + "\n"


def _describe(change: Change) -> str:
    where = f"{change.eval_case_id} [{change.candidate}] {change.metric}"
    if change.rubric is not None:
        return f"{where} rubric {change.rubric}: {change.before} -> {change.after}"
    return f"{where}: {format_score(change.before)} -> {format_score(change.after)}"


def _key(row: Row) -> tuple[str, str, str]:
    return row.eval_case_id, row.candidate, row.metric


def compare(before: RunResults, after: RunResults) -> Comparison:
    means_before = {s.metric: s.mean for s in before.summary()}
    means_after = {s.metric: s.mean for s in after.summary()}
    metrics = list(dict.fromkeys([*means_before, *means_after]))
    deltas = {m: (means_before.get(m), means_after.get(m)) for m in metrics}
    old = {_key(r): r for r in before.rows}
    changes: list[Change] = []
    for row in after.rows:
        earlier = old.get(_key(row))
        if earlier is None:
            continue
        if earlier.score != row.score:
            changes.append(Change(*_key(row), earlier.score, row.score))
        verdicts = {v.rubric_id or v.rubric: v.verdict for v in earlier.verdicts}
        for verdict in row.verdicts:
            rubric = verdict.rubric_id or verdict.rubric
            if rubric in verdicts and verdicts[rubric] != verdict.verdict:
                changes.append(
                    Change(
                        *_key(row),
                        float(bool(verdicts[rubric])),
                        float(bool(verdict.verdict)),
                        rubric=rubric,
                    )
                )
    return Comparison(before, after, deltas, changes)
