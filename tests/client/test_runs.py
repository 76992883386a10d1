from __future__ import annotations

from typing import Any

import pytest
from factories import agent_data, call, reply, request_item, user

from platform_eval import errors
from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.metrics.summary import AGGREGATIONS

GOLDEN = {
    "agentData": agent_data(
        [call("get_weather", city="Paris"), reply("It is sunny in Paris")],
    )
}
# Candidate "exact": same tool call, a longer answer.
EXACT = {
    "candidate": "exact",
    "agentData": agent_data(
        [
            user("Weather in Paris?"),
            call("get_weather", city="Paris"),
            reply("It is sunny in Paris today"),
        ]
    ),
}
# Candidate "detour": an extra search first, then the right call; the golden text word for word.
DETOUR = {
    "candidate": "detour",
    "agentData": agent_data(
        [
            user("Weather in Paris?"),
            call("search", q="paris weather"),
            call("get_weather", city="Paris"),
            reply("It is sunny in Paris"),
        ]
    ),
}


def _run(
    client: Any, metrics: list[Any], items: list[dict[str, Any]]
) -> tuple[t.EvaluationRun, list[t.EvaluationItem]]:
    created = [client.create_item(i) for i in items]
    evaluation_set = client.create_set(display_name="golden", items=created)
    run = client.create_run(evaluation_set=evaluation_set, metrics=metrics, display_name="nightly")
    assert run.state in (
        t.EvaluationRunState.PENDING,
        t.EvaluationRunState.RUNNING,
        t.EvaluationRunState.SUCCEEDED,
    )
    finished = client.wait_for_run(run, timeout=30, poll_interval=0.02)
    return finished, client.get_results(finished)


def _scores(result: t.EvaluationItem) -> dict[tuple[str, str], float | None]:
    response = result.evaluation_response
    assert response is not None
    return {(r.candidate, r.metric): r.score for r in response.candidate_results or []}


def test_run_from_agent_data_candidates_scores_computed_by_hand(client: Any) -> None:
    item = request_item(
        "weather", prompt="Weather in Paris?", golden=GOLDEN, candidates=[EXACT, DETOUR]
    )
    in_order = {
        "metric": "tool_trajectory_avg_score",
        "metricConfig": {"computationBasedMetricSpec": {"parameters": {"match_type": "IN_ORDER"}}},
    }
    run, results = _run(
        client, ["exact_match", "tool_trajectory_avg_score", "response_match_score"], [item]
    )
    assert run.state is t.EvaluationRunState.SUCCEEDED
    assert run.completion_time is not None
    assert len(results) == 1
    result = results[0]
    assert result.evaluation_item_type is t.EvaluationItemType.RESULT
    assert result.evaluation_response.evaluation_run == run.name
    assert result.evaluation_response.request.candidate_responses[0].candidate == "exact"
    scores = _scores(result)
    # One CandidateResult per candidate x metric, each naming its metric: with several, the
    # result item names none (the official client reads one item as one case of every metric).
    assert len(result.evaluation_response.candidate_results) == 6
    assert result.evaluation_response.metric is None
    assert scores[("exact", "exact_match")] == 0.0
    assert scores[("detour", "exact_match")] == 1.0
    # EXACT trajectory: "exact" made exactly the expected call; "detour" made an extra one.
    assert scores[("exact", "tool_trajectory_avg_score")] == 1.0
    assert scores[("detour", "tool_trajectory_avg_score")] == 0.0
    # ROUGE-1 with stemming: reference {it, is, sunni, pari}; "exact" adds "today":
    # precision 5/6, recall 5/5, F = 2 * 5/6 * 1 / (5/6 + 1) = 10/11.
    assert scores[("exact", "response_match_score")] == pytest.approx(10 / 11)
    assert scores[("detour", "response_match_score")] == 1.0

    # Each candidate's own, as the service keys them: <candidate>/<metric>/<AGGREGATION>.
    summary = run.summary
    assert summary["exact/exact_match/AVERAGE"] == 0.0
    assert summary["detour/exact_match/AVERAGE"] == 1.0
    assert summary["exact/response_match_score/MEDIAN"] == pytest.approx(10 / 11)
    assert summary["detour/response_match_score/STANDARD_DEVIATION"] == 0.0
    assert run.evaluation_results.summary_metrics.total_items == 1
    assert run.evaluation_results.summary_metrics.failed_items is None  # none, as recorded

    _, results2 = _run(client, [in_order], [item])
    scores2 = _scores(results2[0])
    assert scores2 == {
        ("exact", "tool_trajectory_avg_score"): 1.0,
        ("detour", "tool_trajectory_avg_score"): 1.0,
    }
    assert results2[0].evaluation_response.metric == "tool_trajectory_avg_score"


def test_offline_multi_turn_trajectory_any_order_and_mean_over_turns(client: Any) -> None:
    golden = {
        "agentData": agent_data(
            [
                call("turn_on", device="lamp"),
                call("set_level", device="lamp", level=50),
                reply("Done"),
            ],
            [call("turn_off", device="fan"), reply("Fan off")],
        )
    }
    candidate = {
        "candidate": "v1",
        "agentData": agent_data(
            [
                user("lamp on, 50%"),
                call("set_level", device="lamp", level=50.0),
                call("turn_on", device="lamp"),
                reply("Done"),
            ],
            [user("fan off"), call("turn_off", device="heater"), reply("Fan off")],
        ),
    }
    any_order = {
        "metric": "tool_trajectory_avg_score",
        "metricConfig": {"computationBasedMetricSpec": {"parameters": {"match_type": "ANY_ORDER"}}},
    }
    item = request_item("home", prompt=None, golden=golden, candidates=[candidate])
    run, results = _run(client, [any_order, "tool_trajectory_avg_score"], [item])
    scores = _scores(results[0])
    # ANY_ORDER: turn 1 matches (level 50.0 == 50), turn 2 calls the wrong device -> (1 + 0) / 2.
    # EXACT: turn 1 is out of order -> 0, turn 2 -> 0.
    by_metric = [r.score for r in results[0].evaluation_response.candidate_results]
    assert by_metric == [0.5, 0.0]
    assert scores[("v1", "tool_trajectory_avg_score")] in (0.5, 0.0)
    # Two specs of one metric name share its key (no recording shows the service's way).
    assert run.summary["v1/tool_trajectory_avg_score/AVERAGE"] == 0.25


def test_items_that_cannot_be_scored_are_counted_as_failed(client: Any) -> None:
    no_golden = request_item("no golden", candidates=[{"candidate": "a", "text": "x"}])
    ok = request_item("ok", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    run, results = _run(client, ["exact_match"], [no_golden, ok])
    assert run.state is t.EvaluationRunState.SUCCEEDED
    assert run.evaluation_results.summary_metrics.total_items == 2
    assert run.evaluation_results.summary_metrics.failed_items == 1
    first = results[0].evaluation_response.candidate_results[0]
    assert first.score is None
    assert "not evaluated" in first.explanation and "goldenResponse" in first.explanation
    assert results[0].error is not None
    # Only what the API's summary holds: the unscored result is in failedItems, not an average.
    assert run.summary == {
        f"a/exact_match/{k}": 0.0 if k in ("STANDARD_DEVIATION", "VARIANCE") else 1.0
        for k in AGGREGATIONS
    }


def test_unknown_metric_and_bad_options_fail_the_create(client: Any) -> None:
    item = client.create_item(request_item("x", golden={"text": "x"}))
    evaluation_set = client.create_set(display_name="s", items=[item])
    with pytest.raises(errors.InvalidArgument, match="not supported"):
        client.create_run(evaluation_set=evaluation_set, metrics=["made_up_metric"])
    with pytest.raises(errors.InvalidArgument, match="match_type"):
        client.create_run(
            evaluation_set=evaluation_set,
            metrics=[
                {
                    "metric": "tool_trajectory_avg_score",
                    "metricConfig": {
                        "computationBasedMetricSpec": {"parameters": {"match_type": "SOMETIMES"}}
                    },
                }
            ],
        )
    with pytest.raises(errors.NotFound):
        client.create_run(evaluation_set="999", metrics=["exact_match"])


def test_list_get_delete_runs(client: Any) -> None:
    run, _ = _run(
        client,
        ["exact_match"],
        [request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])],
    )
    assert [r.name for r in client.list_runs()] == [run.name]
    assert [r.name for r in client.list_runs(filter="state = SUCCEEDED")] == [run.name]
    assert client.get_run(run.id).state is t.EvaluationRunState.SUCCEEDED
    with pytest.raises(errors.FailedPrecondition, match="already SUCCEEDED"):
        client.cancel_run(run)
    client.delete_run(run.name)
    with pytest.raises(errors.NotFound):
        client.get_run(run.name)


def test_cancel_keeps_partial_results(emulator: Emulator, sync_client: Any) -> None:
    items = [
        sync_client.create_item(
            request_item(
                f"i{n}", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}]
            )
        )
        for n in range(200)
    ]
    evaluation_set = sync_client.create_set(display_name="big", items=items)
    # Hold the executor after 5 items so the cancel lands while the run is in progress.
    with emulator.executor.paused(after_items=5):
        run = sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
        assert emulator.executor.wait_until_held()
        assert sync_client.get_run(run).state is t.EvaluationRunState.RUNNING
        sync_client.cancel_run(run)
    finished = sync_client.wait_for_run(run, timeout=30, poll_interval=0.02)
    assert finished.state is t.EvaluationRunState.CANCELLED
    results = sync_client.get_results(finished)
    assert len(results) == 5
    assert finished.evaluation_results.summary_metrics.total_items == 5
    # Cancelling again is a no-op.
    sync_client.cancel_run(run)


def test_wait_for_run_times_out_and_reports_progress(emulator: Emulator, sync_client: Any) -> None:
    item = sync_client.create_item(
        request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    )
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    seen: list[str] = []
    with emulator.executor.paused():
        run = sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
        with pytest.raises(errors.WaitTimeoutError) as caught:
            sync_client.wait_for_run(
                run,
                timeout=0.2,
                poll_interval=0.05,
                on_progress=lambda r: seen.append(str(r.state)),
            )
        assert not caught.value.run.done
        with pytest.raises(errors.PlatformEvalError, match="use wait_for_run"):
            sync_client.get_results(run)
    assert seen and not {"SUCCEEDED", "FAILED", "CANCELLED"} & set(seen)
    assert sync_client.wait_for_run(run, timeout=30, poll_interval=0.02).done


def test_a_run_whose_set_disappeared_evaluates_what_it_was_started_on(
    emulator: Emulator, sync_client: Any
) -> None:
    item = sync_client.create_item(
        request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    )
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    with emulator.executor.paused():
        # Queued, not started: the set and its item are deleted before the run executes.
        emulator.executor.stop()
        run = sync_client.create_run(evaluation_set=evaluation_set, metrics=["exact_match"])
        sync_client.delete_set(evaluation_set)
        sync_client.delete_item(item)
    emulator.executor.start()
    done = sync_client.wait_for_run(run, timeout=30, poll_interval=0.02)
    assert done.state is t.EvaluationRunState.SUCCEEDED
    [result] = sync_client.get_results(done)
    assert result.evaluation_response.evaluation_request == item.name
    assert result.evaluation_response.candidate_results[0].score == 1.0


def test_result_items_can_be_filtered_by_run(client: Any) -> None:
    item = request_item("x", golden={"text": "x"}, candidates=[{"candidate": "a", "text": "x"}])
    run, results = _run(client, ["exact_match"], [item])
    listed = list(client.list_items(filter=f'evaluation_run = "{run.name}"'))
    assert [i.name for i in listed] == [r.name for r in results]
    other, _ = _run(client, ["exact_match"], [item])
    assert len(list(client.list_items(filter="evaluation_item_type = RESULT"))) == 2
    assert len(list(client.list_items(filter=f'evaluation_run = "{other.name}"'))) == 1
