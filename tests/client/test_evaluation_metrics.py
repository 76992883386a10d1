"""``evaluationMetrics``: metrics registered in a project, named by runs."""

from __future__ import annotations

from typing import Any

import pytest
from discovery_documents import VERSIONS, document, violations
from factories import request_item

from platform_eval import errors
from platform_eval._transport import ApiCall
from platform_eval.emulator import Emulator

LLM_METRIC = {
    "displayName": "politeness",
    "description": "Is the answer polite?",
    "metric": {
        "llmBasedMetricSpec": {
            "metricPromptTemplate": "Rate the politeness of {response} from 1 to 5.",
        }
    },
    "labels": {"team": "eval"},
}


def test_a_metric_is_registered_read_listed_and_deleted(client: Any) -> None:
    created = client.create_metric(LLM_METRIC)
    assert created.name.startswith(f"{client.parent}/evaluationMetrics/")
    assert created.create_time is not None and created.update_time is not None
    fetched = client.get_metric(created.id)
    assert fetched == created
    assert (
        fetched.metric.llm_based_metric_spec.to_wire() == LLM_METRIC["metric"]["llmBasedMetricSpec"]
    )
    assert [m.name for m in client.list_metrics()] == [created.name]
    assert [m.name for m in client.list_metrics(filter='display_name = "other"')] == []

    deleted = client.delete_metric(created, wait=True)
    assert deleted.done
    with pytest.raises(errors.NotFound):
        client.get_metric(created.name)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({**LLM_METRIC, "displayName": ""}, "displayName is required"),
        (
            {"displayName": "bleu", "metric": {"bleuSpec": {}}},
            "only an LLM-based metric (llmBasedMetricSpec) or a custom code execution metric",
        ),
        ({"displayName": "empty"}, "needs metric or gcsUri"),
    ],
)
def test_what_the_service_refuses_to_register_is_refused(
    sync_client: Any, body: dict[str, Any], message: str
) -> None:
    with pytest.raises(
        errors.InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        sync_client.create_metric(body)


def test_a_typo_in_a_metric_names_the_field(sync_client: Any) -> None:
    with pytest.raises(ValueError, match="displayNam"):
        sync_client.create_metric({"displayNam": "x", "metric": {"llmBasedMetricSpec": {}}})


def test_a_run_names_a_registered_metric(sync_client: Any) -> None:
    item = sync_client.create_item(request_item("x", candidates=[{"candidate": "a", "text": "hi"}]))
    evaluation_set = sync_client.create_set(display_name="s", items=[item])
    registered = sync_client.create_metric(LLM_METRIC)
    missing = registered.name.rsplit("/", 1)[0] + "/123"
    with pytest.raises(
        errors.InvalidArgument, match=r"metrics\[0\]\.metricResourceName: .* not found"
    ):
        sync_client.create_run(
            evaluation_set=evaluation_set,
            metrics=[{"metric": "politeness", "metricResourceName": missing}],
        )
    # The registered metric is found and read: it is a custom LLM metric, and this emulator has
    # no judge model, so the run is refused when it is created, with the reason, rather than
    # scored some other way or left NOT_EVALUATED case after case.
    with pytest.raises(errors.InvalidArgument, match="custom LLM metric: a judge model"):
        sync_client.create_run(
            evaluation_set=evaluation_set,
            metrics=[{"metric": "politeness", "metricResourceName": registered.name}],
        )
    # The API requires the metric's name beside the resource name.
    with pytest.raises(errors.InvalidArgument, match=r"metrics\[0\]\.metric is required"):
        sync_client.create_run(
            evaluation_set=evaluation_set, metrics=[{"metricResourceName": registered.name}]
        )


@pytest.mark.parametrize("version", VERSIONS)
def test_served_metrics_are_in_the_schema(version: str, emulator: Emulator, project: str) -> None:
    with emulator.client(project, api_version=version) as client:
        created = client.create_metric(LLM_METRIC)
        served = client._transport.request(ApiCall("GET", str(created.name)))
        prefix = {"v1beta1": "GoogleCloudAiplatformV1beta1", "v1": "GoogleCloudAiplatformV1"}
        spec = document(version)["schemas"][f"{prefix[version]}EvaluationMetric"]
        assert violations(served, spec, version) == []


def test_a_chosen_metric_id_names_the_metric_and_a_taken_one_is_409(client: Any) -> None:
    created = client.create_metric(LLM_METRIC, metric_id="politeness-v2")
    assert created.name == f"{client.parent}/evaluationMetrics/politeness-v2"
    with pytest.raises(errors.Conflict) as taken:
        client.create_metric(LLM_METRIC, metric_id="politeness-v2")
    assert "already exists" in str(taken.value)
    for invalid in ("Politeness", "9lives", "ends-with-", "x" * 64, "under_score"):
        with pytest.raises(errors.InvalidArgument, match="evaluationMetricId"):
            client.create_metric(LLM_METRIC, metric_id=invalid)
