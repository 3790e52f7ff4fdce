"""Gates: what a string must contain for a detector to have anything to find in it.

A gate is a regex over bytes in the common subset of Python's `re` and hyperscan (no
look-arounds, no back-references), applied case-insensitively unless it says otherwise. It is a
*necessary condition*: wherever the detector could report a hit, its gate matches, both

- in the string itself, UTF-8 encoded (`text`), where the match positions tell the scanner which
  part of a long tool output to hand the detector, and
- in the raw JSONL line that holds the string (`raw`, which defaults to `text`), where a line
  that no gate matches is skipped without being parsed.

The two differ where JSON escaping changes the bytes: a `"` inside a string is `\\"` on the raw
line, a newline is `\\n`, a tab `\\t`. A gate made only of printable ASCII other than `"` and `\\`,
matched by literals and positive classes, needs no raw form. Where a gate must allow for
whitespace or quotes it uses the pieces below, which accept both spellings.

Most detectors need no gate of their own: their anchors (rare literals such as `ghp_`) serve as
gates. The detectors whose anchors are common (`:`, `.`, `token`) declare gates that describe the
token's shape or the assignment around the name, so that a line of ordinary code or JSON no
longer wakes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One character of whitespace as Python's `\s` sees it in decoded text (ASCII whitespace, the
# C1 next-line, no-break and the Unicode spaces, as UTF-8 bytes), or as JSON writes it on a raw
# line (`\n`, `\t`, `\u001c`…).
WS = (
    r"(?:\s|\\[nrtfb]|\\u00[0-9a-fA-F]{2}|\xc2[\x85\xa0]|\xe1\x9a\x80|"
    r"\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80)"
)
# One word character as Python's `\w` sees it in decoded text: ASCII, or any non-ASCII letter
# (a UTF-8 byte of 0x80 and above), or a `\uXXXX` escape on the raw line of an ASCII-only writer.
WORD = r"(?:\w|[\x80-\xff]|\\u[0-9a-fA-F]{4})"
# A quote in decoded text, or on a raw line: `"` is always escaped there (with one or more
# backslashes, when the text itself holds escaped JSON).
QUOTE_TEXT = r"""\\{0,3}["'`]"""
QUOTE_RAW = r"""(?:\\{1,7}"|\\{0,7}['`])"""


@dataclass(frozen=True, slots=True)
class Gate:
    """A necessary condition for a detector's hits (see the module docstring)."""

    text: str
    raw: str | None = None  # the raw-line form, when JSON escaping changes it
    caseless: bool = True
    # Literals one of which every match of the raw form holds, where they are far rarer on a
    # transcript's lines than what the pattern starts with (a credential word such as `pass`,
    # which test logs repeat thousands of times). The hyperscan prefilter then runs this gate
    # only on lines that hold one, in a second small database: such gates were a third of the
    # cost of the first pass. The scanner refuses a declaration it cannot prove
    # (required_literals.py).
    rare: tuple[str, ...] = ()

    @property
    def raw_pattern(self) -> str:
        return self.text if self.raw is None else self.raw


def literal_gate(anchor: str) -> Gate | None:
    """A gate for a lower-case literal anchor: its ASCII prefix (JSON never escapes those
    characters, and a non-ASCII tail may be written as `\\uXXXX`), or None when it has none."""
    prefix = ""
    for ch in anchor:
        if ord(ch) > 127:
            break
        prefix += ch
    if not prefix:
        return None
    if any(ch in {'"', "\\"} or ord(ch) < 0x20 for ch in prefix):
        raise ValueError(f"an anchor must not hold a character JSON escapes: {anchor!r}")
    return Gate(literal_pattern(prefix.encode("ascii")))


def literal_pattern(literal: bytes) -> str:
    """A regex for `literal`, every byte as \\xHH: hyperscan takes NUL-terminated C strings, and
    escapes keep metacharacters literal in both engines."""
    return "".join(f"\\x{byte:02x}" for byte in literal)


_LITERAL = re.compile(r"(?:\\x[0-9a-f]{2})+")


def is_literal_pattern(pattern: str) -> bool:
    """Whether a gate's pattern is one literal, as `literal_pattern` writes it."""
    return _LITERAL.fullmatch(pattern) is not None


def gates_of(detector: object) -> tuple[Gate, ...]:
    """A detector's gates: its own (`gates` attribute), else one per literal anchor."""
    own = getattr(detector, "gates", None)
    if own is not None:
        return tuple(own)
    anchors: tuple[str, ...] = getattr(detector, "anchors", ())
    found = (literal_gate(anchor) for anchor in anchors)
    return tuple(gate for gate in found if gate is not None)
