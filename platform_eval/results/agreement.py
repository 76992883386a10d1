"""Is the judge right? A run's judged verdicts beside people's labels of the same cases.

A labels file is JSON Lines, one human verdict a line::

    {"case": "weather_paris", "metric": "rubric_based_final_response_quality_v1",
     "rubric": "polite", "verdict": true, "rater": "ada"}

``case`` and ``metric`` name a result of the run; ``rubric`` (a rubric id, or its text) a
rubric verdict of it, else the label is about the metric's pass or fail against its threshold;
``verdict`` is true (passes) or false, or null for one not labelled yet (counted, not used);
``candidate``, ``rater`` and ``note`` (free text) are optional. Several raters may label one
verdict. ``label_template`` writes a file of every judged verdict of a run to fill in.

Per metric and rubric, and over all of them: accuracy (the judge against the people's majority),
Cohen's kappa with a bootstrap interval, Krippendorff's alpha (nominal) over the judge and every
rater when there are several, the confusion matrix, and the verdicts judge and people disagree
on. A label with no judged verdict to stand beside is reported, not dropped.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._json_limits import limit_problem, max_depth, too_deep
from ..formats._problems import FormatError, Problem
from .status import Status

if TYPE_CHECKING:
    from .model import Row, RunResults

#: Resamples of the bootstrap interval of kappa.
BOOTSTRAP_ROUNDS = 1000
_FIELDS = {"case", "metric", "rubric", "verdict", "rater", "candidate", "note"}


@dataclass(frozen=True)
class Label:
    """One person's verdict on one judged verdict."""

    case: str
    metric: str
    #: None: not labelled yet (a template line left as it was).
    verdict: bool | None
    rubric: str | None = None
    rater: str | None = None
    candidate: str | None = None


def read_labels(path: str | Path) -> list[Label]:
    """The labels of a JSON Lines file; FormatError naming each line and field that is wrong."""
    source = str(path)
    labels: list[Label] = []
    problems: list[Problem] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise FormatError([Problem(source, "$", "no such file")]) from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            value = json.loads(line)
        except RecursionError:
            problems.append(Problem(source, where, too_deep(max_depth())))
            continue
        except ValueError as exc:
            problems.append(Problem(source, where, f"not JSON ({exc})"))
            continue
        beyond = limit_problem(value, line)
        if beyond is not None:
            problems.append(Problem(source, f"{where}: {beyond[0]}", beyond[1]))
            continue
        if not isinstance(value, dict):
            problems.append(Problem(source, where, "expected a JSON object"))
            continue
        found = _label(value, source, where, problems)
        if found is not None:
            labels.append(found)
    if problems:
        raise FormatError(problems)
    if not labels:
        raise FormatError([Problem(source, "$", "holds no labels")])
    return labels


def _label(value: dict[str, Any], source: str, where: str, problems: list[Problem]) -> Label | None:
    before = len(problems)
    for key in sorted(set(value) - _FIELDS):
        problems.append(
            Problem(source, f"{where}: {key}", f"unknown field; expected {sorted(_FIELDS)}")
        )
    for key in ("case", "metric"):
        if not isinstance(value.get(key), str) or not value[key]:
            problems.append(Problem(source, f"{where}: {key}", "expected a non-empty string"))
    for key in ("rubric", "rater", "candidate", "note"):
        if value.get(key) is not None and not isinstance(value[key], str):
            problems.append(Problem(source, f"{where}: {key}", "expected a string"))
    if "verdict" not in value or not isinstance(value["verdict"], bool | None):
        problems.append(
            Problem(
                source,
                f"{where}: verdict",
                "expected true (it passes), false (it fails) or null (not labelled yet)",
            )
        )
    if len(problems) > before:
        return None
    return Label(
        case=value["case"],
        metric=value["metric"],
        verdict=value["verdict"],
        rubric=value.get("rubric"),
        rater=value.get("rater"),
        candidate=value.get("candidate"),
    )


@dataclass(frozen=True)
class Verdicts:
    """One judged verdict and what the people said of it."""

    case: str
    candidate: str
    metric: str
    rubric: str | None
    judge: bool
    people: tuple[bool, ...]

    @property
    def majority(self) -> bool | None:
        """The people's verdict: the majority's, None on a tie."""
        yes = sum(self.people)
        no = len(self.people) - yes
        return None if yes == no else yes > no


@dataclass(frozen=True)
class Agreement:
    """How the judge and the people agree on a group of verdicts (a metric, a rubric, all)."""

    metric: str | None
    rubric: str | None
    verdicts: tuple[Verdicts, ...]
    #: kappa's bootstrap interval (95%), None where kappa is undefined.
    interval: tuple[float, float] | None = None

    @property
    def decided(self) -> list[Verdicts]:
        """The verdicts the people decided (no tie among raters)."""
        return [v for v in self.verdicts if v.majority is not None]

    @property
    def accuracy(self) -> float | None:
        decided = self.decided
        if not decided:
            return None
        return sum(v.judge == v.majority for v in decided) / len(decided)

    @property
    def kappa(self) -> float | None:
        decided = self.decided
        return cohen_kappa([v.judge for v in decided], [bool(v.majority) for v in decided])

    @property
    def alpha(self) -> float | None:
        """Krippendorff's alpha over the judge and every rater; None with one rater."""
        if not any(len(v.people) > 1 for v in self.verdicts):
            return None
        return krippendorff_alpha([(v.judge, *v.people) for v in self.verdicts])

    @property
    def confusion(self) -> dict[str, int]:
        """``judge PASS / people PASS`` and the three other cells."""
        cells: Counter[str] = Counter()
        for v in self.decided:
            cells[f"judge {_mark(v.judge)} / people {_mark(bool(v.majority))}"] += 1
        return {
            f"judge {j} / people {p}": cells[f"judge {j} / people {p}"]
            for j in ("PASS", "FAIL")
            for p in ("PASS", "FAIL")
        }

    @property
    def disagreements(self) -> list[Verdicts]:
        """Where the judge said one thing and the people the other, the most people first."""
        found = [v for v in self.decided if v.judge != v.majority]
        return sorted(found, key=lambda v: (-len(v.people), v.case, v.candidate))

    @property
    def name(self) -> str:
        if self.metric is None:
            return "all"
        return self.metric + (f" / {self.rubric}" if self.rubric else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "rubric": self.rubric,
            "verdicts": len(self.verdicts),
            "accuracy": self.accuracy,
            "kappa": self.kappa,
            "kappaInterval": list(self.interval) if self.interval else None,
            "alpha": self.alpha,
            "confusion": self.confusion,
            "disagreements": [
                {
                    "case": v.case,
                    "candidate": v.candidate,
                    "metric": v.metric,
                    "rubric": v.rubric,
                    "judge": v.judge,
                    "people": list(v.people),
                }
                for v in self.disagreements
            ],
        }


def _mark(verdict: bool) -> str:
    return "PASS" if verdict else "FAIL"


@dataclass(frozen=True)
class AgreementReport:
    """Agreement per metric and rubric, and over all of them; labels left unmatched, why."""

    overall: Agreement
    groups: tuple[Agreement, ...]
    unmatched: tuple[str, ...] = field(default=())

    def failures(self, min_kappa: float) -> list[str]:
        """The groups (and the whole) whose kappa is under ``min_kappa`` or undefined."""
        out = []
        for group in (*self.groups, self.overall):
            kappa = group.kappa
            if kappa is None or kappa < min_kappa:
                shown = "undefined" if kappa is None else f"{kappa:.3f}"
                out.append(f"{group.name}: kappa {shown} < {min_kappa:g}")
        return out

    def to_json(self) -> str:
        document = {
            "overall": self.overall.as_dict(),
            "groups": [g.as_dict() for g in self.groups],
            "unmatched": list(self.unmatched),
        }
        return json.dumps(document, indent=2) + "\n"

    def to_table(self) -> str:
        header = ("metric / rubric", "verdicts", "accuracy", "kappa", "95% interval", "alpha")
        rows = [header] + [_table_row(g) for g in (*self.groups, self.overall)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        confusion = self.overall.confusion
        lines += ["", "confusion (all): " + ", ".join(f"{k}: {n}" for k, n in confusion.items())]
        lines += [f"disagree: {_disagreement(v)}" for v in self.overall.disagreements[:20]]
        lines += [f"unmatched: {why}" for why in self.unmatched]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        from ._templates import render

        return render(
            "agreement.html.j2",
            groups=[_table_row(g) for g in (*self.groups, self.overall)],
            disagreements=[_disagreement(v) for v in self.overall.disagreements],
            unmatched=self.unmatched,
        )


def _disagreement(verdict: Verdicts) -> str:
    """One disagreement, as the table and the page say it."""
    rubric = f" / {verdict.rubric}" if verdict.rubric else ""
    people = ", ".join(_mark(p) for p in verdict.people)
    return (
        f"{verdict.case} [{verdict.candidate}] {verdict.metric}{rubric}: "
        f"judge {_mark(verdict.judge)}, people {people}"
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table_row(group: Agreement) -> tuple[str, ...]:
    interval = group.interval
    return (
        group.name,
        str(len(group.verdicts)),
        _number(group.accuracy),
        _number(group.kappa),
        f"{interval[0]:.3f} - {interval[1]:.3f}" if interval else "-",
        _number(group.alpha),
    )


def agreement(results: RunResults, labels: Iterable[Label], *, seed: int = 0) -> AgreementReport:
    """The judge's verdicts of ``results`` beside the people's ``labels``."""
    people: dict[tuple[str, str, str, str | None], list[bool]] = defaultdict(list)
    judged: dict[tuple[str, str, str, str | None], bool] = {}
    unmatched: list[str] = []
    unlabelled = 0
    rows_of: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in results.rows:
        rows_of[(row.eval_case_id, row.metric)].append(row)
    for label in labels:
        if label.verdict is None:
            unlabelled += 1
            continue
        found = _judged(rows_of[(label.case, label.metric)], label)
        if isinstance(found, str):
            unmatched.append(found)
            continue
        for key, verdict in found:
            judged[key] = verdict
            people[key].append(label.verdict)
    if unlabelled:
        unmatched.append(f"{unlabelled} labels have no verdict yet (null): not counted")
    pairs = [Verdicts(*key, judged[key], tuple(people[key])) for key in judged]
    by_group: dict[tuple[str, str | None], list[Verdicts]] = defaultdict(list)
    for pair in pairs:
        by_group[(pair.metric, pair.rubric)].append(pair)
    rng = random.Random(seed)
    groups = tuple(
        _with_interval(Agreement(metric, rubric, tuple(found)), rng)
        for (metric, rubric), found in sorted(
            by_group.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
        )
    )
    overall = _with_interval(Agreement(None, None, tuple(pairs)), rng)
    return AgreementReport(overall, groups, tuple(unmatched))


#: A judged verdict: case, candidate, metric, rubric (None: the metric's pass or fail).
_Key = tuple[str, str, str, str | None]


def _judged(rows: Sequence[Row], label: Label) -> list[tuple[_Key, bool]] | str:
    """The judged verdicts ``label`` is about, keyed, or why there is none (``rows``: the
    run's rows of the label's case and metric)."""
    said = f"{label.case} {label.metric}" + (f" / {label.rubric}" if label.rubric else "")
    found = [row for row in rows if label.candidate is None or row.candidate == label.candidate]
    if not found:
        return f"{said}: the run has no result of this case and metric"
    out: list[tuple[_Key, bool]] = []
    for row in found:
        if label.rubric is None:
            if row.status not in (Status.PASSED, Status.FAILED):
                continue
            out.append(
                ((row.eval_case_id, row.candidate, row.metric, None), row.status == Status.PASSED)
            )
            continue
        verdicts = [
            v.verdict
            for v in row.verdicts
            if label.rubric in (v.rubric_id, v.rubric) and v.verdict is not None
        ]
        if verdicts:
            # A rubric judged turn by turn passes when it passes on every turn.
            out.append(((row.eval_case_id, row.candidate, row.metric, label.rubric), all(verdicts)))
    if not out:
        what = "rubric verdict" if label.rubric else "pass or fail (a threshold and a score)"
        return f"{said}: the judge gave no {what} here"
    return out


def _with_interval(group: Agreement, rng: random.Random) -> Agreement:
    decided = group.decided
    if group.kappa is None or len(decided) < 2:
        return group
    kappas = []
    for _ in range(BOOTSTRAP_ROUNDS):
        sample = [decided[rng.randrange(len(decided))] for _ in decided]
        kappa = cohen_kappa([v.judge for v in sample], [bool(v.majority) for v in sample])
        if kappa is not None:
            kappas.append(kappa)
    if not kappas:
        return group
    kappas.sort()
    low = kappas[int(0.025 * (len(kappas) - 1))]
    high = kappas[int(0.975 * (len(kappas) - 1))]
    return Agreement(group.metric, group.rubric, group.verdicts, (low, high))


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels of the same items; None where it is undefined
    (no items, or both raters gave one and the same label to every item)."""
    count = len(first)
    if count == 0 or count != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / count
    left, right = Counter(first), Counter(second)
    expected = sum(left[c] * right[c] for c in left) / (count * count)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal data: ``units`` holds each item's values, one per
    coder (None where a coder gave none). None where it is undefined (no pairable values, or
    a single value throughout)."""
    coincidences: defaultdict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for unit in units:
        values = [v for v in unit if v is not None]
        pairable = len(values)
        if pairable < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidences[(a, b)] += 1 / (pairable - 1)
    totals: defaultdict[Hashable, float] = defaultdict(float)
    for (a, _), weight in coincidences.items():
        totals[a] += weight
    n = sum(totals.values())
    if n <= 1:
        return None
    disagreement = sum(w for (a, b), w in coincidences.items() if a != b)
    chance = sum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    if chance == 0:
        return None
    return 1 - (n - 1) * disagreement / chance


def label_template(results: RunResults) -> str:
    """JSON Lines of every judged verdict of ``results`` with ``"verdict": null``, for people
    to fill in (the rubric's text, or the metric's explanation, as the note)."""
    lines = []
    for row in results.rows:
        base = {"case": row.eval_case_id, "candidate": row.candidate, "metric": row.metric}
        seen: set[str] = set()
        for v in row.verdicts:
            rubric = v.rubric_id or v.rubric
            if not rubric or rubric in seen or v.verdict is None:
                continue
            seen.add(rubric)
            lines.append({**base, "rubric": rubric, "verdict": None, "note": v.rubric})
        if not row.verdicts and row.status in (Status.PASSED, Status.FAILED):
            lines.append({**base, "verdict": None, "note": row.explanation or ""})
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
