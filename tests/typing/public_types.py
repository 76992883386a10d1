"""Checked by mypy (tests/types/test_public_types.py), never run: what the high-level functions
return, for a sync and for an async client."""

from typing import Any, assert_type

from platform_eval import AsyncClient, Client, jobs
from platform_eval.results import RunResults, fetch_results
from platform_eval.types import EvaluationSet


def sync(client: Client) -> None:
    evaluation = jobs.evaluate(client, "set.evalset.json", metrics=["exact_match"])
    assert_type(evaluation, jobs.Evaluation)
    assert_type(jobs.upload_eval_set(client, "set.evalset.json"), EvaluationSet)
    assert_type(jobs.upload_traces(client, "set.evalset.json", ["traces/"]), EvaluationSet)
    assert_type(fetch_results(client, evaluation.run), RunResults)


async def asynchronous(client: AsyncClient) -> None:
    evaluation = await jobs.evaluate(client, "set.evalset.json", num_runs=3, agent="my_agent/")
    assert_type(evaluation, jobs.Evaluation)
    assert_type(await jobs.upload_eval_set(client, "set.evalset.json"), EvaluationSet)
    assert_type(await fetch_results(client, evaluation.run), RunResults)


def options_are_checked(client: Client) -> Any:
    return jobs.evaluate(client, "set.evalset.json", num_runz=3)  # type: ignore[call-overload]
