"""``--traces``: files and folders, or ``emulator:`` for what the emulator received over OTLP."""

from __future__ import annotations

from collections.abc import Sequence

from .._config import shown_url
from ..formats.load import Kind
from ..target import Target
from ..traces import Conversation, conversations_from
from ._common import UsageError

#: The ``--traces`` source that reads the spans and logs exported to the emulator.
EMULATOR_SOURCE = "emulator:"


def wants_emulator(entries: Sequence[str] | None) -> bool:
    return any(entry == EMULATOR_SOURCE for entry in entries or [])


def trace_sources(
    entries: Sequence[str] | None, target: Target | None
) -> list[str | Conversation] | None:
    """The ``--traces`` entries, with ``emulator:`` replaced by the conversations it recorded."""
    if not entries:
        return None
    out: list[str | Conversation] = []
    for entry in entries:
        if entry != EMULATOR_SOURCE:
            out.append(entry)
            continue
        if target is None or target.kind == "service":
            raise UsageError(
                "--traces emulator: reads what an emulator received over OTLP; pass --endpoint "
                "(or set PLATFORM_EVAL_EMULATOR_HOST) to the emulator your agent exported to"
            )
        exports = target.client.recorded_telemetry()
        where = f"emulator {shown_url(target.client.api_endpoint)}"
        if not exports:
            raise UsageError(
                f"--traces emulator: the {where} has received no traces. Point your agent's "
                f"exporter at it (OTEL_EXPORTER_OTLP_ENDPOINT={target.client.api_endpoint}), "
                "run the agent, then evaluate"
            )
        out += conversations_from(exports, Kind.OTLP_TRACES, where)
    return out
