"""The service's predefined metric names, and the unversioned names resolved to a version.

The names are the official SDK's ``SUPPORTED_PREDEFINED_METRICS`` (``vertexai._genai.
_evals_constant``): read from the installed SDK at run time, so that a newer SDK's names are
known here too, and from the copy below (SDK 2.7.0's) without it. An unversioned name
(``general_quality``) is the newest version of it (``general_quality_v2``), as agents-cli
resolves it before sending.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Any

#: google-cloud-aiplatform 2.7.0's SUPPORTED_PREDEFINED_METRICS.
SDK_2_7_PREDEFINED = frozenset(
    {
        "final_response_match_v2",
        "final_response_match_v3",
        "final_response_quality_v1",
        "final_response_quality_v2",
        "final_response_reference_free_v1",
        "final_response_reference_free_v2",
        "gecko_text2image_v1",
        "gecko_text2image_v2",
        "gecko_text2video_v1",
        "gecko_text2video_v2",
        "general_quality_v1",
        "general_quality_v2",
        "grounding_v1",
        "grounding_v2",
        "hallucination_v1",
        "hallucination_v2",
        "instruction_following_v1",
        "instruction_following_v2",
        "multi_turn_general_quality_v1",
        "multi_turn_general_quality_v2",
        "multi_turn_task_success_v1",
        "multi_turn_text_quality_v1",
        "multi_turn_text_quality_v2",
        "multi_turn_tool_use_quality_v1",
        "multi_turn_trajectory_quality_v1",
        "safety_v1",
        "safety_v3",
        "text_quality_v1",
        "text_quality_v2",
        "tool_use_quality_v1",
        "tool_use_quality_v2",
    }
)

_VERSION = re.compile(r"^(?P<base>.+)_v(?P<number>\d+)$")


@functools.cache
def predefined_metrics() -> frozenset[str]:
    """Every predefined metric name the service is known to take: the installed SDK's, and
    2.7.0's."""
    try:
        names = _sdk_constant("SUPPORTED_PREDEFINED_METRICS")
    except Exception:  # no SDK installed, or one that moved the constant: 2.7.0's names
        return SDK_2_7_PREDEFINED
    return SDK_2_7_PREDEFINED | frozenset(str(n).lower() for n in names)


def _sdk_constant(name: str) -> Any:
    """A constant of the installed SDK's ``vertexai/_genai/_evals_constant.py``, read from that
    module alone: importing it through its package imports the whole SDK (4 s of a command's
    start, for a list of names). The module imports nothing; where it comes to, the package's
    import is the way."""
    import importlib.util

    found = importlib.util.find_spec("vertexai")  # found, not imported
    folders = list(found.submodule_search_locations or []) if found else []
    path = Path(folders[0], "_genai", "_evals_constant.py") if folders else None
    if path is None or not path.is_file():
        raise ImportError("vertexai/_genai/_evals_constant.py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if any(isinstance(node, ast.Import | ast.ImportFrom) for node in ast.walk(tree)):
        from vertexai._genai import _evals_constant

        return getattr(_evals_constant, name)
    spec = importlib.util.spec_from_file_location("_platform_eval_sdk_evals_constant", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def newest_version(name: str, known: frozenset[str] | None = None) -> str:
    """``name`` when it is a known name or carries a version; else the newest ``name_vN`` of
    ``known`` (the predefined metrics by default), or ``name`` when there is none."""
    names = predefined_metrics() if known is None else known
    if name in names or _VERSION.match(name):
        return name
    versions = [
        (int(match["number"]), candidate)
        for candidate in names
        if (match := _VERSION.match(candidate)) and match["base"] == name
    ]
    return max(versions)[1] if versions else name
