"""``Judging``: the model judge the engine is handed, with its cache, budget and accounting.

Every call goes through one event loop in a thread of its own, where the model clients live:
metric code on any thread (the emulator's run executor, a job) submits its evaluation there
and waits. A semaphore on that loop bounds the calls in flight across everything being judged;
429 and 503 answers are tried again after the server's ``Retry-After`` (or a growing backoff).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from google.genai.types import GenerateContentConfig

from .._adaptive import AUTO, DEFAULT_CAP, limit_for, parse_concurrency
from .._model_errors import failure_text, unusable_model
from ..metrics.judges import Judges
from ..metrics.model_judge import (
    EVALUATION,
    CallLabel,
    JudgeUnavailableError,
    ModelJudge,
    ModelReply,
)
from ..types import Content
from .cache import JudgeCache, JudgeCacheError, call_key
from .models import (
    Answer,
    GenaiBackend,
    LiteLlmBackend,
    ModelBackend,
    RetryableError,
    is_litellm_model,
)

T = TypeVar("T")

_logger = logging.getLogger("platform_eval.judges")

#: Calls in flight at once, across every case and metric being judged.
DEFAULT_CONCURRENCY: int | str = AUTO
#: Tries of one call that the model answers 429 or 503.
MAX_ATTEMPTS = 6
#: The longest wait between two tries, whatever Retry-After says.
MAX_BACKOFF = 60.0
#: The same, and the tries, while the model has answered nothing yet: the first call is a
#: probe, and a model that is down from the start is said in seconds, not waited out for minutes.
PROBE_BACKOFF = 0.5
PROBE_ATTEMPTS = 4
#: Model tries in a row that fail alike (the same status, the same error) before judging stops.
DEFAULT_STOP_AFTER = 10
#: The longest judge answer kept (judges answer in a few hundred words).
MAX_ANSWER_CHARS = 1 << 20
#: How long one model call may take before it counts as failed (``--judge-timeout``).
DEFAULT_CALL_TIMEOUT = 120.0


@dataclass
class Usage:
    """What judging cost: model calls made, answers replayed from the cache, and tokens as
    the model's usage metadata counted them (calls made only)."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    candidates_tokens: int = 0
    thoughts_tokens: int = 0

    def add(self, usage: dict[str, Any] | None, *, cached: bool) -> None:
        if cached:
            self.cache_hits += 1
            return
        self.calls += 1
        usage = usage or {}
        self.prompt_tokens += int(usage.get("promptTokenCount") or 0)
        self.candidates_tokens += int(usage.get("candidatesTokenCount") or 0)
        self.thoughts_tokens += int(usage.get("thoughtsTokenCount") or 0)

    def as_json(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "cacheHits": self.cache_hits,
            "promptTokens": self.prompt_tokens,
            "candidatesTokens": self.candidates_tokens,
            "thoughtsTokens": self.thoughts_tokens,
        }


@dataclass
class UsageBook:
    """Usage in all, and per metric and per (metric, case)."""

    total: Usage = field(default_factory=Usage)
    by_metric: dict[str, Usage] = field(default_factory=dict)
    by_case: dict[tuple[str, str], Usage] = field(default_factory=dict)

    def add(self, label: CallLabel, usage: dict[str, Any] | None, *, cached: bool) -> None:
        for book in (
            self.total,
            self.by_metric.setdefault(label.metric, Usage()),
            self.by_case.setdefault((label.metric, label.case), Usage()),
        ):
            book.add(usage, cached=cached)


def _endpoint(message: str) -> str:
    """Where the judge's calls go, as the user set it (for the message that they fail)."""
    if "LiteLLM" in message:
        return "the one LiteLLM routes the model to"
    for variable in ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"):
        value = os.environ.get(variable)
        if value:
            return f"{value} ({variable})"
    if os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        return "Vertex AI (GOOGLE_GENAI_USE_VERTEXAI)"
    return "the Gemini API (GOOGLE_API_KEY)"


async def _in_scope(scope: str, coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine`` run in the evaluation ``scope`` of the thread that asked: the judge's event
    loop has its own context, and the calls are counted for the evaluation that made them."""
    token = EVALUATION.set(scope)
    try:
        return await coroutine
    finally:
        EVALUATION.reset(token)


def usage_report(
    judge: Judges | ModelJudge | None, evaluation: str | None = None
) -> dict[str, Any] | None:
    """What judging cost, as reports show it: the totals, ``byMetric`` and ``byCase`` (per
    eval case, then metric), of every call or of one ``evaluation`` (a run's name); None when
    the judge does not count its calls (or there is none, or the evaluation made none)."""
    model = judge.model if isinstance(judge, Judges) else judge
    if not isinstance(model, Judging):
        return None
    if evaluation is not None:
        if evaluation not in model.usage_by_evaluation:
            return None
        books = [model.usage_by_evaluation[evaluation]]
    else:
        books = [model.usage]
    total: dict[str, Any] = {}
    by_metric: dict[str, dict[str, int]] = {}
    by_case: dict[str, dict[str, dict[str, int]]] = {}

    def add(into: dict[str, int], usage: Usage) -> None:
        for key, value in usage.as_json().items():
            into[key] = into.get(key, 0) + value

    for book in books:
        add(total, book.total)
        for metric, usage in book.by_metric.items():
            add(by_metric.setdefault(metric, {}), usage)
        for (metric, case), usage in book.by_case.items():
            add(by_case.setdefault(case, {}).setdefault(metric, {}), usage)
    if by_metric:
        total["byMetric"] = by_metric
        total["byCase"] = by_case
    return total


def _wire(value: Any) -> Any:
    """A genai model (Content, GenerateContentConfig) as the JSON that identifies it, without
    client-side settings (http options: retries and timeouts change no answer)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_wire(item) for item in value]
    dumped = value.model_dump(mode="json", exclude_none=True, by_alias=True)
    if isinstance(dumped, dict):
        dumped.pop("httpOptions", None)
        dumped.pop("http_options", None)
    return dumped


async def _unwind() -> None:
    """Cancels every other task of the running loop and waits (a little) for them to end."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=5)


@dataclass(frozen=True)
class _Mark:
    """Where an answer is kept (its cache key), and whether it was a replay of it."""

    key: str
    replayed: bool


def _asker(label: CallLabel) -> str:
    """Who asks, as the cache keeps askers apart: the metric, the case and the candidate."""
    return json.dumps([label.metric, label.case, label.candidate])


class Judging:
    def __init__(
        self,
        model: str = "gemini-2.5-flash",
        *,
        cache: JudgeCache | str | Path | None = None,
        concurrency: int | str = DEFAULT_CONCURRENCY,
        max_concurrency: int = DEFAULT_CAP,
        replay_only: bool = False,
        max_calls: int | None = None,
        gemini: ModelBackend | None = None,
        litellm: ModelBackend | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        stop_after: int = DEFAULT_STOP_AFTER,
        refresh: bool = False,
    ) -> None:
        concurrency = parse_concurrency(concurrency)
        if max_concurrency < 1:
            raise ValueError("the judge's max concurrency must be at least 1")
        if not call_timeout > 0:
            raise ValueError("the judge call timeout must be more than 0 seconds")
        self.call_timeout = call_timeout
        self.stop_after = stop_after
        #: Tries in a row that failed alike, how, and why judging stopped (None: it goes on).
        self._streak = 0
        self._streak_kind = ""
        #: Whether the model answered a call yet: until it does, a call that fails for good
        #: stops judging (the first call is a probe).
        self._answered = False
        self._stopped: str | None = None
        #: Set on the loop when judging stops: calls waiting to try again wake and give up.
        self._stopping: asyncio.Event | None = None
        #: Held by the call that tries the model while it has answered nothing yet.
        self._probing: asyncio.Lock | None = None
        self.model = model
        self.cache = JudgeCache(cache) if isinstance(cache, str | Path) else cache
        #: A number of calls at once, or "auto": raised while calls succeed, cut on 429 and
        #: 503, never above ``max_concurrency`` (``_adaptive``).
        self.concurrency = concurrency
        self.max_concurrency = max_concurrency
        self._limit = limit_for(concurrency, max_concurrency)
        self.replay_only = replay_only
        if refresh and replay_only:
            raise ValueError("a judge cannot both replay only and ask afresh (--no-judge-cache)")
        #: Every call asks the model, and its answer replaces the one kept (--no-judge-cache).
        self.refresh = refresh
        #: Answers a metric could not read (``unusable``): not kept, never replayed.
        self.unusable_answers = 0
        self.max_calls = max_calls
        self.usage = UsageBook()
        #: The same, per evaluation (a run's name): what judging that run cost.
        self.usage_by_evaluation: dict[str, UsageBook] = {}
        #: What a replay-only run could not answer from the cache, one line each.
        self.replay_misses: list[str] = []
        #: Calls refused because ``max_calls`` were made.
        self.budget_refusals = 0
        self._gemini = gemini or GenaiBackend()
        self._litellm = litellm or LiteLlmBackend()
        self._lock = threading.Lock()
        #: Calls under way, so that a budget is never exceeded by calls in flight.
        self._pending = 0
        #: Evaluations under way, each with the calls it waits for; those cancelled.
        self._waiting: dict[str, set[Future[Any]]] = {}
        self._cancelled: set[str] = set()
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="platform-eval-judge", daemon=True
        )
        self._thread.start()

    @property
    def in_flight_cap(self) -> int:
        """The most calls that may ever be in flight at once: a number chosen, or the cap."""
        return self.max_concurrency if self.concurrency == AUTO else int(self.concurrency)

    @property
    def calls_at_once(self) -> int:
        """Calls allowed at once now (with ``auto``, where the limit stands)."""
        return self._limit.limit

    # -- the ModelJudge interface -----------------------------------------------------------

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        scope = EVALUATION.get()
        with self._lock:
            ended = self._ended(scope)
            if ended is None:
                future: Future[T] = asyncio.run_coroutine_threadsafe(
                    _in_scope(scope, coroutine), self._loop
                )
                self._waiting.setdefault(scope, set()).add(future)
        if ended is not None:
            coroutine.close()
            raise JudgeUnavailableError(ended)
        try:
            return future.result()
        except CancelledError:
            raise JudgeUnavailableError(
                self._ended(scope) or "the judge call was cancelled"
            ) from None
        finally:
            with self._lock:
                self._waiting.get(scope, set()).discard(future)

    def _ended(self, scope: str) -> str | None:
        """Why calls of ``scope`` are refused (the judge closed, the evaluation cancelled)."""
        if self._closed:
            return "the judge was closed (the evaluation stopped) before it answered"
        if scope and scope in self._cancelled:
            return f"{scope} was cancelled while it was being judged"
        return None

    def end_evaluation(self, evaluation: str) -> None:
        """Forgets an evaluation that ended (its usage was read, its calls are over): a
        long-lived emulator keeps nothing per run it finished."""
        with self._lock:
            self.usage_by_evaluation.pop(evaluation, None)
            if not self._waiting.get(evaluation):
                self._waiting.pop(evaluation, None)
            self._cancelled.discard(evaluation)

    def cancel(self, evaluation: str | None = None) -> None:
        with self._lock:
            if evaluation is None:
                self._closed = True
                waiting = [f for futures in self._waiting.values() for f in futures]
            else:
                self._cancelled.add(evaluation)
                waiting = list(self._waiting.get(evaluation, ()))
        for future in waiting:
            future.cancel()

    async def generate(
        self,
        model: str,
        contents: list[Content],
        config: GenerateContentConfig | None,
        *,
        sample: int,
        label: CallLabel,
    ) -> ModelReply:
        wire_config = _wire(config)
        wire_contents = _wire(contents)
        key = call_key(model, wire_config, wire_contents, sample)
        if self.cache is not None:
            occurrence = self.cache.occurrence(key, _asker(label), record=not self.replay_only)
            # An asker a replay-only run meets for the first time (a cache written before
            # askers were kept) reads the first occurrence, the request's key alone.
            if occurrence:
                key = call_key(model, wire_config, wire_contents, sample, occurrence)
        recorded = self.cache.get(key) if self.cache is not None and not self.refresh else None
        if recorded is not None:
            text, usage = recorded
            self._count(label, usage, cached=True)
            return ModelReply(text, usage, _Mark(key, replayed=True))
        if self.replay_only:
            miss = (
                f"--replay-only: no recorded judge answer for {label.metric} on case "
                f"{label.case} (candidate {label.candidate}, sample {sample}); the case, the "
                "metric's settings or the judge model changed since the cache was written"
            )
            with self._lock:
                self.replay_misses.append(miss)
            raise JudgeUnavailableError(miss)
        self._refuse_if_stopped()
        self._reserve_call(label)
        try:
            answer = await self._call(model, contents, config)
        except BaseException:
            with self._lock:
                self._pending -= 1
            raise
        if len(answer.text) > MAX_ANSWER_CHARS:
            # No judge writes a book: kept, it would sit in the cache users commit. The call
            # was made, and is counted.
            self._count(label, answer.usage, cached=False)
            raise JudgeUnavailableError(
                f"the judge model {model} answered {len(answer.text):,} characters for "
                f"{label.metric} on case {label.case}; answers over {MAX_ANSWER_CHARS:,} are "
                "refused and not cached"
            )
        self._count(label, answer.usage, cached=False)
        if self.cache is not None:
            try:
                self.cache.put(key, model, answer.text, answer.usage, replace=self.refresh)
            except JudgeCacheError as exc:
                # The answer was paid for: it is used, and only its keeping is lost.
                _logger.warning("a judge answer is used but not kept: %s", exc)
        return ModelReply(answer.text, answer.usage, _Mark(key, replayed=False))

    def unusable(self, reply: ModelReply) -> bool:
        mark = reply.mark
        if not isinstance(mark, _Mark):
            return False
        with self._lock:
            self.unusable_answers += 1
        if self.cache is None or self.replay_only:
            # A replay-only run's cache is the user's record (often committed): kept as it is.
            return False
        try:
            self.cache.forget(mark.key)
        except JudgeCacheError as exc:
            _logger.warning("an unreadable judge answer could not be forgotten: %s", exc)
            return False
        return mark.replayed

    # -- internals ----------------------------------------------------------------------------

    def _reserve_call(self, label: CallLabel) -> None:
        with self._lock:
            made = self.usage.total.calls + self._pending
            if self.max_calls is not None and made >= self.max_calls:
                self.budget_refusals += 1
                raise JudgeUnavailableError(
                    f"the judge call budget (--max-judge-calls {self.max_calls}) is spent: "
                    f"{label.metric} on case {label.case} was not judged; run again to go on "
                    "(answers so far are in the cache)"
                )
            self._pending += 1

    def _count(self, label: CallLabel, usage: dict[str, Any] | None, *, cached: bool) -> None:
        with self._lock:
            if not cached:
                self._pending -= 1
            self.usage.add(label, usage, cached=cached)
            scope = EVALUATION.get()
            if scope:
                self.usage_by_evaluation.setdefault(scope, UsageBook()).add(
                    label, usage, cached=cached
                )

    async def _call(self, model: str, contents: list[Content], config: Any) -> Answer:
        if self._answered:
            return await self._tries(model, contents, config, probe=False)
        # Until the model answers once, calls go one at a time: the first is a probe, and a
        # model that is down is found by one call's tries, not by every call's.
        if self._probing is None:
            self._probing = asyncio.Lock()
        async with self._probing:
            return await self._tries(model, contents, config, probe=not self._answered)

    async def _tries(
        self, model: str, contents: list[Content], config: Any, *, probe: bool
    ) -> Answer:
        backend = self._litellm if is_litellm_model(model) else self._gemini
        # Client-side settings of the caller (ADK adds retry options) give way to ours.
        if config is not None and getattr(config, "http_options", None) is not None:
            config = config.model_copy(update={"http_options": None})
        delay = 1.0
        for attempt in range(1, MAX_ATTEMPTS + 1):
            self._refuse_if_stopped()
            try:
                async with self._limit.slot() as place:
                    try:
                        answer = await asyncio.wait_for(
                            backend.generate(model, contents, config), self.call_timeout
                        )
                    except RetryableError as busy:
                        # A quota's 429 says "fewer at once"; a 503 before the model ever
                        # answered says it may be down, which the probe finds out: it does
                        # not cut the calls a healthy model will take.
                        if busy.status == 429 or not probe:
                            place.refused(None if self._too_long(busy) else busy.retry_after)
                        raise
                    place.succeeded()
            except TimeoutError:
                # A probe that gets no answer stops judging: the calls waiting behind it would
                # each wait as long, one after another.
                raise self._failed(
                    "timeout",
                    f"the judge model {model} did not answer within {self.call_timeout:g} s "
                    "(--judge-timeout)",
                    first=probe,
                ) from None
            except RetryableError as busy:
                if self._too_long(busy):
                    # Waited out, it would hold the case past any deadline the user set.
                    raise self._failed(
                        "retry-after",
                        f"the judge model {model} answered {busy.status} asking to be tried "
                        f"again in {busy.retry_after:g} s (Retry-After), longer than the "
                        f"{self.call_timeout:g} s a judge call may take (--judge-timeout): "
                        "not judged",
                    ) from None
                said = f"the judge model {model} stayed busy after {attempt} tries: {busy}"
                status = str(busy.status)
                # 429 is a quota saying "slower", not an outage: retried, never counted.
                failure = (
                    JudgeUnavailableError(said) if status == "429" else self._failed(status, said)
                )
                if probe and status != "429" and attempt >= PROBE_ATTEMPTS:
                    raise self._failed(status, said, first=True) from None
                if attempt == MAX_ATTEMPTS:
                    raise failure from None
                wait = busy.retry_after if busy.retry_after is not None else delay
                # A probe's pauses are short, but a quota's Retry-After is honoured as ever.
                short = probe and status != "429"
                await self._pause(min(wait, PROBE_BACKOFF if short else MAX_BACKOFF))
                delay = min(delay * 2, MAX_BACKOFF)
                continue
            except Exception as exc:
                said = f"the judge model {model} failed: {failure_text(exc)}"
                raise self._failed(
                    type(exc).__name__, said, first=probe and unusable_model(exc)
                ) from None
            with self._lock:
                self._streak = 0
                self._answered = True
            return answer
        raise AssertionError("unreachable")

    @property
    def stopped(self) -> str | None:
        """Why judging stopped (an outage: every call after it refused), or None."""
        return self._stopped

    def _too_long(self, busy: RetryableError) -> bool:
        """The answer asks for a longer wait than a whole judge call may take."""
        return busy.retry_after is not None and busy.retry_after > self.call_timeout

    def _failed(self, kind: str, message: str, *, first: bool = False) -> JudgeUnavailableError:
        """Counts a failed try; ``stop_after`` in a row failing alike stop judging: an outage
        is said once, not waited out call after call. ``first``: the judge has answered no call
        yet and this one failed for good (an unknown model, no credentials, no route to the
        endpoint): the first call is the probe, and judging stops at once."""
        with self._lock:
            if first and self._stopped is None:
                self._stopped = (
                    f"judging stopped: the first call to the judge model failed ({message}; "
                    f"endpoint {_endpoint(message)}): check the model name, the endpoint and the "
                    "credentials"
                )
                self._wake_the_waiting()
                return JudgeUnavailableError(self._stopped)
            self._streak = self._streak + 1 if kind == self._streak_kind else 1
            self._streak_kind = kind
            if self._streak >= self.stop_after and self._stopped is None:
                self._stopped = (
                    f"judging stopped after {self._streak} judge model tries in a row failed "
                    f"alike: {message}"
                )
                self._wake_the_waiting()
        return JudgeUnavailableError(message)

    def _wake_the_waiting(self) -> None:
        # Called on the judge's loop (from a failing call), where the event lives.
        if self._stopping is not None:
            self._stopping.set()

    def _refuse_if_stopped(self) -> None:
        if self._stopped is not None:
            raise JudgeUnavailableError(self._stopped)

    async def _pause(self, seconds: float) -> None:
        """Waits ``seconds`` before a try again, or less if judging stops meanwhile."""
        if self._stopping is None:
            self._stopping = asyncio.Event()
        if self._stopped is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), seconds)

    def close(self) -> None:
        self.cancel()
        if self._thread.is_alive():
            # The cancelled calls unwind on the loop before it stops: a model client's call
            # dropped half way would be left to the garbage collector, on a closed loop.
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_unwind(), self._loop).result(timeout=10)
            closing = getattr(self._gemini, "aclose", None)
            if closing is not None:
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(closing(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if self.cache is not None:
            self.cache.close()
