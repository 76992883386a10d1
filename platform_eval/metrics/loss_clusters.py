"""Failure clustering (``:generateLossClusters``): the failed rubric verdicts of one metric,
grouped by the model judge into a two-level taxonomy of failures.

The judge is asked once per analysis, with the failures numbered in the order they came; its
answer assigns each failure to a category (L1, L2, a description) with a rationale. A failure
it leaves out is kept, in an "Unassigned" cluster that says so, never dropped. With no failure
there is nothing to cluster and no model call. Deterministic given the judge's cache: the same
failures ask the same prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types import CandidateResult, EvaluationResult
from ._invocations import content_text
from ._spec import MetricError
from .judges import JudgeError, Judges
from .model_judge import CallLabel
from .model_rubrics import ask_json

#: The L1 categories of ``agent_taxonomy_v1`` as the engine uses them: our own list for agent
#: failures (the service's taxonomy text is not published).
AGENT_TAXONOMY_V1 = (
    "Tool Use",
    "Planning and Reasoning",
    "Instruction Following",
    "Factuality and Grounding",
    "Response Quality",
    "Conversation Management",
    "Safety",
)
TAXONOMIES = {"agent_taxonomy_v1": AGENT_TAXONOMY_V1}
UNASSIGNED = (
    "Unassigned",
    "Not assigned by the model",
    "failures the judge model placed in no cluster",
)

_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "clusters": {
            "type": "ARRAY",
            "items": {
                "type": "OBJECT",
                "properties": {
                    "l1_category": {"type": "STRING"},
                    "l2_category": {"type": "STRING"},
                    "description": {"type": "STRING"},
                    "failures": {
                        "type": "ARRAY",
                        "items": {
                            "type": "OBJECT",
                            "properties": {
                                "id": {"type": "STRING"},
                                "rationale": {"type": "STRING"},
                            },
                            "required": ["id"],
                        },
                    },
                },
                "required": ["l1_category", "l2_category", "failures"],
            },
        }
    },
    "required": ["clusters"],
}


@dataclass(frozen=True)
class Failure:
    """One failed rubric of one result: ``source`` is the result's index (or item name)."""

    source: int
    rubric_id: str
    rubric: str
    reasoning: str
    prompt: str


@dataclass
class Cluster:
    l1: str
    l2: str
    description: str
    #: (failure, why it belongs here), in the failures' order.
    members: list[tuple[Failure, str]] = field(default_factory=list)

    @property
    def sources(self) -> list[int]:
        """The results this cluster's failures come from, each once, in order."""
        return list(dict.fromkeys(failure.source for failure, _ in self.members))


def failures_of(
    results: Sequence[EvaluationResult], metric: str, candidate: str | None
) -> list[Failure]:
    """The failed rubric verdicts of ``metric`` (and ``candidate``, when given) in ``results``."""
    found = []
    for index, result in enumerate(results):
        prompt = _prompt_text(result)
        for scored in result.candidate_results or []:
            if not _matches(scored, result, metric, candidate):
                continue
            for verdict in scored.rubric_verdicts or []:
                if verdict.verdict is not False:
                    continue
                rubric = verdict.evaluated_rubric
                found.append(
                    Failure(
                        source=index,
                        rubric_id=(rubric.rubric_id if rubric else None) or "",
                        rubric=(rubric.description if rubric else None) or "",
                        reasoning=verdict.reasoning or "",
                        prompt=prompt,
                    )
                )
    return found


def _matches(
    scored: CandidateResult, result: EvaluationResult, metric: str, candidate: str | None
) -> bool:
    if (scored.metric or result.metric) != metric:
        return False
    return candidate is None or scored.candidate == candidate


def _prompt_text(result: EvaluationResult) -> str:
    prompt = result.request.prompt if result.request else None
    if prompt is None:
        return ""
    if prompt.text is not None:
        return prompt.text
    if prompt.value:
        return json.dumps(prompt.value, sort_keys=True)
    turns = prompt.agent_data.turns if prompt.agent_data else None
    texts = [
        content_text(event.content)
        for turn in turns or []
        for event in turn.events or []
        if event.content is not None and event.author == "user"
    ]
    return " / ".join(t for t in texts if t)


def clustering_prompt(failures: Sequence[Failure], metric: str, taxonomy: str | None) -> str:
    listed = "\n".join(
        f"[F{n}] rubric: {f.rubric or f.rubric_id}\n     why it failed: {f.reasoning or '-'}"
        + (f"\n     user asked: {f.prompt}" if f.prompt else "")
        for n, f in enumerate(failures, 1)
    )
    categories = TAXONOMIES.get(taxonomy or "")
    frame = (
        "Use these L1 categories only: " + "; ".join(categories) + ".\n"
        if categories
        else "Choose short L1 categories (kinds of failure) and finer L2 categories under them.\n"
    )
    return (
        f"You analyse the failures of an AI agent's evaluation on the metric {metric!r}. "
        "Group the failed rubrics below into clusters of the same kind of failure, a two-level "
        "taxonomy: an L1 category and an L2 category under it, with a one-sentence description "
        "of the failure the cluster holds.\n"
        f"{frame}"
        "Put every failure in exactly one cluster, with a one-sentence rationale.\n"
        'Answer with JSON: {"clusters": [{"l1_category", "l2_category", "description", '
        '"failures": [{"id": "F1", "rationale"}]}]}.\n\n'
        f"FAILURES:\n{listed}"
    )


def cluster(
    judges: Judges,
    failures: Sequence[Failure],
    *,
    metric: str,
    taxonomy: str | None = None,
    top: int | None = None,
    model: str | None = None,
) -> list[Cluster]:
    """The failures' clusters, largest first (at most ``top``); MetricError without a model
    judge or when the model's answer is not clusters."""
    if not failures:
        return []
    if taxonomy and taxonomy not in TAXONOMIES:
        raise MetricError(
            f"predefinedTaxonomy: {taxonomy!r} is not a taxonomy the engine knows; "
            f"known: {sorted(TAXONOMIES)}"
        )
    judge = judges.model
    if judge is None:
        raise MetricError(
            "clustering failures needs a judge model, and none is configured "
            "(--judge-model or PLATFORM_EVAL_JUDGE_MODEL)"
        )
    try:
        answer = ask_json(
            judge,
            model or judge.model,
            clustering_prompt(failures, metric, taxonomy),
            _SCHEMA,
            _clusters,
            None,
            CallLabel("loss_clusters", metric, ""),
        )
    except JudgeError as exc:
        raise MetricError(str(exc)) from None
    clusters = _assign(answer, failures)
    clusters.sort(key=lambda c: -len(c.members))
    return clusters[:top] if top else clusters


def _clusters(data: Any) -> list[dict[str, Any]]:
    listed = data["clusters"]
    if not isinstance(listed, list) or not all(isinstance(c, dict) for c in listed):
        raise TypeError("expected a list of cluster objects")
    return listed


def _assign(answer: list[dict[str, Any]], failures: Sequence[Failure]) -> list[Cluster]:
    by_id = {f"F{n}": failure for n, failure in enumerate(failures, 1)}
    placed: set[str] = set()
    clusters: dict[tuple[str, str], Cluster] = {}
    for entry in answer:
        l1 = str(entry.get("l1_category") or "").strip() or "Uncategorized"
        l2 = str(entry.get("l2_category") or "").strip() or l1
        key = (l1, l2)
        target = clusters.setdefault(key, Cluster(l1, l2, str(entry.get("description") or "")))
        for member in entry.get("failures") or []:
            ident = str(member.get("id") if isinstance(member, dict) else member).strip()
            if ident in by_id and ident not in placed:
                placed.add(ident)
                rationale = member.get("rationale") if isinstance(member, dict) else None
                target.members.append((by_id[ident], str(rationale or "")))
    left = [ident for ident in by_id if ident not in placed]
    if left:
        l1, l2, description = UNASSIGNED
        rest = clusters.setdefault((l1, l2), Cluster(l1, l2, description))
        rest.members.extend((by_id[ident], "") for ident in left)
    return [c for c in clusters.values() if c.members]
