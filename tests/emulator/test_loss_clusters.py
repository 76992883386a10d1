""":generateLossClusters on the emulator: the failed rubric verdicts of a metric clustered by
the judge model into a two-level taxonomy, with counts and examples; through the official SDK's
``generate_loss_clusters`` and our client's."""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from typing import Any

import pytest
from fake_gemini import model_judges
from loss_failures import EXPECTED, KINDS, cluster_rule, failure_judge, result, results

from platform_eval import errors
from platform_eval.emulator import Emulator
from platform_eval.metrics import loss_clusters
from platform_eval.results import fetch_results
from platform_eval.types import EvaluationResult


def _counts(response: Any) -> dict[tuple[str, str], int]:
    (result,) = response.results
    return {
        (c.taxonomy_entry.l1_category, c.taxonomy_entry.l2_category): c.item_count
        for c in result.clusters
    }


def test_forty_failures_of_three_kinds_are_three_clusters_and_a_rerun_asks_no_model(
    tmp_path: Any,
) -> None:
    body = {
        "inlineResults": {"evaluationResults": results()},
        "configs": [{"metric": "general_quality_v1", "candidate": "agent"}],
    }
    cache = str(tmp_path / "judge.db")
    for attempt in range(2):
        with (
            model_judges(cluster_rule, cache=cache) as (judges, fake),
            Emulator(judges=judges) as emulator,
            emulator.client("loss") as client,
        ):
            future = client.generate_loss_clusters(body)
            response = future.wait()
            assert _counts(response) == EXPECTED
            (result,) = response.results or []
            largest = result.clusters[0]
            assert largest.cluster_id == "cluster-1" and largest.item_count == 20
            example = largest.examples[0]
            assert example.evaluation_result.request.prompt.text == "case calls the refund tool 0"
            assert [f.rubric_id for f in example.failed_rubrics] == ["calls_the_refund_tool"]
            assert example.failed_rubrics[0].classification_rationale == (
                "calls the refund tool failed"
            )
            # The operation is the location's, and can be read again.
            assert client.get_operation(future.operation.name).done
            assert len(fake.seen) == (1 if attempt == 0 else 0)


def test_no_failure_is_no_cluster_and_no_call_and_a_failure_the_model_leaves_out_is_kept() -> None:
    passing = [result("fine", failed=None)]
    one = [result("refund please", failed="calls the refund tool")]
    with (
        model_judges(lambda seen: json.dumps({"clusters": []})) as (judges, fake),
        Emulator(judges=judges) as emulator,
        emulator.client("loss") as client,
    ):
        config = [{"metric": "general_quality_v1"}]
        none = client.generate_loss_clusters(
            {"inlineResults": {"evaluationResults": passing}, "configs": config}, wait=True
        )
        assert none.result().results[0].clusters is None or none.result().results[0].clusters == []
        assert fake.seen == []
        kept = client.generate_loss_clusters(
            {"inlineResults": {"evaluationResults": one}, "configs": config}, wait=True
        ).result()
        (cluster,) = kept.results[0].clusters
        assert cluster.taxonomy_entry.l1_category == "Unassigned" and cluster.item_count == 1
        with pytest.raises(errors.InvalidArgument, match="inlineResults or as an evaluationSet"):
            client.generate_loss_clusters({"configs": config})
        with pytest.raises(errors.InvalidArgument, match="predefinedTaxonomy: 'mine'"):
            client.generate_loss_clusters(
                {
                    "inlineResults": {"evaluationResults": one},
                    "configs": [{"metric": "general_quality_v1", "predefinedTaxonomy": "mine"}],
                }
            )


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_the_official_sdks_evaluate_then_generate_loss_clusters_gets_three_clusters() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("agentplatform")
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform
        from agentplatform import types as vt

    prompts = [r["request"]["prompt"]["text"] for r in results()]
    frame = pd.DataFrame({"prompt": prompts, "response": ["Sure."] * len(prompts)})
    with model_judges(failure_judge) as (judges, _), Emulator(judges=judges) as emulator:
        official = agentplatform.Client(
            project="loss",
            location="global",
            credentials=Credentials(token="t"),  # type: ignore[no-untyped-call]
            http_options={"base_url": emulator.url},
        ).evals
        evaluated = official.evaluate(
            dataset=vt.EvaluationDataset(eval_dataset_df=frame),
            metrics=[vt.RubricMetric.GENERAL_QUALITY],
        )
        response = official.generate_loss_clusters(eval_result=evaluated)
    assert _counts(response) == EXPECTED
    # Our engine finds the same failures in the results the SDK sent.
    failures = loss_clusters.failures_of(
        [EvaluationResult.model_validate(r) for r in results()], "general_quality_v1", "agent"
    )
    assert Counter(f.rubric for f in failures) == {k: v[2] for k, v in KINDS.items()}


@pytest.mark.slow  # a process or an SDK round of its own: CI runs it
def test_a_run_with_loss_analysis_metrics_from_the_official_sdk_ends_with_the_clusters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("vertexai")
    from test_official_client import official_evals

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from vertexai import types as vt

    prompts = [r["request"]["prompt"]["text"] for r in results()]
    with model_judges(failure_judge) as (judges, fake), Emulator(judges=judges) as emulator:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", emulator.url)
        with emulator.client("loss-run") as ours:
            items = [
                ours.create_item(
                    {
                        "displayName": f"case-{n}",
                        "evaluationItemType": "REQUEST",
                        "evaluationRequest": {
                            "prompt": {"text": prompt},
                            "candidateResponses": [{"candidate": "agent", "text": "Sure."}],
                        },
                    }
                )
                for n, prompt in enumerate(prompts)
            ]
            evaluation_set = ours.create_set(display_name="loss", items=items)
        official = official_evals("vertexai", "loss-run", emulator.url)
        run = official.create_evaluation_run(
            dataset=vt.EvaluationRunDataSource(evaluation_set=evaluation_set.name),
            dest="gs://loss-run-results/out",
            metrics=[vt.EvaluationRunMetric(metric="general_quality_v1")],
            loss_analysis_metrics=["general_quality_v1"],
        )
        with emulator.client("loss-run") as ours:
            done = ours.wait_for_run(run.name, poll_interval=0.05, timeout=60)
            report = fetch_results(ours, done).to_html()
        assert done.state == "SUCCEEDED", done.error
        # The run's HTML report lists the clusters, each case linked to its details.
        assert "<h2>Failure clusters of general_quality_v1</h2>" in report
        assert re.search(
            r"<td>Wrong language</td><td>8</td><td>[^<]*</td><td><a href=\"#case-", report
        )
        (analysis,) = done.evaluation_results.loss_analysis_results
        counts = {
            (c.taxonomy_entry.l1_category, c.taxonomy_entry.l2_category): c.item_count
            for c in analysis.clusters
        }
        assert counts == EXPECTED
        # Each example names the run's RESULT item it came from.
        assert all(e.evaluation_item for c in analysis.clusters for e in c.examples)
        assert sum("FAILURES:" in seen.prompt for seen in fake.seen) == 1
    # Without a judge model the same run is refused when it is created, saying why.
    with Emulator() as plain, plain.client("loss-run") as ours:
        item = ours.create_item(
            {
                "displayName": "x",
                "evaluationItemType": "REQUEST",
                "evaluationRequest": {
                    "prompt": {"text": "x"},
                    "candidateResponses": [{"candidate": "a", "text": "y"}],
                },
            }
        )
        evaluation_set = ours.create_set(display_name="s", items=[item])
        with pytest.raises(errors.InvalidArgument, match="clustering failures needs a judge"):
            ours.create_run(
                {
                    "displayName": "loss",
                    "dataSource": {"evaluationSet": evaluation_set.name},
                    "evaluationConfig": {
                        "metrics": [{"metric": "exact_match"}],
                        "lossAnalysisConfig": [{"metric": "exact_match"}],
                    },
                }
            )
