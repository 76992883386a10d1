"""Which judges an emulator gets: from flags, else the environment.

``PLATFORM_EVAL_JUDGE_MODEL`` (or ``--judge-model``) names the model that judges free-text
rubrics, ADK's judged criteria and custom LLM metrics; without it only the local judge runs
(rubrics a program can check). The replay cache is ``judge-cache.sqlite`` beside the emulator's
database (``PLATFORM_EVAL_JUDGE_CACHE`` or ``--judge-cache`` elsewhere, ``off`` for none);
``--no-judge-cache`` asks the model every time and keeps the new answers in place of the old.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .._adaptive import DEFAULT_CAP
from ..metrics.judges import Judges
from .code_runner import SubprocessCodeRunner
from .service import DEFAULT_CALL_TIMEOUT, DEFAULT_CONCURRENCY, Judging

MODEL_ENV = "PLATFORM_EVAL_JUDGE_MODEL"
CACHE_ENV = "PLATFORM_EVAL_JUDGE_CACHE"
CACHE_FILE = "judge-cache.sqlite"


@dataclass(frozen=True)
class JudgeSettings:
    model: str | None = None
    #: The cache file; None for none.
    cache: Path | None = None
    #: Calls at once: a number, or "auto" (raised while calls succeed, cut on 429 and 503).
    concurrency: int | str = DEFAULT_CONCURRENCY
    #: The most calls at once "auto" raises to.
    max_concurrency: int = DEFAULT_CAP
    replay_only: bool = False
    #: Every call asks the model; its answer replaces the one kept (``--no-judge-cache``).
    refresh: bool = False
    max_calls: int | None = None
    #: Seconds one model call may take before it counts as failed.
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    #: Run the custom code metrics runs send, each call in a limited subprocess.
    allow_code_metrics: bool = False

    @classmethod
    def resolve(
        cls,
        *,
        db: str | Path | None = None,
        model: str | None = None,
        config_model: str | None = None,
        cache: str | Path | None = None,
        no_cache: bool = False,
        concurrency: int | str | None = None,
        max_concurrency: int | None = None,
        replay_only: bool = False,
        max_calls: int | None = None,
        call_timeout: float | None = None,
        allow_code_metrics: bool = False,
    ) -> JudgeSettings:
        """Flags first, then the environment, then the eval config's judge model
        (``config_model``, as ADK reads it); the cache beside ``db`` by default (none for an
        emulator in memory, unless one is named)."""
        chosen_model = model or os.environ.get(MODEL_ENV, "").strip() or config_model or None
        named = str(cache) if cache is not None else os.environ.get(CACHE_ENV, "").strip()
        if no_cache and replay_only:
            raise ValueError(
                "--no-judge-cache asks the model every time and --replay-only never does: "
                "give one of them"
            )
        if named.lower() == "off":
            path = None
        elif named:
            path = Path(named)
        else:
            path = Path(db).with_name(CACHE_FILE) if db not in (None, ":memory:") else None
        return cls(
            model=chosen_model,
            cache=path,
            concurrency=concurrency or DEFAULT_CONCURRENCY,
            max_concurrency=max_concurrency or DEFAULT_CAP,
            replay_only=replay_only,
            refresh=no_cache,
            max_calls=max_calls,
            call_timeout=call_timeout or DEFAULT_CALL_TIMEOUT,
            allow_code_metrics=allow_code_metrics,
        )

    def judges(self) -> Judges:
        """The local judge, and with a model the model judge that every judged metric asks
        through (its cache, budget, accounting and concurrency)."""
        code = SubprocessCodeRunner() if self.allow_code_metrics else None
        if self.model is None:
            return Judges(code=code)
        judging = Judging(
            self.model,
            cache=self.cache,
            concurrency=self.concurrency,
            max_concurrency=self.max_concurrency,
            replay_only=self.replay_only,
            max_calls=self.max_calls,
            call_timeout=self.call_timeout,
            refresh=self.refresh,
        )
        return Judges(model=judging, code=code)
