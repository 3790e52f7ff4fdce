"""Files searched for known values in blocks of whole lines (known_values.ValueIndex finds
where values may occur in each block): the by-value pass reads a file once, a read's whole
lines at a time, uncopied."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from scrubber.detection.known_values import ValueIndex

_BLOCK = 1 << 20  # files are searched in blocks of whole lines of about this many bytes


@dataclass(slots=True)
class Block:
    """Whole lines of a file, `data[lo:hi]`, with where values may occur in them (offsets in
    `data`: a block is often the middle of what one read returned, not a copy of it)."""

    data: bytes
    offset: int  # where `data[lo]` is in the file
    candidates: list[tuple[int, int, frozenset[int]]] = field(default_factory=list)
    lo: int = 0
    hi: int | None = None

    def view(self, start: int | None = None, end: int | None = None) -> memoryview:
        """Its bytes from `start` to `end` (offsets in `data`; its edges by default)."""
        low = self.lo if start is None else start
        high = (len(self.data) if self.hi is None else self.hi) if end is None else end
        return memoryview(self.data)[low:high]

    def file_offset(self, position: int) -> int:
        return self.offset + position - self.lo


def blocks(stream: IO[bytes], index: ValueIndex, end: int | None = None) -> Iterator[Block]:
    """A file from its current position (to `end`, a line start, when given) in blocks of
    whole lines, each with its candidate lines; every byte is in exactly one block. A read's
    whole lines are one block, uncopied; a line across reads is a block of its own. Lines are
    not counted here (see usecases.audit_copies.LineNumbers): most files hold no copy."""
    offset = stream.tell()
    left = None if end is None else end - offset  # bytes still to read, when bounded
    rest: list[bytes] = []  # the start of a line that runs into the next read
    while True:
        chunk = stream.read(_BLOCK if left is None else max(0, min(_BLOCK, left)))
        if left is not None:
            left -= len(chunk)
        if not chunk:
            if rest:
                data = b"".join(rest)
                yield Block(data, offset, index.line_candidates(data))
            return
        first = chunk.find(b"\n") + 1
        if first == 0:
            rest.append(chunk)
            continue
        lo = 0
        if rest:
            head = b"".join([*rest, chunk[:first]])
            yield Block(head, offset, index.line_candidates(head))
            offset += len(head)
            rest, lo = [], first
        cut = chunk.rfind(b"\n") + 1
        if cut > lo:
            yield Block(chunk, offset, index.line_candidates(chunk, lo, cut), lo, cut)
            offset += cut - lo
        if cut < len(chunk):
            rest = [chunk[cut:]]
