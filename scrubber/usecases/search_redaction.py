"""How `scrub search` takes secrets out of what it shows (a hit's context, a title, a
project, a tool label, a path): spans replaced by placeholders, the detectors' and every copy
of a value known in the session (detection/known_values.py), never half a placeholder shown."""

from __future__ import annotations

from collections.abc import Sequence

from scrubber.detection.known_values import ValueIndex
from scrubber.detection.placeholder import PLACEHOLDER_RE, make_placeholder
from scrubber.detection.scan import SecretScanner
from scrubber.redaction.project_name import ProjectNames


def replace_spans(
    text: str, spans: Sequence[tuple[int, int, str]], match: tuple[int, int]
) -> tuple[str, tuple[int, int]]:
    """`text` with [start, end) spans replaced (overlapping ones dropped), and where the match
    is now: an edge inside a replaced span moves out to that span's replacement."""
    if not spans:
        return text, match
    kept: list[tuple[int, int, str]] = []
    for low, high, new in sorted(spans):
        if not kept or low >= kept[-1][1]:
            kept.append((low, high, new))

    def moved(position: int, is_end: bool) -> int:
        shift = 0
        for low, high, new in kept:
            if low < position < high or (not is_end and position == low < high):
                return low + shift + (len(new) if is_end else 0)
            if high <= position:
                shift += len(new) - (high - low)
        return position + shift

    pieces: list[str] = []
    cursor = 0
    for low, high, new in kept:
        pieces += (text[cursor:low], new)
        cursor = high
    pieces.append(text[cursor:])
    return "".join(pieces), (moved(match[0], False), moved(match[1], True))


def found_spans(text: str, scanner: SecretScanner) -> list[tuple[int, int, str]]:
    return [(f.hit.start, f.hit.end, f.placeholder) for f in scanner.scan_text(text)]


def copy_spans(text: str, index: ValueIndex, scope: str) -> list[tuple[int, int, str]]:
    if not index:
        return []
    redacted = []
    for start, end, number in index.text_copies(text, scope):
        info = index.info(number)
        redacted.append((start, end, make_placeholder(info.kind, info.fingerprint)))
    return redacted


def clean_text(text: str, scanner: SecretScanner, index: ValueIndex, scope: str) -> str:
    """A short text (a title, a tool label) with every secret and known value replaced."""
    text, _ = replace_spans(text, found_spans(text, scanner), (0, 0))
    text, _ = replace_spans(text, copy_spans(text, index, scope), (0, 0))
    return text


def printable(text: str) -> str:
    """Bytes that were not UTF-8 (read as lone surrogates) shown as U+FFFD, so any terminal
    or JSON encoder can take the text."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def outside_placeholders(text: str, low: int, high: int) -> tuple[int, int]:
    """Move a cut's edges out of any placeholder they fall in (a half placeholder says
    nothing, and looks like damage)."""
    for found in PLACEHOLDER_RE.finditer(text):
        start, end = found.span()
        if start < low < end:
            low = start
        if start < high < end:
            high = end
    return low, high


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return printable(" ".join(text.split()))
    _, cut = outside_placeholders(text, 0, limit)
    return printable(" ".join(text[:cut].split())) + "…"


def clean_path(path: str, scanner: SecretScanner, index: ValueIndex, scope: str) -> str:
    """A path shown (a transcript, an archive, a trash folder) with each part cleaned on its
    own: a token in a project folder's name goes, the rest of the path stays readable."""
    return "/".join(clean_text(part, scanner, index, scope) for part in path.split("/"))


def clean_place(
    path: str,
    project: str,
    names: ProjectNames,
    *,
    scope: str | None,
    cwd: str | None,
    scanner: SecretScanner,
    index: ValueIndex,
) -> str:
    """A path that holds the session's project folder, the folder shown as every report shows
    it (redaction/project_name.py: a token in the cwd is in the folder's name in its folder
    form), each other part cleaned on its own."""
    shown = names.shown(project, scope, (cwd,) if cwd else ())
    return "/".join(
        shown if part == project else clean_text(part, scanner, index, scope or "")
        for part in path.split("/")
    )
