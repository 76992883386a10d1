"""``optimize``: a better root instruction for the agent, accepted only when it is better beyond
the noise of a sampled, judged evaluation.

The engine is google-adk's own optimizer (``SimplePromptOptimizer``: a reflection model reads
the instruction and its score and proposes a new one, kept when it scores higher on the training
cases), with platform-eval as its sampler: every candidate runs on the cases through google-adk's
Runner as ``run --agent`` runs it, and is scored by the local engine with the config's metrics
(a case's score is the mean of its metrics' scores, a metric without one counting 0, over its
runs). What the engine returns is then set beside the original on the validation cases by the
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

from .._operations import MetricLike, to_metric
from ..agents import LoadedAgent, load_agent, run_agent_cases
from ..agents.running import DEFAULT_AGENT_CONCURRENCY
from ..formats import adk
from ..formats.convert import case_to_item
from ..metrics import Judges, resolve
from ..metrics.engine import evaluate_request
from ..results.significance import DEFAULT_SEED, MetricTest, assess, rule_line
from ..traces.adk_session import session_to_conversation
from ..types import CandidateResponse
from .agent_job import with_agents

_logger = logging.getLogger("platform_eval.jobs")

#: The share of cases kept for validation when no validation set is given.
VALIDATION_SHARE = 0.3
#: Candidate instructions proposed at most unless told (``--budget``).
DEFAULT_BUDGET = 4
DEFAULT_REFLECTION_MODEL = "gemini-2.5-flash"
#: What the comparison is named in the report.
SCORE = "case score"


@dataclass
class Tried:
    """A candidate instruction and what it scored, in the order the engine asked."""

    instruction: str
    #: Per eval case, the case's score on each of its runs.
    scores: dict[str, list[float]] = field(default_factory=dict)
    agent_calls: int = 0

    @property
    def mean(self) -> float | None:
        means = [sum(s) / len(s) for s in self.scores.values() if s]
        return sum(means) / len(means) if means else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
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

    @property
    def instruction(self) -> str:
        return self.best.instruction if self.accepted else self.baseline.instruction

    @property
    def decision(self) -> str:
        if self.best.instruction == self.baseline.instruction:
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

    def _loaded(self, root_agent: Any) -> LoadedAgent:
        instruction = str(getattr(root_agent, "instruction", "") or "")
        digest = hashlib.sha256(instruction.encode()).hexdigest()[:16]
        return dataclasses.replace(
            self.agent,
            root_agent=root_agent,
            app=None,
            fingerprint=f"{self.agent.fingerprint}:{digest}",
        )

    async def score(self, root_agent: Any, cases: Sequence[adk.EvalCase]) -> Tried:
        instruction = str(getattr(root_agent, "instruction", "") or "")
        tried = self.tried.setdefault(instruction, Tried(instruction))
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
                tried.scores.setdefault(run.eval_id, []).append(
                    self._case_score(by_id[run.eval_id], run)
                )
                tried.agent_calls += _model_calls(run.session)
        return tried

    def _case_score(self, case: adk.EvalCase, run: Any) -> float:
        """The mean of the metrics' scores of one run (a metric without a score counts 0; a
        run the agent failed on scores 0)."""
        if run.session is None:
            return 0.0
        item, _ = case_to_item(case, "optimize")
        request = item.evaluation_request
        assert request is not None
        conversation = session_to_conversation(run.session, source=f"optimize {run.key}")
        candidate = CandidateResponse(
            candidate="agent", agent_data=with_agents(conversation.agent_data, run.agents)
        )
        request = request.model_copy(update={"candidate_responses": [candidate]})
        results = evaluate_request(
            self.specs, request, self.judges, case=case.eval_id, metadata=item.metadata
        )
        scores = [r.score if r.score is not None else 0.0 for r in results]
        return sum(scores) / len(scores) if scores else 0.0


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
            data = {c: {"score": s} for c, s in scores.items()} if capture_full_eval_data else None
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
    on_candidate: Callable[[int, int], None] | None = None,
) -> OptimizeReport:
    """Optimizes the root agent's instruction (see the module); ``budget``: the candidate
    instructions the reflection model is asked for."""
    from google.adk.optimization.simple_prompt_optimizer import (
        SimplePromptOptimizer,
        SimplePromptOptimizerConfig,
    )

    if budget < 1:
        raise ValueError(f"--budget must be at least 1, got {budget}")
    loaded = agent if isinstance(agent, LoadedAgent) else await load_agent(agent)
    train, held, how = split_cases(cases, validation, seed)
    scorer = _Scorer(loaded, metrics, judges, num_runs, concurrency)
    sampler = _sampler_class()(scorer, train, held)
    config = SimplePromptOptimizerConfig(
        optimizer_model=reflection_model,
        num_iterations=budget,
        batch_size=len(train),
    )
    engine = SimplePromptOptimizer(config)
    # The engine scores a batch of the training cases: all of them here (batch_size), so that
    # its choice is over the same cases for every candidate.
    result = await engine.optimize(loaded.root_agent, sampler)
    best_agent = result.optimized_agents[0].optimized_agent
    baseline = await scorer.score(loaded.root_agent, held)
    best = await scorer.score(best_agent, held)
    test = assess(
        SCORE,
        {c.eval_id: baseline.scores[c.eval_id] for c in held},
        {c.eval_id: best.scores[c.eval_id] for c in held},
        alpha=alpha,
        seed=seed,
    )
    changed = best.instruction != baseline.instruction
    accepted = changed and test.verdict == "improved"
    tried = [t for t in scorer.tried.values()]
    if on_candidate is not None:
        on_candidate(len(tried), budget)
    return OptimizeReport(
        train=[c.eval_id for c in train],
        validation=[c.eval_id for c in held],
        split=how,
        baseline=baseline,
        best=best,
        test=test,
        accepted=accepted,
        tried=tried,
        reflection_calls=budget,
        reflection_model=reflection_model,
    )


def write_report(report: OptimizeReport, folder: str | Path) -> list[Path]:
    """``instruction.txt`` (accepted, else the original), ``optimize.json`` and
    ``optimize.html`` in ``folder``; the files written."""
    from ..results._templates import render

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    document = report.as_dict()
    files = {
        "instruction.txt": report.instruction + "\n",
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
