"""What an interrupted agent run finished: a re-run reads those sessions instead of running
the agent on those cases again.

The journal is a folder per agent and simulator setting (named by a hash of the agent's source
files, how it was named and the simulator config), a file per finished run, named by the case's
id, a hash of the case as it is now, and the run's number: an edited case, or edited agent code,
runs again. Files are written whole (a temporary file renamed), so an interruption mid-write
leaves no half session. ``clear()`` removes the folder once the evaluation has its results.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..formats import adk
from .reports import CaseRun

DEFAULT_JOURNALS = Path(".platform-eval") / "agent-runs"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


def case_digest(case: adk.EvalCase) -> str:
    return _digest(case.model_dump_json(exclude_none=True))


def _safe(name: str) -> str:
    kept = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]
    return kept or "case"


class AgentJournal:
    def __init__(
        self,
        *,
        agent_fingerprint: str,
        agent_spec: str,
        settings: dict[str, Any] | None = None,
        root: Path = DEFAULT_JOURNALS,
    ) -> None:
        key = _digest(agent_fingerprint, agent_spec, json.dumps(settings or {}, sort_keys=True))
        self.path = Path(root) / key

    def _file(self, case: adk.EvalCase, run: int) -> Path:
        return self.path / f"{_safe(case.eval_id)}.{case_digest(case)}.{run}.json"

    def finished(self, case: adk.EvalCase, run: int, *, need_spans: bool = False) -> CaseRun | None:
        try:
            data = json.loads(self._file(case, run).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # not finished, or unreadable: run it again
        if not isinstance(data, dict) or not isinstance(data.get("session"), dict):
            return None
        if need_spans and not isinstance(data.get("spans"), dict):
            return None
        return CaseRun(
            case.eval_id,
            run,
            session=data["session"],
            ending=data.get("ending"),
            spans=data.get("spans"),
            agents=data.get("agents") if isinstance(data.get("agents"), dict) else None,
            resumed=True,
            tool_calls=_tool_calls(data.get("toolCalls")),
            turn_seconds=_seconds(data.get("turnSeconds")),
        )

    def record(self, case: adk.EvalCase, result: CaseRun) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        target = self._file(case, result.run)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        body = {
            "session": result.session,
            "ending": result.ending,
            "spans": result.spans,
            "agents": result.agents,
            "toolCalls": result.tool_calls,
            "turnSeconds": result.turn_seconds,
        }
        partial.write_text(json.dumps(body), encoding="utf-8")
        os.replace(partial, target)

    def clear(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _tool_calls(raw: Any) -> list[tuple[str, str, str]]:
    """A journal's mocked or real tool calls, what of them is readable."""
    if not isinstance(raw, list):
        return []
    return [(str(c[0]), str(c[1]), str(c[2])) for c in raw if isinstance(c, list) and len(c) == 3]


def _seconds(raw: Any) -> list[float] | None:
    if not isinstance(raw, list):
        return None
    return [float(s) for s in raw if isinstance(s, int | float) and not isinstance(s, bool)]
