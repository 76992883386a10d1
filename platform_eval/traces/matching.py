"""Pairing recorded conversations with eval cases: explicitly, or by the first user message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from ..errors import PlatformEvalError
from ..formats.adk import EvalCase
from ._conversation import Conversation


def _key(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def _case_first_message(case: EvalCase) -> str | None:
    if case.conversation:
        parts = case.conversation[0].user_content.parts or []
        return "\n".join(p.text for p in parts if p.text)
    if case.conversation_scenario:
        return case.conversation_scenario.starting_prompt
    return None


class AmbiguousPairingError(PlatformEvalError):
    """Traces that several eval cases could claim by their first message, and no id pairs."""


@dataclass(frozen=True)
class Match:
    eval_id: str
    conversation: Conversation


@dataclass
class MatchReport:
    matches: list[Match] = field(default_factory=list)
    unmatched_cases: list[str] = field(default_factory=list)
    unmatched_conversations: list[str] = field(default_factory=list)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    #: Conversations whose first message is that of several cases (and that no id names):
    #: conversation id -> those cases. Never paired with all of them.
    shared_messages: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [f"{len(self.matches)} matched"]
        if self.unmatched_cases:
            lines.append(f"eval cases without a trace: {', '.join(self.unmatched_cases)}")
        if self.unmatched_conversations:
            lines.append(f"traces without an eval case: {', '.join(self.unmatched_conversations)}")
        for eval_id, ids in self.ambiguous.items():
            lines.append(f"{eval_id}: several traces match ({', '.join(ids)}); all are kept")
        return "\n".join(lines)


def case_session_id(eval_id: str) -> str:
    """The session id that names an eval case: the eval id where a session can carry it
    whole, else the id percent-encoded (``%20``). google-adk strips a session id, so an id that
    is empty or has white space at either end would lose what made it its case's, and an id
    holding ``%`` is encoded too so that no encoded id is another case's plain one."""
    if eval_id and eval_id == eval_id.strip() and "%" not in eval_id:
        return eval_id
    return quote(eval_id, safe="") or "%"


def _case_of_session(session_id: str) -> str:
    """The eval id ``case_session_id`` gave ``session_id``."""
    return "" if session_id == "%" else unquote(session_id)


def split_run(conversation_id: str) -> tuple[str, int | None]:
    """``case#3`` -> (``case``, 3), as ``run --agent`` names the n-th session of a case; any
    other id -> (the id, None)."""
    base, sep, run = conversation_id.rpartition("#")
    if sep and run.isdigit():
        return base, int(run)
    return conversation_id, None


def _named_case(conversation: Conversation, case_ids: set[str]) -> str | None:
    """The eval case a conversation's id (or the session it was) names: the id itself, or
    ``<eval id>#<n>``, the eval id as ``case_session_id`` writes it."""
    for given in (conversation.id, conversation.session_id):
        if given is None:
            continue
        base, run = split_run(given)
        for candidate in (given, *((base,) if run is not None else ())):
            for named in (candidate, _case_of_session(candidate)):
                if named in case_ids:
                    return named
    return None


def match_conversations(
    cases: Sequence[EvalCase],
    conversations: Sequence[Conversation],
    mapping: Mapping[str, str] | None = None,
) -> MatchReport:
    """Matches by ``mapping`` (conversation id -> eval id) when given; else a conversation
    whose id is an eval case's id (or ``<eval id>#<n>``, as ``run --agent`` names the sessions
    of repeated runs) matches that case, and any other its case by first user message.

    The message comparison trims and folds case and whitespace. A case several traces match
    keeps all of them (several candidates), and is listed as ambiguous. A conversation whose
    first message several cases share is paired with none (``shared_messages``): the caller
    names them and asks for a mapping. One pass over the conversations: linear in their number.
    """
    report = MatchReport()
    case_ids = [c.eval_id for c in cases]
    known = set(case_ids)
    by_message: dict[str, list[str]] = {}
    for case in cases:
        by_message.setdefault(_key(_case_first_message(case)), []).append(case.eval_id)
    matched_cases: dict[str, list[str]] = {}
    for conversation in conversations:
        if mapping is not None:
            eval_id = mapping.get(conversation.id)
            targets = [eval_id] if eval_id in known else []
        elif (named := _named_case(conversation, known)) is not None:
            targets = [named]
        else:
            targets = by_message.get(_key(conversation.first_user_message), [])
            if len(targets) > 1:
                # A question several cases ask: pairing it with each would be a cross product.
                report.shared_messages[conversation.id] = targets
                continue
        if not targets:
            report.unmatched_conversations.append(conversation.id)
            continue
        for eval_id in targets:
            assert eval_id is not None
            report.matches.append(Match(eval_id, conversation))
            matched_cases.setdefault(eval_id, []).append(conversation.id)
    report.unmatched_cases = [c for c in case_ids if c not in matched_cases]
    report.ambiguous = {k: v for k, v in matched_cases.items() if len(v) > 1}
    return report
