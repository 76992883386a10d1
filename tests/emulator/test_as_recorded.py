"""The emulator's runs as the service answered them (issue 61, items 1 and 2).

Each fact comes from public recordings of the real service, cited where it is used:

* cloud-custodian/cloud-custodian PR #11013, ``tools/c7n_gcp/tests/data/flights/
  vertexai-evaluation-run-filtering/`` (v1, recorded against a project on 2026-08-14): the
  items, sets and runs below are those the test of ``tools/c7n_gcp/tests/test_vertexai.py``
  created, and ``SUCCEEDED_SUMMARY`` and ``FAILED_ERROR`` are the bodies of its two run GETs;
* googleapis/python-aiplatform, ``tests/unit/vertexai/genai/replays/test_get_evaluation_run.py``
  (a run of 19 items, 2025-09): what its assertions say the service returned.

Written here in those shapes: nothing of the recordings is copied but the values compared.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from platform_eval import types as t
from platform_eval.emulator import Emulator
from platform_eval.metrics.summary import summarize

#: The run's metric, as the flight's run create sent it.
EXACT_MATCH = {"metric": "exact_match", "computationBasedMetricSpec": {"type": "EXACT_MATCH"}}

#: ``evaluationResults.summaryMetrics`` of the flight's SUCCEEDED run (one item, its candidate
#: ``model-under-test`` answering "4" to "What is 2+2?" against the golden "4").
SUCCEEDED_SUMMARY = {
    "metrics": {
        "model-under-test/exact_match/VARIANCE": 0,
        "model-under-test/exact_match/PERCENTILE_P99": 1,
        "model-under-test/exact_match/AVERAGE": 1,
        "model-under-test/exact_match/STANDARD_DEVIATION": 0,
        "model-under-test/exact_match/PERCENTILE_P95": 1,
        "model-under-test/exact_match/MINIMUM": 1,
        "model-under-test/exact_match/MAXIMUM": 1,
        "model-under-test/exact_match/MEDIAN": 1,
        "model-under-test/exact_match/PERCENTILE_P90": 1,
    },
    "totalItems": 1,
}

#: The flight's FAILED run: its one item had a prompt and a golden response, no candidate.
FAILED_ERROR = {
    "code": 9,
    "message": "No metric scores to aggregate. Please check the result evaluation items for errors.",
}


def _run(emulator: Emulator, project: str, request: dict[str, Any]) -> dict[str, Any]:
    """The flight's sequence on the emulator (an item, its set, a run of exact_match); the
    finished run's body as the REST API answers it."""
    with emulator.client(project) as client:
        item = client.create_item(
            {"displayName": "item", "evaluationItemType": "REQUEST", "evaluationRequest": request}
        )
        made = client.create_set(display_name="set", items=[item])
        run = client.create_run(evaluation_set=made, metrics=[EXACT_MATCH], display_name="run")
        done = client.wait_for_run(run, timeout=30, poll_interval=0.02)
    assert done.name
    body = httpx.get(f"{emulator.url}/v1/{done.name}", timeout=10).json()
    assert isinstance(body, dict)
    return body


PROMPT = {"prompt": {"text": "What is 2+2?"}, "goldenResponse": {"text": "4"}}


def test_a_run_with_nothing_to_score_fails_with_the_service_s_error(
    emulator: Emulator, project: str
) -> None:
    body = _run(emulator, project, PROMPT)
    assert body["state"] == "FAILED"
    assert body["error"] == FAILED_ERROR
    # The results set is there (each result item says why it has no score); no summary.
    assert set(body["evaluationResults"]) == {"evaluationSet"}
    assert body["completionTime"]


def test_a_succeeded_run_s_summary_is_the_recorded_one(emulator: Emulator, project: str) -> None:
    answered = {**PROMPT, "candidateResponses": [{"candidate": "model-under-test", "text": "4"}]}
    body = _run(emulator, project, answered)
    assert body["state"] == "SUCCEEDED" and "error" not in body
    assert body["evaluationResults"]["summaryMetrics"] == SUCCEEDED_SUMMARY  # no failedItems


def test_each_candidate_has_its_own_summary(emulator: Emulator, project: str) -> None:
    two = {
        **PROMPT,
        "candidateResponses": [
            {"candidate": "right", "text": "4"},
            {"candidate": "wrong", "text": "5"},
        ],
    }
    metrics = _run(emulator, project, two)["evaluationResults"]["summaryMetrics"]["metrics"]
    assert metrics["right/exact_match/AVERAGE"] == 1
    assert metrics["wrong/exact_match/AVERAGE"] == 0
    assert len(metrics) == 18  # nine aggregations each, never pooled over the candidates


def test_the_aggregations_are_the_services_on_its_19_item_run() -> None:
    # The replay test's ``user_defined`` scores: averaging 90/19, 3 at least, a median of 5:
    # 3, 3, 4 and sixteen 5s is the one set that also gives its recorded variance.
    user_defined = [3.0, 3.0, 4.0] + [5.0] * 16
    said = summarize({("gemini-2.0-flash-001@default", "user_defined"): user_defined})
    key = "gemini-2.0-flash-001@default/user_defined/"
    assert said[key + "AVERAGE"] == pytest.approx(4.736842105263158)
    assert said[key + "VARIANCE"] == pytest.approx(0.4044321329639886)  # of the population
    assert said[key + "STANDARD_DEVIATION"] == pytest.approx(0.6359497880839245)
    assert (said[key + "MINIMUM"], said[key + "MAXIMUM"], said[key + "MEDIAN"]) == (3, 5, 5)
    # Its ``universal`` percentiles (P90 0.8777..., P95 0.9000..., P99 0.9800...) lie between
    # its three highest scores, 0.875, 8/9 and 1 (float32 on the service), linearly.
    universal = [0.5] * 16 + [0.875, 8 / 9, 1.0]
    top = summarize({("c", "universal"): universal})
    assert top["c/universal/PERCENTILE_P90"] == pytest.approx(0.8777777791023255, abs=1e-7)
    assert top["c/universal/PERCENTILE_P95"] == pytest.approx(0.9000000059604645, abs=1e-7)
    assert top["c/universal/PERCENTILE_P99"] == pytest.approx(0.9800000011920929, abs=1e-7)


def test_our_client_reads_a_failed_run_and_its_results(emulator: Emulator, project: str) -> None:
    with emulator.client(project) as client:
        item = client.create_item(
            {"displayName": "i", "evaluationItemType": "REQUEST", "evaluationRequest": PROMPT}
        )
        run = client.create_run(
            evaluation_set=client.create_set(display_name="s", items=[item]), metrics=[EXACT_MATCH]
        )
        done = client.wait_for_run(run, timeout=30, poll_interval=0.02)
        results = client.get_results(done)
    assert done.state == t.EvaluationRunState.FAILED
    assert done.error is not None and done.error.code == 9 and done.summary == {}
    assert len(results) == 1  # the RESULT item that says why nothing was scored


#: The flight's run create answer (the body of its POST evaluationRuns), as the service sent it.
CREATED_RUN = {
    "name": "projects/cloud-custodian/locations/us-central1/evaluationRuns/7512329633895809024",
    "displayName": "c7n-test-eval-run-succeeded",
    "metadata": {"pipeline_id": "8253914056763637760"},
    "dataSource": {
        "evaluationSet": "projects/cloud-custodian/locations/us-central1/evaluationSets/1"
    },
    "evaluationConfig": {"metrics": [EXACT_MATCH]},
    "state": "PENDING",
    "completionTime": "1970-01-01T00:00:00Z",
}


def test_a_created_run_s_placeholder_is_no_completion_time() -> None:
    run = t.EvaluationRun.from_wire(CREATED_RUN)
    assert run.completion_time is None and not run.done
    assert run.metadata == {"pipeline_id": "8253914056763637760"}
    assert "completionTime" not in run.to_wire()


def _created(emulator: Emulator, project: str, metric: dict[str, Any]) -> httpx.Response:
    """The flight's creates through the REST API (an answered item, its set, a run of
    ``metric``); the run create's answer."""
    parent = f"{emulator.url}/v1/projects/{project}/locations/us-central1"
    answered = {**PROMPT, "candidateResponses": [{"candidate": "model-under-test", "text": "4"}]}
    item = httpx.post(
        f"{parent}/evaluationItems",
        json={"displayName": "i", "evaluationItemType": "REQUEST", "evaluationRequest": answered},
    ).json()
    made = httpx.post(
        f"{parent}/evaluationSets", json={"displayName": "s", "evaluationItems": [item["name"]]}
    ).json()
    body = {
        "displayName": "r",
        "dataSource": {"evaluationSet": made["name"]},
        "evaluationConfig": {"metrics": [metric]},
    }
    return httpx.post(f"{parent}/evaluationRuns", json=body)


def test_creates_answer_as_the_service_s_and_the_snapshot_comes_at_the_end(
    emulator: Emulator, project: str
) -> None:
    run = _created(emulator, project, EXACT_MATCH).json()
    # The flight's run create answer: PENDING with the placeholder time, a pipeline id in its
    # metadata, and no snapshot yet.
    assert run["state"] == "PENDING" and run["completionTime"] == "1970-01-01T00:00:00Z"
    assert set(run["metadata"]) == {"pipeline_id"} and run["metadata"]["pipeline_id"].isdigit()
    assert "evaluationSetSnapshot" not in run
    with emulator.client(project) as client:
        done = client.wait_for_run(run["name"], timeout=30, poll_interval=0.02)
    # Done, it names the results set as its snapshot (the flight's two GETs).
    assert done.evaluation_results is not None
    assert done.evaluation_set_snapshot == done.evaluation_results.evaluation_set
    assert done.completion_time is not None and done.completion_time.year > 1970


def test_a_listing_of_runs_leaves_out_what_the_service_s_did(
    emulator: Emulator, project: str
) -> None:
    answered = {**PROMPT, "candidateResponses": [{"candidate": "model-under-test", "text": "4"}]}
    done = _run(emulator, project, answered)
    assert done["completionTime"] and done["evaluationSetSnapshot"]  # a GET has them
    listed = httpx.get(
        f"{emulator.url}/v1/projects/{project}/locations/us-central1/evaluationRuns", timeout=10
    ).json()["evaluationRuns"]
    (run,) = listed
    # The flight's listing: each run without completionTime and evaluationSetSnapshot.
    assert "completionTime" not in run and "evaluationSetSnapshot" not in run
    assert run == {
        k: v for k, v in done.items() if k not in ("completionTime", "evaluationSetSnapshot")
    }


def test_the_results_are_named_as_the_service_names_them(emulator: Emulator, project: str) -> None:
    # googleapis/python-aiplatform's replays of get_evaluation_set and get_evaluation_item:
    # "Results Set for EvaluationRun <run id>", "<metric> result for <request item id>" (the
    # run's first metric, one RESULT item a request), a payload at
    # "<destination>/result_<RESULT item id>.json".
    answered = {**PROMPT, "candidateResponses": [{"candidate": "model-under-test", "text": "4"}]}
    with emulator.client(project) as client:
        item = client.create_item(
            {"displayName": "i", "evaluationItemType": "REQUEST", "evaluationRequest": answered}
        )
        made = client.create_set(display_name="s", items=[item])
        run = client.create_run(
            {
                "displayName": "r",
                "dataSource": {"evaluationSet": made.name},
                "evaluationConfig": {
                    "metrics": [EXACT_MATCH, {"metric": "response_match_score"}],
                    "outputConfig": {
                        "gcsDestination": {"outputUriPrefix": "gs://recorded-names/out"}
                    },
                },
            }
        )
        done = client.wait_for_run(run, timeout=30, poll_interval=0.02)
        assert done.evaluation_results is not None and done.evaluation_results.evaluation_set
        results_set = client.get_set(done.evaluation_results.evaluation_set)
        (result,) = client.get_results(done)
    assert results_set.display_name == f"Results Set for EvaluationRun {done.id}"
    assert result.display_name == f"exact_match result for {item.id}"
    assert result.gcs_uri == f"gs://recorded-names/out/result_{result.id}.json"


def test_a_metric_named_freely_is_computed_as_its_spec_says(
    emulator: Emulator, project: str
) -> None:
    # Issue 61: the service accepted ``exact_match_2`` with a BLEU spec and BLEU's
    # ``use_effective_order``: the name is the caller's label, the spec the computation.
    bleu = {"type": "BLEU", "parameters": {"use_effective_order": True}}
    created = _created(
        emulator, project, {"metric": "exact_match_2", "computationBasedMetricSpec": bleu}
    )
    assert created.status_code == 200, created.text
    with emulator.client(project) as client:
        done = client.wait_for_run(created.json()["name"], timeout=30, poll_interval=0.02)
        (result,) = client.get_results(done)
    (scored,) = result.evaluation_response.candidate_results
    assert scored.metric == "exact_match_2" and "BLEU" in (scored.explanation or "")
    assert scored.score == pytest.approx(1.0)  # "4" against "4"
    assert done.summary["model-under-test/exact_match_2/AVERAGE"] == pytest.approx(1.0)


def test_bleu_without_the_effective_order_scores_a_short_answer_zero() -> None:
    from platform_eval.metrics.vertex_text import bleu

    assert bleu("4", "4") == pytest.approx(1.0)
    assert bleu("4", "4", effective_order=False) == pytest.approx(0.0, abs=1e-9)


def test_the_services_own_universal_metric_is_501_naming_it(
    emulator: Emulator, project: str
) -> None:
    created = _created(emulator, project, {"metric": "universal_ar_v1"})
    assert created.status_code == 501
    assert "universal_ar_v1" in created.json()["error"]["message"]


def test_a_bigquery_request_set_is_a_valid_run_the_emulator_cannot_serve(
    emulator: Emulator, project: str
) -> None:
    # googleapis/python-aiplatform's replay of get_evaluation_run reads back a run of the
    # service on a ``bigqueryRequestSet`` (its prompt and candidate columns, a sampling config).
    parent = f"{emulator.url}/v1/projects/{project}/locations/us-central1"
    source = {
        "uri": "bq://a-project.a_dataset.requests",
        "promptColumn": "request",
        "candidateResponseColumns": {"checkpoint_1": "checkpoint_1"},
        "samplingConfig": {
            "samplingCount": 100,
            "samplingMethod": "RANDOM",
            "samplingDuration": "60s",
        },
    }
    created = httpx.post(
        f"{parent}/evaluationRuns",
        json={
            "displayName": "r",
            "dataSource": {"bigqueryRequestSet": source},
            "evaluationConfig": {"metrics": [EXACT_MATCH]},
        },
    )
    assert created.status_code == 501, created.text
    assert "dataSource.bigqueryRequestSet" in created.json()["error"]["message"]


def test_the_summary_is_read_per_candidate() -> None:
    # The replay's keys, the 2025 ones with MODE a list when tied, beside one with no candidate.
    run = t.EvaluationRun.from_wire(
        {
            "evaluationResults": {
                "summaryMetrics": {
                    "metrics": {
                        "gemini-2.0-flash-001@default/universal/AVERAGE": 0.6943817985685249,
                        "gemini-2.0-flash-001@default/universal/MODE": [0.75, 0.8571428656578064],
                        "checkpoint_1/user_defined/P90": 5,
                        "projects/p/locations/l/endpoints/e/exact_match/AVERAGE": 1,
                        "exact_match/AVERAGE": 0.5,
                    },
                    "totalItems": 19,
                }
            }
        }
    )
    assert run.summary_by_candidate == {
        "gemini-2.0-flash-001@default": {
            "universal": {"AVERAGE": 0.6943817985685249, "MODE": [0.75, 0.8571428656578064]}
        },
        "checkpoint_1": {"user_defined": {"P90": 5}},
        "projects/p/locations/l/endpoints/e": {"exact_match": {"AVERAGE": 1}},
        "": {"exact_match": {"AVERAGE": 0.5}},
    }
