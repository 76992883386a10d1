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

#: (module, dotted attribute): the private modules and helpers we use.
PRIVATE = [
    ("google.adk.evaluation._retry_options_utils", "EnsureRetryOptionsPlugin"),
    (
        "google.adk.evaluation.evaluation_generator",
        "EvaluationGenerator.convert_events_to_eval_invocations",
    ),
    ("google.adk.evaluation.app_details", "AgentDetails"),
    ("google.adk.plugins.base_plugin", "BasePlugin.before_model_callback"),
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
