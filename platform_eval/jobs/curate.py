"""Recorded conversations into golden eval cases: ``platform-eval curate``.

Each recorded conversation (an ADK session, an OpenTelemetry trace, anything ``traces`` reads)
becomes an eval case: its user turns as the questions, its tool calls and final answers as the
expected ones, named from the session. Conversations with the same user turns and the same tool
trajectory are one case, counted. Scored again against the same traces, a curated case gets 1.0
on the deterministic metrics: it is what the agent did, kept as what it should do.

Where each case came from (file and session id, every duplicate's too) is kept beside the eval
set, in ``<output>.sources.json``: neither an ADK eval case nor an EvaluationDataset case has a
field for it, and a field we invented would make the file one ADK and the service refuse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..formats import adk
from ..formats.from_dataset import invocation_from_turn
from ..traces import Conversation

#: The file beside a curated eval set that says where each case came from.
SOURCES_SUFFIX = ".sources.json"
#: Eval ids are kept to what every file system and the service's display names take.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_ID = 80


@dataclass
class CuratedCase:
    case: adk.EvalCase
    #: (file, session id) of every conversation the case stands for, the first one first.
    sources: list[tuple[str, str]]


@dataclass
class Curation:
    cases: list[CuratedCase] = field(default_factory=list)
    #: Conversations left out, and why (no user message, not kept by ``--where``).
    skipped: list[str] = field(default_factory=list)
    #: What a case does not carry, per conversation (state keys whose starting value is
    #: not recorded).
    not_carried: list[str] = field(default_factory=list)

    @property
    def duplicates(self) -> int:
        return sum(len(c.sources) - 1 for c in self.cases)

    def eval_set(self, eval_set_id: str) -> adk.EvalSet:
        count = sum(len(c.sources) for c in self.cases)
        return adk.EvalSet(
            eval_set_id=eval_set_id,
            name=eval_set_id,
            description=(
                f"curated by platform-eval from {count} recorded conversations "
                f"({self.duplicates} duplicates merged)"
            ),
            eval_cases=[c.case for c in self.cases],
        )

    def sources(self) -> dict[str, Any]:
        """Where each case came from, by eval id: the count and every (file, session id)."""
        return {
            c.case.eval_id: {
                "count": len(c.sources),
                "sources": [{"file": f, "sessionId": s} for f, s in c.sources],
            }
            for c in self.cases
        }


def _case_id(conversation_id: str, taken: set[str]) -> str:
    base = _UNSAFE.sub("_", conversation_id).strip("._-")[:_MAX_ID] or "conversation"
    found, n = base, 2
    while found in taken:
        suffix = f"-{n}"
        found, n = base[: _MAX_ID - len(suffix)] + suffix, n + 1
    taken.add(found)
    return found


def _user_text(invocation: adk.Invocation) -> str:
    return "\n".join(p.text for p in invocation.user_content.parts or [] if p.text)


def _signature(invocations: Sequence[adk.Invocation]) -> str:
    """What makes two conversations the same case: their user turns and tool trajectory."""
    return json.dumps(
        [[_user_text(i), [[c.name, c.args or {}] for c in i.tool_calls()]] for i in invocations],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )


def curate(
    conversations: Iterable[Conversation],
    *,
    keep: Callable[[Conversation], str | None] | None = None,
) -> Curation:
    """The conversations as eval cases, near-duplicates merged. ``keep`` says why a
    conversation is left out (None keeps it)."""
    curation = Curation()
    by_signature: dict[str, CuratedCase] = {}
    taken: set[str] = set()
    for conversation in conversations:
        where = f"{conversation.source or '-'}: {conversation.id}"
        why = keep(conversation) if keep is not None else None
        if why is not None:
            curation.skipped.append(f"{where}: {why}")
            continue
        turns = sorted(conversation.agent_data.turns or [], key=lambda t: t.turn_index or 0)
        invocations = [invocation_from_turn(t, i) for i, t in enumerate(turns)]
        if not any(_user_text(i) for i in invocations):
            curation.skipped.append(f"{where}: no user message to ask again")
            continue
        source = (conversation.source or "", conversation.id)
        signature = _signature(invocations)
        if (same := by_signature.get(signature)) is not None:
            same.sources.append(source)
            continue
        started = conversation.session_input
        if started and conversation.state_set_by_run:
            keys = conversation.state_set_by_run
            curation.not_carried.append(
                f"{where}: the starting state leaves out {len(keys)} keys the run set "
                f"({', '.join(keys[:5])}{', ...' if len(keys) > 5 else ''}): their values before "
                "it are not recorded"
            )
        case = adk.EvalCase(
            eval_id=_case_id(conversation.id, taken),
            conversation=invocations,
            session_input=adk.SessionInput.model_validate(started) if started else None,
        )
        by_signature[signature] = CuratedCase(case, [source])
        curation.cases.append(by_signature[signature])
    return curation


def verdicts_by_case(rows: Iterable[Any]) -> dict[str, bool | None]:
    """A run's verdict per eval case from its result rows: True when every row with a
    threshold passed, False when one did not (NOT_EVALUATED included), None when no row of the
    case had a threshold (not checked: neither passed nor failed)."""
    verdicts: dict[str, bool | None] = {}
    for row in rows:
        passed, earlier = row.passed, verdicts.get(row.eval_case_id)
        if passed is None:
            verdicts.setdefault(row.eval_case_id, None)
        else:
            verdicts[row.eval_case_id] = passed if earlier is None else earlier and passed
    return verdicts


def case_of(
    conversation_id: str,
    verdicts: dict[str, bool | None],
    given: Collection[str] = (),
) -> tuple[str | None, str | None]:
    """The case of a run a conversation was scored as, or why none is taken: its id, its id as
    ``curate`` names it, or the case of ``<eval id>#<n>`` (``run --agent``'s repeated runs).

    ``given``: the ids of every conversation curated with it. The name ``curate`` gives is
    taken only when it can be this conversation's alone: not when another conversation's own
    id is that name, and not when the run holds ``curate``'s numbered names beside it (``a/b``
    and ``a_b`` both clean to ``a_b``; whichever came first got it, the other ``a_b-2``)."""
    from ..traces.matching import split_run

    if conversation_id in verdicts:
        return conversation_id, None
    cleaned = _case_id(conversation_id, set())
    if cleaned in verdicts:
        numbered = _case_id(conversation_id, {cleaned})
        if cleaned in given or numbered in verdicts:
            return None, (
                f"{conversation_id} would be case {cleaned}, which another conversation's id "
                f"also names{f' (and {numbered} is there too)' if numbered in verdicts else ''}: "
                "which verdict is its own cannot be told"
            )
        return cleaned, None
    base, _ = split_run(conversation_id)
    if base in verdicts:
        return base, None
    return None, None


def sources_path(output: Path) -> Path:
    """``good.evalset.json`` -> ``good.evalset.sources.json``."""
    return output.with_name(output.name.removesuffix(".json") + SOURCES_SUFFIX)
