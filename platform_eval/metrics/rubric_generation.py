"""Rubrics written by the model judge for one prompt (``:generateInstanceRubrics``).

The prompt the model is asked, in this order:

1. the predefined metric's own rubric-generation prompt, where the installed official SDK ships
   it (``instruction_following_v1``, ``text_quality_v1``, ``multimodal_understanding_v1``:
   vertexai's ``_default_templates``), read at run time so that it stays the SDK's;
2. for another metric of the catalog, what that metric checks (``rubric_metrics.focus_of``)
   (its description, for the engine's other rubric metrics) in ``FOCUS_PROMPT``;
3. the request's own ``rubricGenerationSpec.promptTemplate`` (its ``{prompt}`` filled);
4. otherwise ``DEFAULT_PROMPT``.

The call goes through the model judge like every judge call (cache, replay-only, accounting).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from typing import Any

from ..types import Rubric
from ._spec import MetricError
from .engine import REGISTRY
from .judges import JudgeError, Judges
from .model_judge import CallLabel
from .model_rubrics import ask_json
from .rubric_metrics import focus_of

#: Our prompt for a catalog metric: what the metric checks, and the prompt.
FOCUS_PROMPT = (
    "You write evaluation rubrics. The metric {metric!r} checks {focus}. Write the specific, "
    "checkable rubrics (at most 12) a response to the prompt below must satisfy to pass it, "
    "each a yes/no question about the response.\n"
    'Answer with JSON: {{"questions": ["...", ...]}}.\n\n<user_prompt>\n{prompt}\n</user_prompt>'
)
#: Our prompt when the request names neither a metric nor a template of its own.
DEFAULT_PROMPT = (
    "You write evaluation rubrics. Write 3 to 8 specific, checkable rubrics that a good "
    "response to the prompt below must satisfy, each a yes/no question about the response, "
    "phrased with the prompt's own wording. Do not answer the prompt.\n"
    'Answer with JSON: {{"questions": ["...", ...]}}.\n\n<user_prompt>\n{prompt}\n</user_prompt>'
)
#: Predefined metrics whose rubric-generation prompt the official SDK ships, by template name.
_SDK_TEMPLATES = {
    "instruction_following_v1": "INSTRUCTION_FOLLOWING_RUBRIC_GENERATION_PROMPT_TEMPLATE",
    "text_quality_v1": "TEXT_QUALITY_RUBRIC_GENERATION_PROMPT_TEMPLATE",
    "multimodal_understanding_v1": "MULTIMODAL_UNDERSTANDING_RUBRIC_GENERATION_PROMPT_TEMPLATE",
}
_SCHEMA = {
    "type": "OBJECT",
    "properties": {"questions": {"type": "ARRAY", "items": {"type": "STRING"}}},
    "required": ["questions"],
}


def sdk_template(metric: str) -> str | None:
    """The official SDK's rubric-generation prompt of ``metric``, when it is installed."""
    name = _SDK_TEMPLATES.get(metric)
    if name is None:
        return None
    try:
        module = importlib.import_module("vertexai.preview.evaluation.metrics._default_templates")
    except ImportError:
        return None
    template = getattr(module, name, None)
    return template if isinstance(template, str) else None


def _fill(template: str, prompt: str) -> str:
    # Only {prompt}: a template's other braces (its JSON example, doubled) are left to format.
    if "{prompt}" not in template:
        return f"{template}\n\n<user_prompt>\n{prompt}\n</user_prompt>"
    try:
        return template.format(prompt=prompt)
    except (KeyError, IndexError, ValueError):
        return template.replace("{prompt}", prompt)


def generation_prompt(prompt: str, metric: str | None, template: str | None) -> str:
    """What the model is asked (see the module docstring for the order)."""
    if metric:
        own = sdk_template(metric)
        if own is not None:
            return _fill(own, prompt)
        focus = _what_it_checks(metric)
        if focus is not None:
            return FOCUS_PROMPT.format(metric=metric, focus=focus, prompt=prompt)
        if not template:
            raise MetricError(
                f"predefinedRubricGenerationSpec.metricSpecName: {metric!r} is not a metric the "
                "engine writes rubrics for (`platform-eval metrics list` shows them)"
            )
    if template:
        return _fill(template, prompt)
    return DEFAULT_PROMPT.format(prompt=prompt)


def _what_it_checks(metric: str) -> str | None:
    """What a rubric metric of the engine checks: the catalog's words, else its description."""
    focus = focus_of(metric)
    if focus is not None:
        return focus[0]
    info = REGISTRY.get(metric)
    if info is None or "rubrics" not in info.reads:
        return None
    return info.description.removeprefix("ADK: ")


def _questions(data: Any) -> list[str]:
    listed = data["questions"] if isinstance(data, dict) else data
    if not isinstance(listed, list):
        raise TypeError("expected a list of questions")
    return [str(q).strip() for q in listed if str(q).strip()]


def write_rubrics(
    judges: Judges,
    prompt: str,
    *,
    metric: str | None = None,
    template: str | None = None,
    model: str | None = None,
    types: Sequence[str] = (),
    label: str = "rubrics",
) -> list[Rubric]:
    """The rubrics the model writes for ``prompt``; MetricError without a model judge or when
    the model's answer is not rubrics."""
    judge = judges.model
    if judge is None:
        raise MetricError(
            "writing rubrics needs a judge model, and none is configured "
            "(--judge-model or PLATFORM_EVAL_JUDGE_MODEL)"
        )
    asked = generation_prompt(prompt, metric, template)
    try:
        questions = ask_json(
            judge,
            model or judge.model,
            asked,
            _SCHEMA,
            _questions,
            None,
            CallLabel(metric or "rubric_generation", label, ""),
        )
    except JudgeError as exc:
        raise MetricError(str(exc)) from None
    rubric_type = types[0] if len(types) == 1 else None
    return [
        Rubric.of(question, rubric_id=f"{_slug(metric or 'rubric')}-{index}", type=rubric_type)
        for index, question in enumerate(questions, 1)
    ]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "rubric"
