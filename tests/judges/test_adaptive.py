"""``--judge-concurrency auto``: calls at once raised while they succeed, cut on 429 and 503,
never above the cap; a model with a quota of calls at once is found and kept under, with few
calls refused and none failed."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from fake_gemini import fake_gemini

from platform_eval._adaptive import AUTO, AdaptiveLimit, FixedLimit, parse_concurrency
from platform_eval.judges import Judging
from platform_eval.metrics.model_judge import CallLabel
from platform_eval.types import Content


async def _simulated(limit: AdaptiveLimit, calls: int, quota: int | None) -> tuple[int, int]:
    """``calls`` calls through ``limit`` to a model taking ``quota`` at once (refusing the
    rest, which try again); the calls refused and the most at once the model saw."""
    in_flight = refused = most = 0

    async def call() -> None:
        nonlocal in_flight, refused, most
        while True:
            async with limit.slot() as place:
                if quota is not None and in_flight >= quota:
                    refused += 1
                    place.refused(None)
                else:
                    in_flight += 1
                    most = max(most, in_flight)
                    await asyncio.sleep(0.005)
                    in_flight -= 1
                    place.succeeded()
                    return
            await asyncio.sleep(0.005)

    await asyncio.gather(*(call() for _ in range(calls)))
    return refused, most


def test_a_quota_is_found_and_kept_under_with_few_refusals() -> None:
    limit = AdaptiveLimit(start=4, cap=32)
    refused, most = asyncio.run(_simulated(limit, 2000, quota=24))
    assert refused / 2000 < 0.02, (refused, limit.highest, limit.cuts)
    assert most <= 24
    assert 8 <= limit.limit <= 25 and limit.cuts >= 1
    assert limit.highest <= 32


def test_without_a_quota_the_limit_rises_to_the_cap_and_no_further() -> None:
    limit = AdaptiveLimit(start=4, cap=32)
    refused, most = asyncio.run(_simulated(limit, 1000, quota=None))
    assert refused == 0 and limit.cuts == 0
    assert limit.limit == limit.highest == 32 and most == 32


def test_a_fixed_concurrency_stays_where_it_was_put() -> None:
    limit = FixedLimit(6)
    refused, most = asyncio.run(_simulated(limit, 300, quota=3))
    assert limit.limit == 6 and most == 3 and refused > 0


def test_retry_after_holds_every_new_call_until_it_passes() -> None:
    async def main() -> tuple[float, float]:
        limit = AdaptiveLimit(start=4)
        async with limit.slot() as place:
            place.refused(0.3)
            refused_at = time.monotonic()
        async with limit.slot() as place:
            place.succeeded()
            return refused_at, time.monotonic()

    refused_at, next_started = asyncio.run(main())
    assert next_started - refused_at >= 0.29


def test_only_the_first_refusal_of_a_round_cuts() -> None:
    async def main() -> AdaptiveLimit:
        limit = AdaptiveLimit(start=16, cap=32)
        entered = asyncio.Event()
        release = asyncio.Event()
        count = 0

        async def call() -> None:
            nonlocal count
            async with limit.slot() as place:
                count += 1
                if count == 16:
                    entered.set()
                await release.wait()
                place.refused(None)

        tasks = [asyncio.create_task(call()) for _ in range(16)]
        await entered.wait()
        release.set()
        await asyncio.gather(*tasks)
        return limit

    limit = asyncio.run(main())
    # Cut once, to 0.7 of the 16 under way (not halved: a refused call waits and is asked again).
    assert limit.cuts == 1 and limit.limit == 11


@pytest.mark.parametrize(("given", "expected"), [("auto", AUTO), ("AUTO ", AUTO), ("7", 7), (3, 3)])
def test_a_concurrency_is_auto_or_a_whole_number(given: str | int, expected: int | str) -> None:
    assert parse_concurrency(given) == expected


@pytest.mark.parametrize("given", ["0", "-2", "many", "2.5", ""])
def test_anything_else_is_refused_naming_it(given: str) -> None:
    with pytest.raises(ValueError, match="expected 'auto' or a whole number"):
        parse_concurrency(given)


@pytest.mark.slow  # 400 judge calls over HTTP: CI runs it
def test_the_judge_finds_a_model_s_quota_over_http(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge with auto, against a fake Gemini taking 12 calls at once (429 beyond): every
    call answered, under 2% refused, never more than the quota at the model."""
    with fake_gemini(lambda seen: "yes", delay=0.02, quota=12) as model:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        judging = Judging("gemini-2.5-flash", concurrency=AUTO, max_concurrency=32)
        try:
            calls = 400

            async def ask(index: int) -> str:
                reply = await judging.generate(
                    "gemini-2.5-flash",
                    [Content.model_validate({"role": "user", "parts": [{"text": f"q{index}"}]})],
                    None,
                    sample=0,
                    label=CallLabel("m", f"case-{index}", "agent"),
                )
                return reply.text

            async def everything() -> list[str]:
                return list(await asyncio.gather(*(ask(i) for i in range(calls))))

            answers = judging.run(everything())
        finally:
            judging.close()
    assert answers == ["yes"] * calls
    assert model.refused / calls < 0.02, (model.refused, judging.calls_at_once)
    assert model.most_in_flight <= 12
    assert judging.in_flight_cap == 32


def test_a_probes_503_leaves_the_limit_and_a_503_after_an_answer_cuts_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before the model ever answered, a 503 may be an outage the probe is there to find, not
    a load: the calls a healthy model takes are not halved for it. Once it answered, a 503 is
    the model's load, as a 429 is."""
    with fake_gemini(lambda seen: "yes") as model:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        judging = Judging("gemini-2.5-flash", concurrency=AUTO, max_concurrency=32)
        try:

            async def ask(text: str) -> str:
                reply = await judging.generate(
                    "gemini-2.5-flash",
                    [Content.model_validate({"role": "user", "parts": [{"text": text}]})],
                    None,
                    sample=0,
                    label=CallLabel("m", text, "agent"),
                )
                return reply.text

            model.fail_next(503)
            assert judging.run(ask("probe")) == "yes"
            assert judging._limit.cuts == 0
            model.fail_next(503)
            assert judging.run(ask("later")) == "yes"
            assert judging._limit.cuts == 1
        finally:
            judging.close()


def test_a_success_whose_model_slowed_down_holds_the_limit() -> None:
    """After the first cut, a full round's success raises the limit unless its model latency is
    more than twice the fastest seen; an agent case reports its slowest model call (None when
    it made none). Before it, in the first climb, only refusals stop the rise: the first calls'
    times are the process warming up as much as the model's pace."""

    async def succeed(limit: AdaptiveLimit, latency: float | None) -> None:
        async with contextlib.AsyncExitStack() as stack:
            places = [await stack.enter_async_context(limit.slot()) for _ in range(limit.limit)]
            for place in places:
                place.succeeded(latency=latency)

    async def main() -> tuple[list[int], list[float]]:
        limit = AdaptiveLimit(start=1, cap=32)
        climbing = []
        for latency in (0.1, 0.5, 0.5):
            await succeed(limit, latency)
            climbing.append(limit.limit)
        async with limit.slot() as place:
            place.refused(None)
        assert limit.cuts == 1 and limit.limit == 1
        after_a_cut = []
        for latency in (0.12, 0.5, 0.5, 0.15, None):
            await succeed(limit, latency)
            after_a_cut.append(limit._limit)  # the fraction a round adds, not yet a whole call
        return climbing, after_a_cut

    climbing, after_a_cut = asyncio.run(main())
    # Climbing, the round's last call found the limit full and raises it by one, slow or not.
    assert climbing == [2, 3, 4]
    # After the cut (to 1), by 1/limit a round: 0.12 raises it (1 -> 2); 0.5 is five times the
    # fastest (0.1): held twice; 0.15 raises it again (by 1/2), and so does a case that made
    # no model call (by 1/2.5).
    assert after_a_cut == pytest.approx([2.0, 2.0, 2.0, 2.5, 2.9])


def test_the_agent_plugin_reports_a_case_s_slowest_model_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("google.adk")
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    from platform_eval.agents import model_quota

    clock = [100.0]
    monkeypatch.setattr(model_quota.time, "monotonic", lambda: clock[0])
    plugin = model_quota.quota_plugin()

    async def call(seconds: float, partial: bool = False) -> None:
        await plugin.before_model_callback(callback_context=None, llm_request=LlmRequest())
        clock[0] += seconds
        response = LlmResponse(partial=partial)
        await plugin.after_model_callback(callback_context=None, llm_response=response)

    async def case() -> float | None:
        quota = model_quota.CaseQuota(place=None)  # type: ignore[arg-type]
        token = model_quota.CURRENT_CASE.set(quota)
        try:
            await call(0.2)
            await call(0.7, partial=True)  # a streamed chunk: the call is not over
            await call(0.4)
        finally:
            model_quota.CURRENT_CASE.reset(token)
        return quota.slowest

    assert asyncio.run(case()) == pytest.approx(0.4)


def test_a_retry_after_holds_new_calls_no_longer_than_the_longest_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model asking for 99999 s (an agent's model out of its daily quota): new calls wait at
    most LONGEST_PAUSE, then go ahead, where each call's own deadline and tries answer it."""
    monkeypatch.setattr("platform_eval._adaptive.LONGEST_PAUSE", 0.2)

    async def refused_then_another() -> float:
        limit = AdaptiveLimit(start=2, cap=2)
        async with limit.slot() as place:
            place.refused(99999.0)
        started = time.monotonic()
        async with asyncio.timeout(30), limit.slot() as place:
            place.succeeded()
        return time.monotonic() - started

    assert asyncio.run(refused_then_another()) >= 0.15  # the pause was kept, only capped


def test_calls_take_their_places_in_the_order_they_came() -> None:
    order: list[int] = []

    async def main() -> None:
        limit = FixedLimit(1)

        async def call(n: int) -> None:
            async with limit.slot() as place:
                order.append(n)
                await asyncio.sleep(0)
                place.succeeded()

        await asyncio.gather(*(call(n) for n in range(50)))

    asyncio.run(main())
    assert order == list(range(50))


def test_a_call_cancelled_while_waiting_or_woken_leaves_no_place_taken() -> None:
    """Cancelled in line, or woken and cancelled before it took its place: the place goes to
    the next in line, and the calls after them all run (none waits for a wake that never
    comes)."""

    async def main() -> list[int]:
        limit = FixedLimit(2)
        done: list[int] = []
        release = asyncio.Event()

        async def call(n: int, hold: bool = False) -> None:
            async with limit.slot() as place:
                if hold:
                    await release.wait()
                done.append(n)
                place.succeeded()

        holders = [asyncio.ensure_future(call(n, hold=True)) for n in (0, 1)]
        waiting = [asyncio.ensure_future(call(n)) for n in range(2, 2000)]
        await asyncio.sleep(0)
        for task in waiting[:1000]:
            task.cancel()  # in line: left there, passed over
        release.set()
        await asyncio.sleep(0)  # the holders end: two waiters woken ...
        waiting[1000].cancel()  # ... one of them cancelled before it took its place
        await asyncio.wait_for(asyncio.gather(*holders, *waiting[1001:]), 30)
        assert limit._in_flight == 0
        return done

    done = asyncio.run(main())
    # 2 to 1001 cancelled in line, 1002 cancelled once woken: every other call ran, in order.
    assert done == [0, 1, *range(1003, 2000)]


def test_a_limit_that_rises_wakes_a_call_for_each_new_place() -> None:
    async def main() -> int:
        limit = AdaptiveLimit(start=1, cap=8)
        most = in_flight = 0

        async def call() -> None:
            nonlocal most, in_flight
            async with limit.slot() as place:
                in_flight += 1
                most = max(most, in_flight)
                await asyncio.sleep(0.001)
                in_flight -= 1
                place.succeeded()

        await asyncio.gather(*(call() for _ in range(200)))
        return most

    assert asyncio.run(main()) == 8
