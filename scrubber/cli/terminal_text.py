"""Text from a transcript or a file name, made harmless to print on a terminal.

A transcript is possibly hostile input: a session title, a tool label (`Read(/w/ESC]0;…BEL)`),
a search hit's context or a project folder's name can hold `ESC[2J` (clear the screen),
`ESC]0;…BEL` (set the window title), a bidi override that reorders what is shown, or a line
break that forges a line of the report. Every human-readable report shows such text through
`terminal_safe`, after redaction (a placeholder is printable ASCII, so this never breaks one).
Machine output (`--format json`, SARIF) is left exact: its readers want the true text.

Every character that `str.isprintable()` refuses (C0 and C1 controls with ESC, BEL, DEL, tab
and line breaks, U+2028/U+2029, the bidi embeddings, overrides and isolates, other format
characters, lone surrogates) is shown as its escape: `\\xNN` below U+0100, `\\uNNNN` below
U+10000, else `\\UNNNNNNNN`. Escapes rather than blanks: the reader sees that the text held a
control character (a blank would hide the attempt), the form is the one `scrub export`
(export/visible.py) and Python's `repr` (search's titles) show, and `scrub sessions` keeps
blanking titles only because they fill a fixed-width column. A literal backslash is left as it
is: the escapes are for reading, not for decoding back.
"""

from __future__ import annotations


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(text: str) -> str:
    """`text` (one field or one line of a report) with every non-printable character shown as
    its escape (see the module's docstring)."""
    if text.isprintable():  # nearly always: no copy
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def terminal_lines(lines: list[str]) -> str:
    """The lines of a text report, each made safe on its own, joined by line breaks (ours)."""
    return "\n".join(terminal_safe(line) for line in lines)
