"""``PlanError``: an evaluation that cannot be as asked, in the plan's words. Its own module,
below the plan and the agent job that both raise it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class PlanError(ValueError):
    """An evaluation that cannot be as asked (no metric, a threshold of no metric of the run,
    two sources of candidates, what the agent's place cannot do): said before anything is read
    from a target or uploaded. Its message names the plan's fields (``fields``: a field's name
    -> the value given); the command line says it with its own flags (``render``), exit 2."""

    def __init__(self, message: str, **fields: Any) -> None:
        #: The message, with ``{field}`` where a field given is named.
        self.template = message
        self.fields = fields
        super().__init__(self.render())

    def render(self, named: Callable[[str, Any], str] | None = None) -> str:
        """The message, each field said by ``named(field, value)`` (``field=value`` by
        default)."""
        said = named or (lambda name, value: name if value is True else f"{name}={value!r}")
        return self.template.format(**{k: said(k, v) for k, v in self.fields.items()})
