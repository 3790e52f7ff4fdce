"""What a detector reports, and what a scan reports.

A `Hit` is a secret inside one string: where it starts and ends (code points, [start, end)) and
what kind it is. A `Finding` places a hit in a file: line, JSON Pointer, record, the tool it came
from, and a keyed fingerprint. Neither holds the secret's value, so neither can leak it through a
repr, a log line or an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, order=True)
class Hit:
    start: int
    end: int
    kind: str  # kebab-case, e.g. "aws-access-key", "dotenv-value"
    detector: str

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Finding:
    file: str
    line: int  # 1-based, as editors count
    json_path: str | None  # RFC 6901 pointer into the line's object; None for non-JSON lines
    span: tuple[int, int]  # [start, end) in code points of the decoded string
    kind: str
    detector: str
    fingerprint: str  # keyed HMAC of the value, hex, never the value
    session_id: str | None = None
    record_uuid: str | None = None
    source: str | None = None  # e.g. "Read(/app/.env)"; any secret in it already replaced
    in_thinking: bool = False
    length: int = field(default=0)  # the secret's length in code points
    prefix: str = ""  # a known public prefix of the token ("ghp_"), for masked previews only
    # Found as a copy of a value a detector found elsewhere in the session (known_values.py):
    # no detector would have seen it here alone.
    by_value: bool = False
    # Held by a JSON object key (detection/key_scan.py), which no redaction may change:
    # `json_path` then names the object that holds the key, `span` is within the key.
    in_key: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields (findings come back from forked scans by the thousand): the
        # state pickling dataclasses give a frozen slotted class costs several times more.
        return (Finding, tuple(getattr(self, name) for name in self.__slots__))


def resolve_overlaps(hits: list[Hit]) -> list[Hit]:
    """Merge overlapping hits so that each character is covered once.

    Two detectors often see the same secret (ours and detect-secrets'), or one sees part of what
    another sees whole (`password=` and the connection string around it). The widest hit wins
    its region, and overlapping hits are joined, so redaction removes the whole secret and
    nothing is replaced twice.
    """
    if len(hits) < 2:
        return list(hits)
    ordered = sorted(hits, key=lambda h: (h.start, -h.end))
    merged: list[Hit] = [ordered[0]]
    for hit in ordered[1:]:
        last = merged[-1]
        if hit.start < last.end:
            if hit.end > last.end:
                # Keep the kind of the wider piece: it usually names the whole thing better.
                wider = hit if hit.length > last.length else last
                merged[-1] = Hit(last.start, hit.end, wider.kind, wider.detector)
            continue
        merged.append(hit)
    return merged
