"""What platform-eval reaches into google-adk for, checked on every test run (not only the slow
parity tests): a private name that moves in a new google-adk release fails here, loudly, with
the name, instead of a judged criterion failing case by case.

pyproject.toml bounds google-adk to the releases the parity tests cover; widening that bound
starts here."""

from __future__ import annotations

import importlib
from importlib.metadata import version

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

pytest.importorskip("google.adk")

from platform_eval.metrics import adk_judged

#: (module, dotted attribute): the private modules and names we use, each with where.
PRIVATE = [
    ("google.adk.evaluation._retry_options_utils", "EnsureRetryOptionsPlugin"),
    # agents/model_probe.py: adk eval's retry options, read to retry as it does.
    ("google.adk.evaluation._retry_options_utils", "_RETRY_HTTP_STATUS_CODES"),
    ("google.adk.evaluation._retry_options_utils", "add_default_retry_options_if_not_present"),
    # agents/model_quota.py: the default retry options, whose statuses the plugin takes out.
    ("google.adk.evaluation._retry_options_utils", "_DEFAULT_HTTP_RETRY_OPTIONS"),
    (
        "google.adk.evaluation.evaluation_generator",
        "EvaluationGenerator.convert_events_to_eval_invocations",
    ),
    ("google.adk.evaluation.app_details", "AgentDetails"),
    ("google.adk.plugins.base_plugin", "BasePlugin.before_model_callback"),
    # agents/describe.py: a tool's declaration as ADK sends it to the model.
    ("google.adk.tools.function_tool", "FunctionTool._get_declaration"),
    # metrics/adk_reasons.py: the methods KeepsReasons watches (results returned unchanged).
    ("google.adk.evaluation.llm_as_judge", "LlmAsJudge._evaluate_single_sample"),
    ("google.adk.evaluation.llm_as_judge", "LlmAsJudge.convert_auto_rater_response_to_score"),
    (
        "google.adk.evaluation.hallucinations_v1",
        "HallucinationsV1Evaluator._get_steps_to_evaluate",
    ),
    (
        "google.adk.evaluation.hallucinations_v1",
        "HallucinationsV1Evaluator._evaluate_nl_response",
    ),
    # agents/served_details.py: the request processors that build a served agent's instruction.
    ("google.adk.flows.llm_flows.prompt._instructions", "request_processor"),
    ("google.adk.flows.llm_flows.prompt._identity", "request_processor"),
    ("google.adk.flows.llm_flows.agent_transfer", "request_processor"),
]
#: Private attributes of objects made at run time: (module, class, attribute), checked on the
#: class's fields or, for plain classes, on an instance's attributes as its __init__ sets them.
PRIVATE_ATTRIBUTES = [
    # agents/model_quota.py: the agent a failed model call came from.
    ("google.adk.agents.callback_context", "CallbackContext", "_invocation_context"),
]


@pytest.mark.parametrize("name", sorted(adk_judged._EVALUATORS))
def test_each_judged_criterion_still_builds_its_judge_where_we_hand_ours_in(name: str) -> None:
    module, class_name, _ = adk_judged._EVALUATORS[name]
    evaluator = getattr(importlib.import_module(f"google.adk.evaluation.{module}"), class_name)
    hook = "_setup_llm" if name in adk_judged._SETUP_LLM else "_setup_auto_rater"
    assert callable(getattr(evaluator, hook, None)), (
        f"google-adk {version('google-adk')}: {class_name}.{hook} is gone; platform-eval hands "
        "its judge in there (metrics/adk_judged.py)"
    )


@pytest.mark.parametrize(("module", "attribute"), PRIVATE)
def test_the_helpers_we_use_are_where_we_read_them(module: str, attribute: str) -> None:
    found: object = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part, None)
        assert found is not None, f"google-adk {version('google-adk')}: {module}.{attribute} moved"


def test_the_installed_google_adk_is_within_the_bound_we_declare() -> None:
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    declared = [
        Requirement(r)
        for r in project["project"]["optional-dependencies"]["adk"]
        if r.startswith("google-adk")
    ]
    assert declared and all(r.specifier for r in declared)
    assert any("<" in str(s) for r in declared for s in r.specifier), "no upper bound"
    assert all(Version(version("google-adk")) in r.specifier for r in declared)


@pytest.mark.parametrize(("module", "class_name", "attribute"), PRIVATE_ATTRIBUTES)
def test_the_private_attributes_we_read_are_still_set(
    module: str, class_name: str, attribute: str
) -> None:
    import inspect

    cls = getattr(importlib.import_module(module), class_name)
    sources = "".join(
        inspect.getsource(c) for c in cls.__mro__ if c.__module__.startswith("google")
    )
    assert f"self.{attribute}" in sources or attribute in getattr(cls, "model_fields", {}), (
        f"google-adk {version('google-adk')}: {class_name}.{attribute} is no longer set"
    )


def _first_case_imports() -> list[str]:
    from platform_eval.agents import _worker

    return list(_worker._FIRST_CASE_IMPORTS)


@pytest.mark.parametrize("module", _first_case_imports())
def test_the_modules_a_standby_worker_imports_ahead_are_still_there(module: str) -> None:
    """agents/_worker.py imports these (four of them private) before a case's first run; one
    google-adk moved is passed over there, so its move is said here, not found in a benchmark."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(f"google-adk {version('google-adk')}: {module} is gone ({exc})")
