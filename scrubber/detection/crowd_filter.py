"""Which of many candidate values can have a copy in a text, told by one literal search.

Values that share a start (the body of every PKCS#8 RSA key begins with the same 34
characters) are all candidates of a line that holds one of them: the line search of
`known_values` finds them by that start. `ValueIndex.find` then looks at each candidate in turn:
a test for its distinct piece (whole copies), for its end piece (cut copies that hold it), for
its start piece. On a file dense with keys a string had hundreds of candidates, each a few
tests in Python. Here the pieces those tests look for, of every value in such a crowd (a head
group of `cut_copies.HeadGroups`), are one literal database: one search of the text names the
values one of whose pieces it holds, and the others are dropped before the loop. A value
dropped has no copy there, by the same tests the loop makes:

- a whole copy holds the value's distinct piece (`distinct_probe`): not in the text, none;
- a cut copy holding the end piece needs the end piece in the text;
- one holding a start piece that no group shares needs that piece in the text;
- one holding a group's shared start is among those `HeadGroups.may_copy` names (the caller
  adds them: they are told by the text at each place of the start, not by a literal).

A value without a distinct piece is never dropped. Substrings of a text are substrings of its
UTF-8 bytes and back (the encoding is self-synchronizing, lone surrogates included with
`surrogatepass`), so the byte search answers what `in` would.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from scrubber.detection.cut_copies import CutForm
from scrubber.detection.prefilter import load_hyperscan
from scrubber.detection.prefilter_literals import LiteralEvents, literal_events

# Fewer candidates than this are tested one by one: the search costs more than a few tests.
CROWD_MIN = 16


class CrowdFilter:
    """The pieces of the values in a crowd (see the module), in one literal search."""

    def __init__(
        self,
        probes: Sequence[str | None],
        cuts: Sequence[Sequence[CutForm]],
        grouped_heads: Collection[str],
        *,
        engine: str = "auto",
    ) -> None:
        """`engine` as for `literal_events`; without hyperscan there is no filter (the
        pure-Python search looks for each literal on its own: more than the tests it saves)."""
        self._matcher: LiteralEvents | None = None
        owners: dict[bytes, list[int]] = {}
        members: set[int] = set()
        for number, forms in enumerate(cuts):
            if not any(cut.head in grouped_heads for cut in forms if cut.head):
                continue
            probe = probes[number]
            if probe is None:
                continue  # no distinct piece: always looked at
            members.add(number)
            pieces = {probe}
            for cut in forms:
                if cut.tail:
                    pieces.add(cut.tail)
                if cut.head and cut.head not in grouped_heads:
                    pieces.add(cut.head)
            for piece in pieces:
                owners.setdefault(piece.encode("utf-8", "surrogatepass"), []).append(number)
        self.members = frozenset(members)
        self._owners = list(owners.values())
        if owners and engine != "python" and load_hyperscan() is not None:
            self._matcher = literal_events(list(owners), engine="hyperscan")

    def __bool__(self) -> bool:
        return self._matcher is not None

    def narrowed(
        self, text: str, numbers: Sequence[int], also: Iterable[Collection[tuple[int, int]]]
    ) -> list[int]:
        """`numbers` in their order without the crowd's values that can have no copy in
        `text`. `also`: for each shared start the text holds, the (value, form index) that
        `HeadGroups.may_copy` says can have a cut copy there (those are kept)."""
        if self._matcher is None:
            return list(numbers)
        flagged: set[int] = set()
        owners = self._owners
        for literal, _end in self._matcher.events(text.encode("utf-8", "surrogatepass")):
            flagged.update(owners[literal])
        for allowed in also:
            flagged.update(number for number, _ in allowed)
        # Kept: every candidate outside the crowd, and those flagged (set operations and a
        # filter in C: a line holding the start every RSA key shares names thousands).
        keep = flagged.union(set(numbers).difference(self.members))
        return list(filter(keep.__contains__, numbers))
