"""Which values share the anchors the by-value pass looks for, counted per group: what
`ValueIndex.copies_all_found` needs to tell, from a line's bytes alone, that every copy on it
is a finding.

A value's start anchors (of its start piece, or of the whole value when it has none) and its
end anchors (of its end piece) are grouped apart: values that share an anchor are one group
(every 2048-bit RSA key's body starts alike), for an anchor seen on a line may be any of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

_NONE = -1


class AnchorGroups:
    """For each anchor, its start group and its end group; for each value, the same."""

    def __init__(
        self,
        values: int,
        anchors: Sequence[bytes],
        starts: Mapping[bytes, Iterable[int]],
        ends: Mapping[bytes, Iterable[int]],
    ) -> None:
        start_of = _groups(values, starts.values())
        end_of = _groups(values, ends.values())
        has_end = {n for members in ends.values() for n in members}
        # By value: (start group, end group or _NONE); by anchor: the same.
        self._value = [(start_of[n], end_of[n] if n in has_end else _NONE) for n in range(values)]
        self._anchor = [
            (
                start_of[next(iter(starts[a]))] if starts.get(a) else _NONE,
                end_of[next(iter(ends[a]))] if ends.get(a) else _NONE,
            )
            for a in anchors
        ]

    def all_found(self, events: Iterable[int], found: Mapping[int, int]) -> bool:
        """Whether the anchors seen (`events`: anchor numbers, one per occurrence) are, in each
        group, no more than the findings of that group's values (`found`: value number -> how
        many). Every group seen is held to it, not only those of the values asked about: the
        values a line is searched for are among those whose anchors it holds, and a group of
        others' only ever makes the answer no."""
        seen_starts: dict[int, int] = {}
        seen_ends: dict[int, int] = {}
        for anchor in events:
            start, end = self._anchor[anchor]
            if start != _NONE:
                seen_starts[start] = seen_starts.get(start, 0) + 1
            if end != _NONE:
                seen_ends[end] = seen_ends.get(end, 0) + 1
        found_starts: dict[int, int] = {}
        found_ends: dict[int, int] = {}
        for number, count in found.items():
            start, end = self._value[number]
            found_starts[start] = found_starts.get(start, 0) + count
            if end != _NONE:
                found_ends[end] = found_ends.get(end, 0) + count
        return all(n <= found_starts.get(g, 0) for g, n in seen_starts.items()) and all(
            n <= found_ends.get(g, 0) for g, n in seen_ends.items()
        )


def _groups(values: int, sharing: Iterable[Iterable[int]]) -> list[int]:
    """Each value's group: values named together (by one anchor) are one group, and so on
    through every anchor they share (union-find, by the smallest number)."""
    parent = list(range(values))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for members in sharing:
        first = None
        for n in members:
            if first is None:
                first = root(n)
                continue
            other = root(n)
            if other != first:
                parent[max(other, first)] = min(other, first)
                first = min(other, first)
    return [root(n) for n in range(values)]
