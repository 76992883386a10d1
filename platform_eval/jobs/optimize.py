"""``optimize``: a better root instruction for the agent, accepted only when it is better beyond
the noise of a sampled, judged evaluation.

The engine is google-adk's own: GEPA (``GEPARootAgentPromptOptimizer``, what ``adk optimize``
and agents-cli's ``eval optimize`` run: a reflection model reads scored trajectories of a
minibatch of cases and proposes a new instruction, kept on a Pareto front of the cases it does
best on), or ``SimplePromptOptimizer`` (``engine="simple"``: a reflection model reads the
instruction and its score and proposes a new one, kept when it scores higher). platform-eval is
their sampler: every candidate runs on the cases through google-adk's Runner as ``run --agent``
runs it, and is scored by the local engine with the config's metrics (a case's score is the mean
of its metrics' scores, a metric without one counting 0, over its runs); GEPA reads each case's
messages, answer, tool calls and metric explanations. Both engines choose on the training cases
only. What they return is then set beside the original on the held-out validation cases by the
paired comparison of ``compare`` (its small-n rule named): it is accepted only when that says
*improved*, never on a raw mean.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._env import whole_number
from .._operations import MetricLike, to_metric
from ..agents import LoadedAgent, load_agent, run_agent_cases
from ..agents.running import DEFAULT_AGENT_CONCURRENCY, adk_experimental
from ..formats import adk
from ..formats.convert import case_to_item
from ..metrics import Judges, resolve
from ..metrics.engine import evaluate_request
from ..results.significance import DEFAULT_SEED, MetricTest, assess, rule_line
from .agent_job import run_candidate
from .gepa_agents import (
    SKILL_KEY,
    TARGETS,
    instructions_of,
    optimize_agents,
    skills_of,
    with_instructions,
)

_logger = logging.getLogger("platform_eval.jobs")

#: The share of cases kept for validation when no validation set is given.
VALIDATION_SHARE = 0.3
#: Candidate instructions proposed at most unless told (``--budget``).
DEFAULT_BUDGET = 4
DEFAULT_REFLECTION_MODEL = "gemini-2.5-flash"
#: What the comparison is named in the report.
SCORE = "case score"
ENGINES = ("gepa", "simple")
#: Cases GEPA's reflection reads at a time (google-adk's default), at most the training cases.
GEPA_MINIBATCH = 3


@dataclass
class Tried:
    """A candidate instruction and what it scored, in the order the engine asked."""

    instruction: str
    #: Every agent's instruction (name -> text), the root's among them: what was tried.
    instructions: dict[str, str] = field(default_factory=dict)
    #: Per eval case, the case's score on each of its runs.
    scores: dict[str, list[float]] = field(default_factory=dict)
    agent_calls: int = 0
    #: Per eval case, what its first run did and how it scored: what GEPA's reflection reads.
    details: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    #: A proposal over the cap (``_over_cap``): never run, its instruction says why.
    not_tried: bool = False

    @property
    def mean(self) -> float | None:
        means = [sum(s) / len(s) for s in self.scores.values() if s]
        return sum(means) / len(means) if means else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
            "instructions": self.instructions,
            "meanScore": self.mean,
            "cases": {case: scores for case, scores in self.scores.items()},
            "agentModelCalls": self.agent_calls,
        }


@dataclass
class OptimizeReport:
    train: list[str]
    validation: list[str]
    split: str
    baseline: Tried
    best: Tried
    test: MetricTest
    accepted: bool
    tried: list[Tried]
    reflection_calls: int
    reflection_model: str
    engine: str = "gepa"
    target: str = "root"

    @property
    def instructions(self) -> dict[str, str]:
        """Every agent's instruction, as accepted, else as they were."""
        return self.best.instructions if self.accepted else self.baseline.instructions

    @property
    def instruction(self) -> str:
        return self.best.instruction if self.accepted else self.baseline.instruction

    @property
    def decision(self) -> str:
        if self.best.instructions == self.baseline.instructions:
            return "kept the original: no candidate scored higher on the training cases"
        verdict = self.test.verdict
        if self.accepted:
            return f"accepted: the candidate {verdict} on the validation cases"
        return f"kept the original: the candidate is {verdict} on the validation cases"

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "accepted": self.accepted,
            "instruction": self.instruction,
            "split": {"train": self.train, "validation": self.validation, "how": self.split},
            "baseline": {
                "instruction": self.baseline.instruction,
                "validation": self.baseline.as_dict(),
            },
            "best": {"instruction": self.best.instruction, "validation": self.best.as_dict()},
            "statistic": {**self.test.as_dict(), "rule": rule_line(self.test)},
            "engine": self.engine,
            "target": self.target,
            "instructions": self.instructions,
            "candidates": [t.as_dict() for t in self.tried],
            "modelCalls": {
                "reflection": self.reflection_calls,
                "reflectionModel": self.reflection_model,
                # The original and the best are among those tried.
                "agent": sum(t.agent_calls for t in self.tried),
            },
        }


def split_cases(
    cases: Sequence[adk.EvalCase], validation: Sequence[adk.EvalCase] | None, seed: int
) -> tuple[list[adk.EvalCase], list[adk.EvalCase], str]:
    """(training cases, validation cases, how they were chosen)."""
    if validation:
        return list(cases), list(validation), "the validation set given"
    if len(cases) < 2:
        raise ValueError(
            "optimize needs at least 2 cases to keep some for validation, or --validation"
        )
    shuffled = list(cases)
    random.Random(f"{seed}:split").shuffle(shuffled)
    held = max(1, round(len(shuffled) * VALIDATION_SHARE))
    how = (
        f"{held} of {len(cases)} cases held out for validation ({VALIDATION_SHARE:.0%}, "
        f"seed {seed}); the rest train"
    )
    return shuffled[held:], shuffled[:held], how


@dataclass(frozen=True)
class OptimizeProgress:
    """How far an optimization is: instructions scored, agent runs made, the best mean."""

    instructions: int
    runs: int
    best: float | None


class _Scorer:
    """Runs a candidate root agent on cases and scores each run by the local engine."""

    def __init__(
        self,
        agent: LoadedAgent,
        metrics: Sequence[MetricLike],
        judges: Judges,
        num_runs: int,
        concurrency: int | str,
    ) -> None:
        self.agent = agent
        self.specs = [resolve(to_metric(m)) for m in metrics]
        self.judges = judges
        self.num_runs = num_runs
        self.concurrency = concurrency
        self.tried: dict[str, Tried] = {}
        self.runs = 0
        self.on_progress: Callable[[OptimizeProgress], None] | None = None

    def _loaded(self, root_agent: Any) -> LoadedAgent:
        digest = hashlib.sha256(_key(root_agent).encode()).hexdigest()[:16]
        return dataclasses.replace(
            self.agent,
            root_agent=root_agent,
            app=None,
            fingerprint=f"{self.agent.fingerprint}:{digest}",
        )

    async def score(self, root_agent: Any, cases: Sequence[adk.EvalCase]) -> Tried:
        key = _key(root_agent)
        if key not in self.tried:
            instruction = getattr(root_agent, "instruction", "")
            self.tried[key] = Tried(
                instruction if isinstance(instruction, str) else "",
                instructions=json.loads(key),
            )
            over = _over_cap(self.tried[key])
            if over is not None:
                # Not run, and kept as what it was, not as itself: a 50 MiB proposal held in
                # optimize.json and its page, each candidate's, was 351 MB written.
                self.tried[key] = Tried(over, not_tried=True)
                _logger.warning("optimize: %s", over)
        tried = self.tried[key]
        if tried.not_tried:
            for case in cases:
                tried.scores.setdefault(case.eval_id, [0.0])
            return tried
        todo = [c for c in cases if c.eval_id not in tried.scores]
        if todo:
            report = await run_agent_cases(
                self._loaded(root_agent),
                todo,
                num_runs=self.num_runs,
                concurrency=self.concurrency,
            )
            by_id = {c.eval_id: c for c in todo}
            for run in report.runs:
                score, detail = self._case_score(by_id[run.eval_id], run)
                tried.scores.setdefault(run.eval_id, []).append(score)
                tried.details.setdefault(run.eval_id, detail)
                tried.agent_calls += _model_calls(run.session)
            self.runs += len(report.runs)
            if self.on_progress is not None:
                means = [t.mean for t in self.tried.values() if t.mean is not None]
                self.on_progress(
                    OptimizeProgress(len(self.tried), self.runs, max(means, default=None))
                )
        return tried

    def _case_score(self, case: adk.EvalCase, run: Any) -> tuple[float, dict[str, Any]]:
        """The mean of the metrics' scores of one run (a metric without a score counts 0; a
        run the agent failed on scores 0), and what the run did and how it scored."""
        if run.session is None:
            return 0.0, {"score": 0.0, "error": run.error or "the agent did not finish"}
        item, _ = case_to_item(case, "optimize")
        request = item.evaluation_request
        assert request is not None
        # The run's candidate as ``run`` scores it: its final state and each turn's agents
        # kept beside it, where final_session_state_match and the judges read them.
        candidate, kept = run_candidate(run, "agent")
        request = request.model_copy(update={"candidate_responses": [candidate]})
        metadata = {**(item.metadata or {}), **{key: {"agent": v} for key, v in kept.items()}}
        results = evaluate_request(
            self.specs, request, self.judges, case=case.eval_id, metadata=metadata
        )
        scores = [r.score if r.score is not None else 0.0 for r in results]
        score = sum(scores) / len(scores) if scores else 0.0
        return score, _detail(score, candidate.agent_data, results)


def _detail(score: float, agent_data: Any, results: Sequence[Any]) -> dict[str, Any]:
    """One run as GEPA's reflection reads it: what the user said, the tool calls, the answer,
    and each metric's score and explanation."""
    said, calls, answers = [], [], []
    for turn in agent_data.turns or []:
        for event in turn.events or []:
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call is not None:
                    calls.append({"tool": part.function_call.name, "args": part.function_call.args})
                elif part.text and event.author == "user":
                    said.append(part.text)
                elif part.text:
                    answers.append(part.text)
    return {
        "score": score,
        "user": said,
        "tool_calls": calls,
        "answer": answers[-1] if answers else "",
        "metrics": {
            str(r.metric): {"score": r.score, "explanation": r.explanation} for r in results
        },
    }


#: The longest instruction a proposal may hold (the reflection model's answer): a model that
#: answers without end proposes no instruction worth a run.
PROPOSAL_CAP_ENV = "PLATFORM_EVAL_MAX_PROPOSAL_KIB"
DEFAULT_PROPOSAL_KIB = 256


def _over_cap(tried: Tried) -> str | None:
    """Why a proposal is not run (an instruction over the cap), or None."""
    cap = whole_number(PROPOSAL_CAP_ENV, DEFAULT_PROPOSAL_KIB, maximum=1 << 20) * 1024
    for name, text in tried.instructions.items():
        if len(text.encode()) > cap:
            return (
                f"a proposed instruction of {name} is {len(text.encode()) / 1024:,.0f} KiB, over "
                f"the cap of {cap // 1024} KiB ({PROPOSAL_CAP_ENV}): not tried, scored 0"
            )
    return None


def _key(root_agent: Any) -> str:
    """What a candidate is: every agent's instruction, by name, and every skill's
    (``skill_instructions:<skill>``); the tried ones are kept by it."""
    found: dict[str, str] = dict(skills_of(root_agent))

    def walk(agent: Any) -> None:
        instruction = getattr(agent, "instruction", None)
        if isinstance(instruction, str):
            found[agent.name] = instruction
        for child in getattr(agent, "sub_agents", None) or []:
            walk(child)

    walk(root_agent)
    return json.dumps(found, sort_keys=True, ensure_ascii=False)


def _model_calls(session: Any) -> int:
    events = (session or {}).get("events") or []
    return sum(1 for e in events if isinstance(e, dict) and e.get("usageMetadata"))


def _sampler_class() -> Any:
    """google-adk's Sampler, scoring by ``_Scorer`` (built once: it needs google-adk)."""
    from google.adk.optimization.data_types import UnstructuredSamplingResult
    from google.adk.optimization.sampler import Sampler

    class PlatformEvalSampler(Sampler[UnstructuredSamplingResult]):
        def __init__(
            self,
            scorer: _Scorer,
            train: Sequence[adk.EvalCase],
            validation: Sequence[adk.EvalCase],
        ) -> None:
            self.scorer = scorer
            self.sets = {"train": list(train), "validation": list(validation)}

        def get_train_example_ids(self) -> list[str]:
            return [c.eval_id for c in self.sets["train"]]

        def get_validation_example_ids(self) -> list[str]:
            return [c.eval_id for c in self.sets["validation"]]

        async def sample_and_score(
            self,
            candidate: Any,
            example_set: str = "validation",
            batch: list[str] | None = None,
            capture_full_eval_data: bool = False,
        ) -> UnstructuredSamplingResult:
            cases = [c for c in self.sets[example_set] if batch is None or c.eval_id in set(batch)]
            tried = await self.scorer.score(candidate, cases)
            scores = {c.eval_id: _mean(tried.scores[c.eval_id]) for c in cases}
            data = (
                {c.eval_id: tried.details.get(c.eval_id, {}) for c in cases}
                if capture_full_eval_data
                else None
            )
            return UnstructuredSamplingResult(scores=scores, data=data)

    return PlatformEvalSampler


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


async def optimize(
    agent: str | Path | LoadedAgent,
    cases: Sequence[adk.EvalCase],
    metrics: Sequence[MetricLike],
    *,
    validation: Sequence[adk.EvalCase] | None = None,
    judges: Judges,
    budget: int = DEFAULT_BUDGET,
    reflection_model: str = DEFAULT_REFLECTION_MODEL,
    num_runs: int = 1,
    seed: int = DEFAULT_SEED,
    alpha: float = 0.05,
    concurrency: int | str = DEFAULT_AGENT_CONCURRENCY,
    on_progress: Callable[[OptimizeProgress], None] | None = None,
    engine: str = "gepa",
    run_dir: str | Path | None = None,
    target: str = "root",
) -> OptimizeReport:
    """Optimizes the root agent's instruction (see the module); ``budget``: the candidate
    instructions the reflection model is asked for. ``run_dir``: where GEPA keeps its state, so
    that an interrupted optimization, run again, goes on from where it was."""
    if budget < 1:
        raise ValueError(f"--budget must be at least 1, got {budget}")
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if target not in TARGETS:
        raise ValueError(f"--target {target}: expected one of {', '.join(TARGETS)}")
    if target != "root" and engine != "gepa":
        raise ValueError(f"--target {target}: only the gepa engine changes more than the root")
    if engine == "gepa":
        _require_gepa()
    loaded = agent if isinstance(agent, LoadedAgent) else await load_agent(agent)
    train, held, how = split_cases(cases, validation, seed)
    scorer = _Scorer(loaded, metrics, judges, num_runs, concurrency)
    scorer.on_progress = on_progress
    if target == "root" and not isinstance(getattr(loaded.root_agent, "instruction", None), str):
        raise ValueError(
            f"the root agent {loaded.root_agent.name} has no instruction of its own to optimize "
            "(a workflow agent, or one whose instruction a function builds): --target "
            "sub-agents optimizes the agents below it"
        )
    if target != "root":
        instructions_of(loaded.root_agent, target)  # refused before any run, with why
        found = await optimize_agents(
            scorer,
            loaded.root_agent,
            train,
            target,
            reflection_model,
            _gepa_calls(budget, len(train)),
            min(GEPA_MINIBATCH, len(train)),
            str(run_dir) if run_dir is not None else None,
        )
        ranked = [_Ranked(with_instructions(loaded.root_agent, found))]
    elif engine == "gepa":
        # GEPA keeps candidates by their scores on its "validation" cases: the training ones
        # here, so that the held-out cases judge the result without having chosen it.
        sampler = _sampler_class()(scorer, train, train)
        result = await _gepa(reflection_model, budget, len(train), run_dir).optimize(
            loaded.root_agent, sampler
        )
        ranked = sorted(result.optimized_agents, key=lambda a: -(a.overall_score or 0.0))
    else:
        sampler = _sampler_class()(scorer, train, held)
        result = await _simple(reflection_model, budget, len(train)).optimize(
            loaded.root_agent, sampler
        )
        ranked = list(result.optimized_agents)
    best_agent = ranked[0].optimized_agent
    baseline = await scorer.score(loaded.root_agent, held)
    best = await scorer.score(best_agent, held)
    test = assess(
        SCORE,
        {c.eval_id: baseline.scores[c.eval_id] for c in held},
        {c.eval_id: best.scores[c.eval_id] for c in held},
        alpha=alpha,
        seed=seed,
    )
    changed = best.instructions != baseline.instructions
    accepted = changed and test.verdict == "improved"
    tried = [t for t in scorer.tried.values()]
    return OptimizeReport(
        train=[c.eval_id for c in train],
        validation=[c.eval_id for c in held],
        split=how,
        baseline=baseline,
        best=best,
        test=test,
        accepted=accepted,
        tried=tried,
        # GEPA scores every instruction it is proposed (the original first); the simple
        # engine asks its model once per iteration.
        reflection_calls=len(tried) - 1 if engine == "gepa" else budget,
        reflection_model=reflection_model,
        engine=engine,
        target=target,
    )


@dataclass(frozen=True)
class _Ranked:
    """The best candidate of the multi-agent GEPA, as the engines' results give theirs."""

    optimized_agent: Any
    overall_score: float | None = None


def _gepa_calls(budget: int, train: int) -> int:
    """GEPA's metric calls for ``budget`` proposals: the original on every training case, then
    per proposal its parent and itself on a minibatch and, when it does better there, itself on
    every training case."""
    return train + budget * (2 * min(GEPA_MINIBATCH, train) + train)


def _require_gepa() -> None:
    try:
        import gepa  # noqa: F401
    except ImportError:
        raise ValueError(
            "the GEPA engine needs the gepa package: pip install 'platform-eval[optimize]', "
            "or choose --engine simple"
        ) from None


def _gepa(model: str, budget: int, train: int, run_dir: str | Path | None) -> Any:
    from google.adk.optimization.gepa_root_agent_prompt_optimizer import (
        GEPARootAgentPromptOptimizer,
        GEPARootAgentPromptOptimizerConfig,
    )

    config = GEPARootAgentPromptOptimizerConfig(
        optimizer_model=model,
        max_metric_calls=_gepa_calls(budget, train),
        reflection_minibatch_size=min(GEPA_MINIBATCH, train),
        run_dir=str(run_dir) if run_dir is not None else None,
    )
    with adk_experimental():
        return GEPARootAgentPromptOptimizer(config)


def _simple(model: str, budget: int, train: int) -> Any:
    from google.adk.optimization.simple_prompt_optimizer import (
        SimplePromptOptimizer,
        SimplePromptOptimizerConfig,
    )

    # The engine scores a batch of the training cases: all of them here (batch_size), so that
    # its choice is over the same cases for every candidate.
    config = SimplePromptOptimizerConfig(
        optimizer_model=model, num_iterations=budget, batch_size=train
    )
    return SimplePromptOptimizer(config)


def _targeted(instructions: dict[str, str], target: str) -> dict[str, str]:
    """The texts ``target`` optimizes: the skills' (``skill_instructions:<skill>``), or the
    agents'."""
    skills = target == "skills"
    return {k: v for k, v in instructions.items() if k.startswith(SKILL_KEY) == skills}


def write_report(report: OptimizeReport, folder: str | Path) -> list[Path]:
    """``instruction.txt`` (accepted, else the original), ``optimize.json`` and
    ``optimize.html`` in ``folder``; the files written."""
    from ..results._templates import render

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    document = report.as_dict()
    files = {
        # The root's instruction, or every agent's where more than the root was optimized.
        **(
            {"instruction.txt": report.instruction + "\n"}
            if report.target == "root"
            else {
                "instructions.json": json.dumps(
                    _targeted(report.instructions, report.target), indent=2, ensure_ascii=False
                )
                + "\n"
            }
        ),
        "optimize.json": json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        "optimize.html": render("optimize.html.j2", report=document),
    }
    written = []
    for name, text in files.items():
        path = out / name
        partial = path.with_name(path.name + ".tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
        written.append(path)
    return written
