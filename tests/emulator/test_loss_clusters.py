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
from fake_gemini import Seen, model_judges

from platform_eval import errors
from platform_eval.emulator import Emulator
from platform_eval.metrics import loss_clusters
from platform_eval.types import EvaluationResult

#: Three kinds of failure, by the rubric that failed, and how many cases fail each way.
KINDS = {
    "calls the refund tool": ("Tool Use", "Missing tool call", 20),
    "states the price": ("Factuality and Grounding", "Wrong amount", 12),
    "answers in French": ("Instruction Following", "Wrong language", 8),
}


def _results() -> list[dict[str, Any]]:
    """40 failing cases (each one rubric failed, one passed) and 5 that pass every rubric."""
    found = []
    for rubric, (_, _, count) in KINDS.items():
        for n in range(count):
            found.append(_result(f"case {rubric} {n}", failed=rubric))
    found += [_result(f"good {n}", failed=None) for n in range(5)]
    return found


def _result(prompt: str, failed: str | None) -> dict[str, Any]:
    verdicts = [
        {
            "evaluatedRubric": {
                "rubricId": "polite",
                "content": {"property": {"description": "is polite"}},
            },
            "verdict": True,
        }
    ]
    if failed:
        verdicts.append(
            {
                "evaluatedRubric": {
                    "rubricId": failed.replace(" ", "_"),
                    "content": {"property": {"description": failed}},
                },
                "verdict": False,
                "reasoning": f"the agent never {failed}",
            }
        )
    return {
        "request": {"prompt": {"text": prompt}},
        "candidateResults": [
            {
                "candidate": "agent",
                "metric": "general_quality_v1",
                "score": 0.5,
                "rubricVerdicts": verdicts,
            }
        ],
    }


def _cluster_rule(seen: Seen) -> str:
    """Clusters each failure by its rubric's words, as a model reading them would."""
    groups: dict[str, list[dict[str, str]]] = {}
    for ident, rubric in re.findall(r"\[(F\d+)\] rubric: (.+)", seen.prompt):
        groups.setdefault(rubric.strip(), []).append({"id": ident, "rationale": f"{rubric} failed"})
    return json.dumps(
        {
            "clusters": [
                {
                    "l1_category": KINDS[rubric][0],
                    "l2_category": KINDS[rubric][1],
                    "description": f"the agent does not {rubric}",
                    "failures": members,
                }
                for rubric, members in groups.items()
            ]
        }
    )


def _counts(response: Any) -> dict[tuple[str, str], int]:
    (result,) = response.results
    return {
        (c.taxonomy_entry.l1_category, c.taxonomy_entry.l2_category): c.item_count
        for c in result.clusters
    }


EXPECTED = {(l1, l2): count for l1, l2, count in KINDS.values()}


def test_forty_failures_of_three_kinds_are_three_clusters_and_a_rerun_asks_no_model(
    tmp_path: Any,
) -> None:
    body = {
        "inlineResults": {"evaluationResults": _results()},
        "configs": [{"metric": "general_quality_v1", "candidate": "agent"}],
    }
    cache = str(tmp_path / "judge.db")
    for attempt in range(2):
        with (
            model_judges(_cluster_rule, cache=cache) as (judges, fake),
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
    passing = [_result("fine", failed=None)]
    one = [_result("refund please", failed="calls the refund tool")]
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


def _judge(seen: Seen) -> str:
    """Decides rubrics (failing the one each case's prompt names) and clusters failures."""
    if "FAILURES:" in seen.prompt:
        return _cluster_rule(seen)
    failed = next((kind for kind in KINDS if f"case {kind}" in seen.prompt), None)
    verdicts = [{"rubric_id": "polite", "rubric": "is polite", "verdict": True}]
    if failed:
        rubric_id = failed.replace(" ", "_")
        verdicts.append({"rubric_id": rubric_id, "rubric": failed, "verdict": False})
    return json.dumps({"verdicts": verdicts})


def test_the_official_sdks_evaluate_then_generate_loss_clusters_gets_three_clusters() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("agentplatform")
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import agentplatform
        from agentplatform import types as vt

    prompts = [r["request"]["prompt"]["text"] for r in _results()]
    frame = pd.DataFrame({"prompt": prompts, "response": ["Sure."] * len(prompts)})
    with model_judges(_judge) as (judges, _), Emulator(judges=judges) as emulator:
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
        [EvaluationResult.model_validate(r) for r in _results()], "general_quality_v1", "agent"
    )
    assert Counter(f.rubric for f in failures) == {k: v[2] for k, v in KINDS.items()}


def test_a_run_with_loss_analysis_metrics_from_the_official_sdk_ends_with_the_clusters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("vertexai")
    from test_official_client import official_evals

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from vertexai import types as vt

    prompts = [r["request"]["prompt"]["text"] for r in _results()]
    with model_judges(_judge) as (judges, fake), Emulator(judges=judges) as emulator:
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
        assert done.state == "SUCCEEDED", done.error
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
