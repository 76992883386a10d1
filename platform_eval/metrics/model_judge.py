"""The interface between judged metrics and the models that judge them.

A judged metric hands its prompt to a ``ModelJudge`` and gets the model's text back. It never
knows which model answered, whether the answer came from the replay cache, or what the call
cost: ``platform_eval.judges`` implements the interface (google-genai, LiteLLM, the cache, the
accounting, the concurrency) and the emulator, jobs or CLI hand one to the engine.
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from google.genai.types import GenerateContentConfig

from ..types import Content

T = TypeVar("T")


class JudgeUnavailableError(Exception):
    """No answer can be had for this call (the model failed after its retries, a replay-only
    run found no recorded answer, the call budget is spent); the message says which."""


#: The evaluation (a run's name) the calls made in this context belong to, so that a model judge
#: can end them all when that evaluation is cancelled; empty outside one.
EVALUATION: ContextVar[str] = ContextVar("platform_eval_evaluation", default="")


@contextmanager
def evaluation(name: str) -> Iterator[None]:
    """The judge calls made inside belong to the evaluation ``name`` (see ``ModelJudge.cancel``)."""
    token = EVALUATION.set(name)
    try:
        yield
    finally:
        EVALUATION.reset(token)


@dataclass(frozen=True)
class CallLabel:
    """Which metric asked, about which case and candidate: for the accounting, and for the
    error a replay-only run gives when the cache has no answer."""

    metric: str
    case: str
    candidate: str


@dataclass(frozen=True)
class ModelReply:
    text: str
    #: The call's usage metadata as the model gave it (google-genai's GenerateContentResponse
    #: usage_metadata), or None.
    usage: Any = None
    #: The judge's own mark of the answer (what ``ModelJudge.unusable`` is told of); opaque
    #: to metrics.
    mark: object = None


class ModelJudge(Protocol):
    #: The model asked when the metric's own configuration names none.
    model: str

    #: Calls in flight at most (a number chosen, or an adaptive limit's cap): the engine
    #: evaluates this many items at once.
    @property
    def in_flight_cap(self) -> int: ...

    #: Calls allowed at once now (an adaptive limit moves; a chosen number does not).
    @property
    def calls_at_once(self) -> int: ...

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs an evaluation's coroutine to completion on the judge's event loop (where its
        model clients live) and returns its result; called from any thread."""
        ...

    async def generate(
        self,
        model: str,
        contents: list[Content],
        config: GenerateContentConfig | None,
        *,
        sample: int,
        label: CallLabel,
    ) -> ModelReply:
        """The model's answer to ``contents`` with ``config`` (a GenerateContentConfig).

        ``sample`` tells apart the repeated calls a metric makes for one prompt (its
        ``num_samples``): each has its own recorded answer. Raises JudgeUnavailableError.
        """
        ...

    def unusable(self, reply: ModelReply) -> bool:
        """The metric could not read ``reply`` (no verdict, no score in it): the judge does not
        give it again (a replay cache forgets it). True when asking again reaches the model
        (the answer was a replay), False when it would give the same answer."""
        ...

    def cancel(self, evaluation: str | None = None) -> None:
        """Ends the calls under way of one evaluation (see ``evaluation``), or of every one
        with None, and refuses its later calls: each caller gets JudgeUnavailableError."""
        ...

    def close(self) -> None:
        """Ends the judge's event loop and closes its cache."""
        ...
