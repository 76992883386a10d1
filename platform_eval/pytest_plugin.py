"""pytest plugin: the ``platform_eval`` fixture evaluates eval sets in your tests.

    def test_agent(platform_eval):
        results = platform_eval.evaluate(
            "tests/eval/evalsets/basic.evalset.json",
            traces=["traces/basic.otlp.json"],
            config="tests/eval/eval_config.json",
        )
        results.assert_passed()  # lists the failing cases, metrics and verdicts

The target is ``platform_eval.connect()``'s, as the command line picks it:
``PLATFORM_EVAL_EMULATOR_HOST`` for a running emulator, ``GOOGLE_CLOUD_PROJECT`` for the real
service, else an in-memory emulator started once for the session (not the command line's store:
test runs leave nothing in it). Imports are lazy, so the
plugin costs nothing to test runs that do not use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import pytest

if TYPE_CHECKING:
    from .formats.config import EvalConfig
    from .jobs.plan import EvaluateOptions
    from .results import RunResults
    from .target import Target


class PlatformEval:
    """What the ``platform_eval`` fixture gives a test."""

    def __init__(
        self, target: Target, manifests: Path, judged: _JudgedTargets | None = None
    ) -> None:
        self.target = target
        self.client = target.client
        self._manifests = manifests
        self._judged = judged

    def _target_for(self, config: EvalConfig | None) -> Target:
        """The session's target; for a config that names a judge model while the session's
        embedded emulator has none (PLATFORM_EVAL_JUDGE_MODEL unset), an embedded emulator
        judged by that model, as the command line judges with the config's model."""
        emulator = self.target.emulator
        if config is None or self._judged is None or emulator is None:
            return self.target
        if emulator.judges.model is not None:
            return self.target
        model = config.judge_model()
        return self._judged.target(model) if model else self.target

    def evaluate(self, eval_set: Any, **options: Unpack[EvaluateOptions]) -> RunResults:
        """Uploads, runs and returns the results, judged by the config's and the given
        thresholds: ``jobs.evaluate``'s options (``traces``, ``config``, ``metrics``,
        ``thresholds``, ``agent``, ``num_runs``, ``mock_tools``, ...), read into the same plan.

        ``agent`` (an agent folder, as ``adk eval`` takes it, or ``module:attribute``) runs the
        agent on every case first, ``num_runs`` times each, instead of reading ``traces``.
        ``mock_tools`` (``"golden"``, a mock file's path or ``"sessions:DIR"``) answers the
        agent's tool calls instead of running the tools, but ``real_tools``; a call no mock
        answers fails its case, or runs the tool with ``unmatched_tools="real"``
        (``agents.tool_mocks``)."""
        from . import jobs
        from .jobs.metric_check import ADVICE
        from .metrics.computable import JUDGE
        from .results import fetch_results

        candidate = options.get("candidate", "agent")
        given: EvaluateOptions = {
            "manifest": self._manifests / f"{abs(hash((str(eval_set), candidate)))}.jsonl",
            # A test's agent runs afresh each time: nothing is kept to resume from.
            "resume": False,
        }
        given.update(options)
        plan = jobs.build_plan(eval_set, **given)
        target = self._target_for(plan.metrics.config)
        if "poll_interval" not in options:
            run = dataclasses.replace(plan.run, poll_interval=target.poll_interval)
            plan = dataclasses.replace(plan, run=run)
        try:
            evaluation = jobs.execute(target.client, plan)
        except jobs.MetricsRefusedError as exc:
            # Said as the test session's emulator is set up: from the environment.
            advice = {
                **ADVICE,
                JUDGE: "set PLATFORM_EVAL_JUDGE_MODEL for the test session's emulator, or name "
                "the judge in the config (judge_model_options.judge_model)",
            }
            raise ValueError(str(jobs.MetricsRefusedError(exc.refusals, advice))) from None
        return fetch_results(
            target.client,
            evaluation.run,
            thresholds=evaluation.thresholds,
            items=evaluation.results,
            case_ids=evaluation.upload.case_ids,
        )


class _JudgedTargets:
    """Embedded emulators judged by a config's model, one per model, for the session."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._by_model: dict[str, Target] = {}

    def target(self, model: str) -> Target:
        if model not in self._by_model:
            from .judges import JudgeSettings
            from .target import connect

            judges = JudgeSettings.resolve(db=None, config_model=model).judges()
            self._by_model[model] = self._stack.enter_context(connect(db=None, judges=judges))
        return self._by_model[model]

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="session")
def _platform_eval_judged() -> Iterator[_JudgedTargets]:
    judged = _JudgedTargets()
    try:
        yield judged
    finally:
        judged.close()


@pytest.fixture(scope="session")
def _platform_eval_target() -> Iterator[Target]:
    from .target import connect

    # In memory: a test session's evaluations stay out of the project's own store.
    with connect(db=None) as target:
        yield target


@pytest.fixture
def platform_eval(
    _platform_eval_target: Target,
    _platform_eval_judged: _JudgedTargets,
    tmp_path_factory: pytest.TempPathFactory,
) -> PlatformEval:
    """Evaluates eval sets against the session's target: ``platform_eval.evaluate(...)``."""
    manifests = tmp_path_factory.mktemp("platform-eval")
    return PlatformEval(_platform_eval_target, manifests, _platform_eval_judged)
