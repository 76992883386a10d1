"""Loss analysis: the service groups a run's failures into clusters of a taxonomy.

``:generateLossClusters`` clusters results given inline or a set's RESULT items; the emulator
computes it with the judge model (``metrics.loss_clusters``).
"""

from __future__ import annotations

from ._base import Timestamp, WireModel
from .items import EvaluationResult


class LossAnalysisConfig(WireModel):
    """Which metric's failures to analyse, for which candidate."""

    metric: str | None = None
    candidate: str | None = None
    #: Beyond the discovery documents of 2026-11-06, sent by the official SDK (2.7.0): the
    #: taxonomy to cluster by (``agent_taxonomy_v1``) and how many of the top clusters to keep.
    predefined_taxonomy: str | None = None
    max_top_cluster_count: int | None = None


class VulnerableTool(WireModel):
    """A tool whose results could carry injected content, at these JSON paths."""

    tool_name: str | None = None
    json_paths: list[str] | None = None


class RedTeamingAnalysisConfig(WireModel):
    """An automated red-teaming analysis of the run's agent."""

    attack_categories: list[str] | None = None
    vulnerable_tools: list[VulnerableTool] | None = None


class AnalysisConfig(WireModel):
    """One analysis of a run: beyond the discovery documents of 2026-11-06, sent by the
    official SDK (2.7.0) as the run's ``analysisConfigs``."""

    analysis_name: str | None = None
    red_teaming_analysis_config: RedTeamingAnalysisConfig | None = None


class LossTaxonomyEntry(WireModel):
    """A kind of failure: a category (``"Tool Calling"``) and a finer one under it."""

    l1_category: str | None = None
    l2_category: str | None = None
    description: str | None = None


class FailedRubric(WireModel):
    rubric_id: str | None = None
    #: Why the failure belongs to its cluster, as the classifier put it.
    classification_rationale: str | None = None


class LossExample(WireModel):
    """One failed item of a cluster: its name, or its result inline."""

    evaluation_item: str | None = None
    evaluation_result: EvaluationResult | None = None
    failed_rubrics: list[FailedRubric] | None = None


class LossCluster(WireModel):
    cluster_id: str | None = None
    taxonomy_entry: LossTaxonomyEntry | None = None
    item_count: int | None = None
    examples: list[LossExample] | None = None


class LossAnalysisResult(WireModel):
    """The clusters one analysis found, and the config it ran with."""

    config: LossAnalysisConfig | None = None
    analysis_time: Timestamp | None = None
    clusters: list[LossCluster] | None = None


class EvaluationResultList(WireModel):
    evaluation_results: list[EvaluationResult] | None = None


class GenerateLossClustersRequest(WireModel):
    """Clusters of the failures of results given inline, or of a set's RESULT items, one
    analysis per config."""

    configs: list[LossAnalysisConfig] | None = None
    evaluation_set: str | None = None
    inline_results: EvaluationResultList | None = None
    location: str | None = None


class GenerateLossClustersResponse(WireModel):
    analysis_time: Timestamp | None = None
    results: list[LossAnalysisResult] | None = None
