"""Judge models behind one interface (``metrics.model_judge.ModelJudge``): Gemini through
google-genai, LiteLLM models; the replay cache, token accounting and bounded concurrency.

The metric engine is handed a ``Judging`` and never imports this package.
"""

from .cache import JudgeCache, JudgeCacheError, call_key
from .service import DEFAULT_CONCURRENCY, Judging, Usage, UsageBook, usage_report
from .settings import JudgeSettings

__all__ = [
    "DEFAULT_CONCURRENCY",
    "JudgeCache",
    "JudgeCacheError",
    "JudgeSettings",
    "Judging",
    "Usage",
    "UsageBook",
    "call_key",
    "usage_report",
]
