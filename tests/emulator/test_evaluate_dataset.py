""":evaluateDataset on the emulator: the official SDK's ``batch_evaluate`` reads a Cloud Storage
dataset, every row is scored by the run's engine, and the results and aggregates are written
back, as the discovery document describes."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from fake_gemini import model_judges
from google.api_core.exceptions import MethodNotImplemented

from platform_eval import metrics
from platform_eval.emulator import Emulator
from platform_eval.types import EvaluationRequest, EvaluationRunMetric

ROWS = [
    {"prompt": "Capital of France?", "response": "Paris", "reference": "Paris"},
    {"prompt": "Largest planet?", "response": "Saturn", "reference": "Jupiter"},
    {"prompt": "Weather?", "response": "It is sunny in Paris", "reference": "Sunny in Paris"},
]


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_the_sdks_batch_evaluate_writes_each_rows_scores_and_the_aggregates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("agentplatform")
    storage = pytest.importorskip("google.cloud.storage")
    from google.auth.credentials import AnonymousCredentials
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform
        from agentplatform import types as vt

    scored = json.dumps({"score": 4, "explanation": "fine"})
    with model_judges(lambda seen: scored) as (judges, _), Emulator(judges=judges) as emulator:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", emulator.url)
        bucket = storage.Client(project="batch", credentials=AnonymousCredentials()).bucket(
            "batch-data"
        )
        bucket.blob("rows.jsonl").upload_from_string("\n".join(json.dumps(r) for r in ROWS))
        official = agentplatform.Client(
            project="batch",
            location="us-central1",
            credentials=Credentials(token="t"),  # type: ignore[no-untyped-call]
            http_options={"base_url": emulator.url},
        ).evals
        operation = official.batch_evaluate(
            dataset={"gcs_source": {"uris": ["gs://batch-data/rows.jsonl"]}},
            metrics=[vt.Metric(name="exact_match"), vt.Metric(name="rouge_1")],
            dest="gs://batch-data/out",
        )
        assert operation.done and operation.error is None
        lines = [
            json.loads(line)
            for line in bucket.blob("out/evaluation_results.jsonl").download_as_text().splitlines()
        ]
        aggregates = json.loads(bucket.blob("out/aggregation_results.json").download_as_text())
        with emulator.client("batch") as client:
            done = client.get_operation(operation.name)
            assert done.response["outputInfo"] == {"gcsOutputDirectory": "gs://batch-data/out"}
            # A BigQuery source is refused naming it (no BigQuery here).
            with pytest.raises(MethodNotImplemented, match="bigquerySource"):
                client.evaluate_dataset(
                    {
                        "dataset": {"bigquerySource": {"inputUri": "bq://p.d.t"}},
                        "metrics": [{"exactMatchSpec": {}}],
                        "outputConfig": {"gcsDestination": {"outputUriPrefix": "gs://b/o"}},
                    }
                )
    # Each row's score is our engine's for the same row, as a run computes it.
    for name, field in (("exact_match", "exact_match"), ("rouge_1", "rouge_1")):
        spec = metrics.resolve(EvaluationRunMetric(metric=name))
        ours = []
        for row in ROWS:
            request = EvaluationRequest.model_validate(
                {
                    "prompt": {"text": row["prompt"]},
                    "goldenResponse": {"text": row["reference"]},
                    "candidateResponses": [{"text": row["response"]}],
                }
            )
            ours.append(metrics.evaluate_request([spec], request)[0].score)
        assert [line["metricResults"][field]["score"] for line in lines] == ours
    exact = [a for a in aggregates["aggregationResults"] if "exactMatchMetricValue" in a]
    assert {a["aggregationMetric"]: a["exactMatchMetricValue"]["score"] for a in exact} == {
        "AVERAGE": pytest.approx(1 / 3),
        "STANDARD_DEVIATION": pytest.approx(0.5773502691896257),
    }


def test_our_clients_evaluate_dataset_is_an_operation_with_the_aggregates() -> None:
    with Emulator() as emulator, emulator.client("batch") as client:
        import httpx

        httpx.post(
            f"{emulator.url}/upload/storage/v1/b/batch-own/o",
            params={"uploadType": "media", "name": "rows.json"},
            content=json.dumps(ROWS).encode(),
        )
        future = client.evaluate_dataset(
            {
                "dataset": {"gcsSource": {"uris": ["gs://batch-own/rows.json"]}},
                "metrics": [{"bleuSpec": {}, "aggregationMetrics": ["MAXIMUM"]}],
                "outputConfig": {"gcsDestination": {"outputUriPrefix": "gs://batch-own/out/"}},
            },
            wait=True,
        )
        response: Any = future.result()
        (aggregate,) = response.aggregation_output["aggregationResults"]
        assert aggregate["aggregationMetric"] == "MAXIMUM"
        assert aggregate["bleuMetricValue"]["score"] == pytest.approx(1.0)
