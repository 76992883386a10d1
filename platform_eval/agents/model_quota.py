"""``--agent-concurrency auto``: cases run at once adapted to the agent's model quota.

The cases at once are an adaptive limit (``_adaptive``): raised while cases finish, cut when a
model call is answered 429 or 503, held when the model slows down. A case's own time says
nothing of its model's latency (cases differ in turns and calls): the plugin times each model
call, and a case reports its slowest, held against the fastest any case reported. To see
those answers, the agent's model calls do not leave them to google-genai's retries (which would
wait them out unseen): a 429 or 503 reaches this plugin's ``on_model_error_callback``, which
cuts the limit at once (new cases wait; a ``Retry-After`` holds them until it passes), waits
(the longer of the ``Retry-After`` and a backoff from a second) and asks the model again, as
many tries in all as adk eval's retry options give (read from google-adk), returning the
answer as the call's. Every other status is retried by google-genai as before.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import random
import time
from dataclasses import dataclass
from typing import Any, Protocol

from .._model_errors import BUSY_STATUSES, retry_after, status_of
from .model_probe import ModelProbe

#: Tries of a call answered 429 or 503 where google-adk gives no number (its adk eval retry
#: options give seven: ``quota_attempts`` reads them).
QUOTA_ATTEMPTS = 7
#: The first wait after a 429 or 503 without Retry-After, doubled each try up to the last.
FIRST_WAIT = 1.0
LONGEST_WAIT = 30.0


class QuotaPlace(Protocol):
    """A case's place among the cases at once, as its model calls see it: a 429 or 503 cuts the
    limit now (``_adaptive.Call``, or a worker process's messenger to the one that holds it)."""

    def refused_now(self, retry_after: float | None = None) -> None: ...


@dataclass
class CaseQuota:
    """One case run's place among the cases at once, its model calls answered 429/503, and
    the time its slowest model call took (None until one answers)."""

    place: QuotaPlace
    refused: int = 0
    slowest: float | None = None

    def took(self, seconds: float) -> None:
        self.slowest = seconds if self.slowest is None else max(self.slowest, seconds)


#: The case run the current task belongs to (set around each case, read by the plugin).
CURRENT_CASE: contextvars.ContextVar[CaseQuota | None] = contextvars.ContextVar(
    "platform_eval_case_quota", default=None
)
#: When the current task's model call was sent (set before it, read when it answers).
_CALL_SENT: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "platform_eval_model_call_sent", default=None
)


@functools.cache
def quota_attempts() -> int:
    """The tries adk eval's retry options give a model call (seven in google-adk 1.18-2.13)."""
    try:
        from google.adk.evaluation import _retry_options_utils as adk_retries
    except ImportError:
        return QUOTA_ATTEMPTS
    return adk_retries._DEFAULT_HTTP_RETRY_OPTIONS.attempts or QUOTA_ATTEMPTS


def quota_plugin(probe: ModelProbe | None = None) -> Any:
    """The plugin that lets 429 and 503 answers cut the cases at once (see the module). Until
    ``probe`` has seen the model answer, its calls are the probe's (``model_probe``): a 503
    then is an outage found in seconds, not a quota waited out."""
    return _plugin_class()(probe)


@functools.cache
def _plugin_class() -> Any:
    from google.adk.plugins.base_plugin import BasePlugin

    class QuotaRetries(BasePlugin):
        def __init__(self, probe: ModelProbe | None) -> None:
            super().__init__(name="platform_eval_model_quota")
            self.probe = probe

        def _probing(self) -> bool:
            return self.probe is not None and not self.probe.answered

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            _CALL_SENT.set(time.monotonic())
            if self._probing():
                return
            http = getattr(llm_request.config, "http_options", None)
            options = getattr(http, "retry_options", None)
            if http is not None and options is not None and options.http_status_codes:
                # Copied: google-adk's default options are one object shared by every call.
                kept = [c for c in options.http_status_codes if c not in BUSY_STATUSES]
                http.retry_options = options.model_copy(update={"http_status_codes": kept})

        async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
            sent, case = _CALL_SENT.get(), CURRENT_CASE.get()
            if sent is not None and case is not None and not getattr(llm_response, "partial", None):
                case.took(time.monotonic() - sent)

        async def on_model_error_callback(
            self, *, callback_context: Any, llm_request: Any, error: Exception
        ) -> Any:
            if status_of(error) not in BUSY_STATUSES or self._probing():
                return None
            model = _model_of(callback_context)
            if model is None:
                return None
            case = CURRENT_CASE.get()
            wait = FIRST_WAIT
            latest: Exception = error
            for _ in range(quota_attempts() - 1):
                asked = retry_after(latest)
                if case is not None:
                    case.refused += 1
                    case.place.refused_now(asked)
                # The longer of the two: a Retry-After of milliseconds from a model far over
                # its quota would have the cases already under way spend their tries before
                # the cut limit has let any finish (adk eval's own retries wait a backoff).
                pause = wait if asked is None else max(asked, wait)
                await asyncio.sleep(min(pause, LONGEST_WAIT) * random.uniform(0.9, 1.1))
                wait = min(wait * 2, LONGEST_WAIT)
                try:
                    answers = [a async for a in model.generate_content_async(llm_request)]
                except Exception as again:
                    if status_of(again) not in BUSY_STATUSES:
                        raise
                    latest = again
                    continue
                return answers[-1] if answers else None
            raise latest

    return QuotaRetries


def _model_of(callback_context: Any) -> Any:
    """The model the failed call went to: the agent's own (its settings, its client)."""
    context = getattr(callback_context, "_invocation_context", None)
    agent = getattr(context, "agent", None)
    return getattr(agent, "canonical_model", None)
