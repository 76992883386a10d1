"""Loss analysis results of the emulator: each config's failures clustered by the judge model
(``metrics.loss_clusters``), as ``LossAnalysisResult`` objects: for ``:generateLossClusters``,
and for a run whose ``evaluationConfig.lossAnalysisConfig`` asks for them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..metrics import loss_clusters
from ..metrics.judges import Judges
from ..types import (
    EvaluationResult,
    FailedRubric,
    LossAnalysisConfig,
    LossCluster,
    LossExample,
    LossTaxonomyEntry,
)
from .backend import now_rfc3339

#: (the RESULT item's name, or None for a result given inline; the result)
Source = tuple[str | None, EvaluationResult]


def analyse(
    judges: Judges, configs: Sequence[LossAnalysisConfig], sources: Sequence[Source]
) -> list[dict[str, Any]]:
    """One LossAnalysisResult (wire JSON) per config; MetricError as the clustering raises it."""
    results = [result for _, result in sources]
    found = []
    for config in configs:
        failures = loss_clusters.failures_of(results, config.metric or "", config.candidate)
        clusters = loss_clusters.cluster(
            judges,
            failures,
            metric=config.metric or "",
            taxonomy=config.predefined_taxonomy,
            top=config.max_top_cluster_count,
        )
        found.append(_loss_result(config, sources, clusters))
    return found


def _loss_result(
    config: LossAnalysisConfig,
    sources: Sequence[Source],
    clusters: list[loss_clusters.Cluster],
) -> dict[str, Any]:
    """One LossAnalysisResult: each cluster with its items, and per item its failed rubrics
    and why each belongs to the cluster."""
    found = []
    for number, cluster in enumerate(clusters, 1):
        examples = []
        for source in cluster.sources:
            item_name, result = sources[source]
            failed = [
                FailedRubric(rubric_id=failure.rubric_id, classification_rationale=why or None)
                for failure, why in cluster.members
                if failure.source == source
            ]
            example = LossExample(
                evaluation_item=item_name,
                evaluation_result=None if item_name else result,
                failed_rubrics=failed,
            )
            examples.append(example)
        found.append(
            LossCluster(
                cluster_id=f"cluster-{number}",
                taxonomy_entry=LossTaxonomyEntry(
                    l1_category=cluster.l1,
                    l2_category=cluster.l2,
                    description=cluster.description or None,
                ),
                item_count=len(examples),
                examples=examples,
            ).to_wire()
        )
    return {"config": config.to_wire(), "analysisTime": now_rfc3339(), "clusters": found}
