"""A run evaluates the items its set held when the run was created: a run waiting in the queue
while another upload replaces the set's items still evaluates what it was started on."""

from __future__ import annotations

from typing import Any

from factories import request_item

from platform_eval.emulator import Emulator


def _item(name: str, answer: str) -> dict[str, Any]:
    return request_item(
        name,
        prompt=f"weather in {name}?",
        golden={"text": "sunny"},
        candidates=[{"candidate": "agent", "text": answer}],
    )


def test_a_queued_run_evaluates_the_items_it_was_started_on(
    emulator: Emulator, project: str
) -> None:
    with emulator.client(project) as client:
        blocker = client.create_set(
            display_name="ahead in the queue",
            items=[client.create_item(_item(f"b{i}", "x")) for i in range(2)],
        )
        original = client.create_item(_item("paris", "sunny"))
        shared = client.create_set(display_name="shared", items=[original])
        with emulator.executor.paused(after_items=0):
            client.create_run(evaluation_set=blocker, metrics=["exact_match"])
            assert emulator.executor.wait_until_held()
            queued = client.create_run(evaluation_set=shared, metrics=["exact_match"])
            assert client.get_run(queued.name).state == "PENDING"
            # Another upload under the same set meanwhile: new items, the old ones deleted.
            other = client.create_item(_item("oslo", "snowing"))
            client.update_set(
                {"name": shared.name, "evaluationItems": [other.name]},
                update_mask=["evaluation_items"],
            )
            client.delete_item(original.name)
        done = client.wait_for_run(queued, poll_interval=0.05, timeout=30)
        assert done.state == "SUCCEEDED"
        [result] = client.get_results(done)
        assert result.evaluation_response.evaluation_request == original.name
        [scored] = result.evaluation_response.candidate_results
        assert scored.score == 1.0  # paris's "sunny", not oslo's "snowing"
        # The set as it is now is what a new run evaluates.
        again = client.wait_for_run(
            client.create_run(evaluation_set=shared, metrics=["exact_match"]),
            poll_interval=0.05,
            timeout=30,
        )
        [now] = client.get_results(again)
        assert now.evaluation_response.evaluation_request == other.name
