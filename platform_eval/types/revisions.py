"""Revisions: immutable snapshots of a set and of its items, for runs that can be reproduced.

A set revision freezes the set's ``displayName`` and ``metadata`` and, for each of its items,
an item revision holding a copy of the item, payload included. A run on a set revision
(``dataSource.evaluationSetRevision``) evaluates those copies, whatever happens to the set and
its items afterwards.
"""

from __future__ import annotations

from ._base import Timestamp, WireModel, output_only
from .items import EvaluationItem
from .sets import EvaluationSet


class EvaluationItemRevision(WireModel):
    """``evaluationItems/{item}/revisions/{revision}``: one item as it was."""

    name: str | None = None
    create_time: Timestamp | None = output_only()
    #: The item as it was; ``snapshot.name`` names the item it was taken from.
    snapshot: EvaluationItem | None = output_only()

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None


class EvaluationSetRevision(WireModel):
    """``evaluationSets/{set}/revisions/{revision}``: a set and its items as they were."""

    name: str | None = None
    create_time: Timestamp | None = output_only()
    #: The set as it was: ``snapshot.name`` names the set, and ``snapshot.evaluationItems``
    #: holds item revision names instead of item names.
    snapshot: EvaluationSet | None = output_only()

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None
