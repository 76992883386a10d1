"""The Porter stemmer ROUGE uses (NLTK's PorterStemmer, as rouge-score and ADK call it)."""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _stemmer() -> Any:
    try:
        from nltk.stem import porter
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "ROUGE-based metrics need NLTK's Porter stemmer: pip install 'platform-eval[metrics]'"
        ) from exc
    return porter.PorterStemmer()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer().stem(word))
