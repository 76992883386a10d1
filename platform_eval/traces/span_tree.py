"""The spans of one trace as a tree: each span's parent, ancestors and descendants."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from .containers import Span


class SpanTree:
    """The spans of one trace, each with its parent and children."""

    def __init__(self, spans: list[Span]) -> None:
        self.by_id = {s.span_id: s for s in spans}
        self.children: dict[str, list[Span]] = defaultdict(list)
        for span in spans:
            if span.parent_id and span.parent_id in self.by_id:
                self.children[span.parent_id].append(span)

    def ancestors(self, span: Span) -> Iterator[Span]:
        seen = set()
        current = self.by_id.get(span.parent_id or "")
        while current is not None and current.span_id not in seen:
            seen.add(current.span_id)
            yield current
            current = self.by_id.get(current.parent_id or "")

    def descendants(self, span: Span) -> list[Span]:
        out, stack, seen = [], list(self.children.get(span.span_id, [])), {span.span_id}
        while stack:
            child = stack.pop()
            if child.span_id in seen:
                continue  # a file whose parents loop
            seen.add(child.span_id)
            out.append(child)
            stack.extend(self.children.get(child.span_id, []))
        return sorted(out, key=lambda s: s.start_ns)

    def depth(self, span: Span) -> int:
        return sum(1 for _ in self.ancestors(span))
