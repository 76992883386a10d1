"""Which RESULT items a finished run wrote, and which of them a listing has already found.

A run's result set names its items. Reading them one GET at a time costs a round trip each, so
the clients list them instead, hundreds per page, filtered on the run. The result set stays
the authority: a listed item it does not name is skipped, and an item it names that no page
brought (a server that filters differently, an item whose run is kept elsewhere) is read by
name afterwards. Nothing is missed and nothing is read twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ._pagination import MAX_EMPTY_PAGES
from .errors import PlatformEvalError, RepeatedPageTokenError
from .types import EvaluationItem, EvaluationItemType, EvaluationRun, EvaluationRunState


def result_set_name(run: EvaluationRun) -> str | None:
    """The run's result set; None when a finished run wrote none."""
    if not run.done:
        raise PlatformEvalError(
            f"run {run.name} is {run.state}; results are available once it finished "
            "(use wait_for_run)"
        )
    results = run.evaluation_results
    if results and results.evaluation_set:
        return results.evaluation_set
    if run.state == EvaluationRunState.FAILED:
        message = run.error.message if run.error else "no error message"
        raise PlatformEvalError(f"run {run.name} failed before writing results: {message}")
    return None


def run_filter(run_name: str) -> str:
    """AIP-160 filter for the items a run wrote (field names as the service documents them)."""
    return f'evaluation_response.evaluation_run = "{run_name}"'


def is_result(item: EvaluationItem) -> bool:
    return item.evaluation_item_type in (EvaluationItemType.RESULT, None)


class ExpectedResults:
    """The result set's item names, in its order, and those not found yet."""

    def __init__(self, names: Sequence[str]) -> None:
        self._position = {name: index for index, name in enumerate(names)}
        self._pending = set(self._position)
        self._fruitless_pages = 0

    @property
    def complete(self) -> bool:
        """Every item the result set names has been found: no page needs reading."""
        return not self._pending

    def take(self, page: Iterable[EvaluationItem]) -> Iterator[EvaluationItem]:
        """The page's RESULT items the result set names and no earlier page brought, as the
        page is read. A server whose pages bring nothing new, page after page under new
        tokens, is stopped rather than read for ever."""
        found = 0
        for item in page:
            if item.name in self._pending:
                self._pending.discard(item.name)
                found += 1
                if is_result(item):
                    yield item
        self._fruitless_pages = 0 if found else self._fruitless_pages + 1
        if self._fruitless_pages >= MAX_EMPTY_PAGES:
            raise RepeatedPageTokenError(
                f"the server answered {self._fruitless_pages} pages in a row with no result "
                "the run's result set names, each with a next page; stopping rather than "
                "reading pages for ever"
            )

    def missing(self) -> list[str]:
        """Names no page brought, in the result set's order: to read one by one."""
        return sorted(self._pending, key=self._position.__getitem__)

    def ordered(self, items: Iterable[EvaluationItem]) -> list[EvaluationItem]:
        """Items in the result set's order."""
        return sorted(items, key=lambda item: self._position.get(item.name or "", -1))
