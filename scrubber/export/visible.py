"""Text an export shows, made safe to print on a terminal (`scrub export ID` writes to stdout)
and to read in an editor or a browser: every control character but newline and tab is shown
as its escape, `\\x1b` for ESC, so a transcript or a folder name that holds `ESC[2J` (clear
the screen) or `ESC]0;…BEL` (set the window title) prints as those characters, never acts.
Shown this way: C0 (U+0000 to U+001F, but for tab and newline), DEL, C1 (U+0080 to U+009F:
U+009B is CSI to many terminals) as `\\xNN`, and the bidirectional embeddings, overrides and
isolates (U+202A to U+202E, U+2066 to U+2069), which reorder what is shown around them, as
`\\uNNNN`. A CR LF pair is a line break and becomes one newline; a lone CR is shown as `\\x0d`
(it would move the cursor back over the line). A literal backslash is left as it is: the
escapes are for reading, not for decoding back.
"""

from __future__ import annotations

_KEPT = frozenset({"\n", "\t"})
_CONTROLS = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in _KEPT]
_BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
_SHOWN = str.maketrans(
    {c: f"\\x{ord(c):02x}" for c in _CONTROLS} | {c: f"\\u{ord(c):04x}" for c in _BIDI}
)


def visible(text: str) -> str:
    """`text` with its control characters shown as escapes (see the module's docstring)."""
    return text.replace("\r\n", "\n").translate(_SHOWN)
