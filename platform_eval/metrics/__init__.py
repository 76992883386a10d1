"""The local metric engine: pure functions over EvaluationRequest -> CandidateResult.

``REGISTRY`` lists every metric with what it reads, whether it needs a judge, and whether the
real service defines it.
"""

from ._spec import MetricError, MetricInfo, MetricSpec, not_applicable
from .engine import (
    DEFAULT_JUDGES,
    REGISTRY,
    evaluate_request,
    evaluate_stored_request,
    resolve,
    score,
)
from .judges import JudgeError, Judges, LocalJudge, RubricJudge
from .model_judge import ModelJudge
from .summary import summarize
from .text import exact_match, response_match_score, tokenize
from .thresholds import reliability_name, threshold_problem
from .trajectory import MatchType

__all__ = [
    "DEFAULT_JUDGES",
    "REGISTRY",
    "JudgeError",
    "Judges",
    "LocalJudge",
    "MatchType",
    "MetricError",
    "MetricInfo",
    "MetricSpec",
    "ModelJudge",
    "RubricJudge",
    "evaluate_request",
    "evaluate_stored_request",
    "exact_match",
    "not_applicable",
    "reliability_name",
    "resolve",
    "response_match_score",
    "score",
    "summarize",
    "threshold_problem",
    "tokenize",
]
