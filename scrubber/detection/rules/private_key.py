"""Private keys: PEM blocks (`-----BEGIN … PRIVATE KEY-----`, RFC 7468), OpenSSH and PGP
private key blocks, PuTTY `.ppk` files, and PEM keys that were base64-encoded once more
(kubeconfig `client-key-data`, Kubernetes secrets).

A key reaches a transcript in many shapes: as a file read by Claude (each line behind a
line-number prefix, `     2→MIIE…` or `2\tMIIE…`), inside a JSON string where newlines are the
two characters `\\n` (a GCP service-account key, or a torn last line scanned raw), with its END
line cut off. The secret is the body between the armour lines: the BEGIN and END lines stay, so
a reader still sees that a key was there. A block whose body does not look like base64 (code
that mentions the armour, a `<your key here>` placeholder) is not reported.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext, SourceKind
from scrubber.detection.finding import Hit
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_START

KIND = "private-key"
_REFERENCE = (
    "RFC 7468 (textual encodings: PRIVATE KEY, ENCRYPTED PRIVATE KEY), RFC 1421 (RSA/EC "
    "PRIVATE KEY with Proc-Type/DEK-Info headers), OpenSSH PROTOCOL.key, RFC 4880 §6.2 (PGP "
    "PRIVATE KEY BLOCK); gitleaks rule private-key; detect-secrets PrivateKeyDetector"
)

# Armour lines (five dashes each side): `BEGIN RSA PRIVATE KEY`, `BEGIN OPENSSH PRIVATE KEY`, `BEGIN PGP
# PRIVATE KEY BLOCK`, and the four-dash SSH2 variant `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`.
_LABEL = r"(?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?"
_BEGIN = re.compile(r"-{4,5} ?BEGIN " + _LABEL + r" ?-{4,5}")
_END = re.compile(r"-{4,5} ?END " + _LABEL + r" ?-{4,5}")
_MAX_BODY = 64_000  # a 16384-bit RSA key is about 12 KB of base64; PGP blocks can be larger
_MIN_BASE64 = 32
_MIN_TORN_BASE64 = 16

# What separates body lines: real newlines, JSON escapes (`\n`, or `\\n` once more escaped),
# and the line-number prefix Claude Code's Read tool puts before each line.
_NOISE = r"(?:\s|\\{1,3}[nrt]|\d{1,7}→|\d{1,7}\t)"
_LEADING_NOISE = re.compile(_NOISE + r"*")
_TRAILING_NOISE = re.compile(_NOISE + r"*$")
_STRIP_NOISE = re.compile(_NOISE + r"+")
_SEPARATOR_CHARS = frozenset("\\nrt→")  # with whitespace and digits: every character `_NOISE` holds
# RFC 1421 / RFC 4880 armour headers inside a block (`Proc-Type: 4,ENCRYPTED`, `Version: …`).
_HEADER = re.compile(r"[A-Z][A-Za-z-]{1,30}: [^\r\n\\]{0,200}")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")

# A torn block (no END line): the body is the run of lines that look like base64 or headers.
_LINE_BREAK = r"(?:\r?\n|(?:\\{1,3}r)?\\{1,3}n)"
_TORN_LINE = re.compile(
    _LINE_BREAK
    + r"(?:[ \t]*\d{1,7}(?:→|\t))?[ \t]*(?P<body>[A-Za-z0-9+/]{4,200}={0,2}|"
    + r"[A-Z][A-Za-z-]{1,30}: [^\r\n\\]{0,200})?[ \t]*"
    + r"(?=\r?\n|\\{1,3}[rn]|\\?[\"'`,;)\]}]|$)"
)


_BASE64_BYTES = bytes(sorted(ord(c) for c in _BASE64_CHARS))
# What `\s` matches among ASCII characters (`re`'s `\s` is `str.isspace`).
_ASCII_SPACE = bytes(b for b in range(128) if chr(b).isspace())


def _base64_share(body: str) -> tuple[int, int]:
    """(base64 characters, other characters) of a body once separators and headers are gone."""
    if ": " in body:  # every header holds one
        body = _HEADER.sub("", body)
    if body.isascii() and "\\" not in body and "\t" not in body:
        # Then the only separators are whitespace (the others need a backslash, a tab or an
        # arrow), which is not base64: count with two C passes instead of a loop per character.
        data = body.encode("ascii")
        other = data.translate(None, _BASE64_BYTES)
        return len(data) - len(other), len(other.translate(None, _ASCII_SPACE))
    core = _STRIP_NOISE.sub("", body)
    if core.isascii():  # one C pass, as above
        good = len(core) - len(core.encode("ascii").translate(None, _BASE64_BYTES))
    else:
        good = sum(1 for c in core if c in _BASE64_CHARS)
    return good, len(core) - good


def _noise_tail_from(text: str, first: int, stop: int) -> int:
    """Where the separators that end `text[first:stop]` start (`_TRAILING_NOISE`'s match):
    that regex, searched from `first`, tries every position of a key's body; no match can
    start before the last character that no separator holds, so the search starts after it."""
    at = stop
    while at > first and (
        text[at - 1] in _SEPARATOR_CHARS or text[at - 1].isspace() or text[at - 1].isdecimal()
    ):
        at -= 1
    trail = _TRAILING_NOISE.search(text, at, stop)
    return trail.start() if trail else stop


@dataclass(frozen=True, slots=True)
class PemPrivateKeyRule:
    """A PEM/OpenSSH/PGP private key block, complete or torn, plain or JSON-escaped."""

    name: str = "pem-private-key"
    kind: str = KIND
    anchors: tuple[str, ...] = ("private key",)
    public_prefix: str = "-----BEGIN "  # the armour line names the format, not the key
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = _REFERENCE

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        pos = 0
        used_ends: set[int] = set()
        while True:
            begin = _BEGIN.search(text, pos)
            if begin is None:
                break
            body_start = begin.end()
            limit = min(len(text), body_start + _MAX_BODY)
            next_begin = _BEGIN.search(text, body_start, limit)
            stop = next_begin.start() if next_begin else limit
            end = _END.search(text, body_start, stop)
            if end is not None:
                used_ends.add(end.start())
                span = self._between(text, body_start, end.start())
                pos = end.end()
            else:
                span = self._torn(text, body_start, stop)
                pos = span[1] if span else body_start
            if span is not None:
                yield Hit(span[0], span[1], self.kind, self.name)
        # The tail of a key without its head: a progress update shows only the last lines of
        # a command's output, so `cat id_rsa` can leave body lines and the END line alone.
        for end in _END.finditer(text):
            if end.start() not in used_ends:
                span = self._headless(text, end.start())
                if span is not None:
                    yield Hit(span[0], span[1], self.kind, self.name)

    @staticmethod
    def _between(text: str, start: int, stop: int) -> tuple[int, int] | None:
        lead = _LEADING_NOISE.match(text, start, stop)
        first = lead.end() if lead else start
        last = _noise_tail_from(text, first, stop)
        if last <= first:
            return None
        good, bad = _base64_share(text[first:last])
        if good < _MIN_BASE64 or bad * 10 > good:
            return None
        return first, last

    @staticmethod
    def _torn(text: str, start: int, stop: int) -> tuple[int, int] | None:
        first = last = -1
        pos = start
        base64_seen = 0
        while pos < stop:
            line = _TORN_LINE.match(text, pos, stop)
            if line is None or line.end() == pos:
                break
            body = line.group("body")
            if body:
                if first < 0:
                    first = line.start("body")
                last = line.end("body")
                if not _HEADER.fullmatch(body):
                    base64_seen += len(body)
            pos = line.end()
        if first < 0 or base64_seen < _MIN_TORN_BASE64:
            return None
        return first, last

    @staticmethod
    def _headless(text: str, end_at: int) -> tuple[int, int] | None:
        """Body lines right before an END line that has no BEGIN line."""
        window_start = max(0, end_at - _MAX_BODY)
        # (start, end) of each line in the window, the END line's own prefix last.
        lines: list[tuple[int, int]] = []
        line_start = window_start
        for brk in _LINE_BREAK_RE.finditer(text, window_start, end_at):
            lines.append((line_start, brk.start()))
            line_start = brk.end()
        lines.append((line_start, end_at))
        first = last = -1
        base64_seen = 0
        for start, stop in reversed(lines):
            line = _HEADLESS_LINE.fullmatch(text, start, stop)
            if line is None:
                break  # the first line that is not body (or the cut-off start of the window)
            if line.group("body"):
                if last < 0:
                    last = line.end("body")
                first = line.start("body")
                base64_seen += len(line.group("body"))
        if first < 0 or base64_seen < _MIN_TORN_BASE64:
            return None
        return first, last


_LINE_BREAK_RE = re.compile(_LINE_BREAK)
_HEADLESS_LINE = re.compile(
    r"(?:[ \t]*\d{1,7}(?:→|\t))?[ \t]*(?P<body>[A-Za-z0-9+/]{4,200}={0,2})?[ \t]*"
)

PEM_PRIVATE_KEY = PemPrivateKeyRule()


# Any armour line: which block a run of base64 lines belongs to.
_ANY_BEGIN = re.compile(r"-{4,5} ?BEGIN ([A-Z0-9 ]{1,40}?) ?-{4,5}")
_BODY_RUN = re.compile(
    r"(?:(?:^|(?<=\n)|(?<=\\n))(?:[ \t]*\d{1,7}(?:→|\t))?[ \t]*[A-Za-z0-9+/]{40,200}={0,2}[ \t]*"
    r"(?:\r?\n|(?:\\r)?\\n|$)){2,}"
)
# Where a line starts after the first: after a newline or a JSON-escaped `\n`. A run starts
# only at a line start, so it is tried there alone (a search would try every character).
_AFTER_LINE_BREAK = re.compile(r"\n|\\n")


def _body_runs(text: str) -> Iterator[re.Match[str]]:
    """`_BODY_RUN.finditer(text)`, tried only where a line starts (the same matches)."""
    starts = sorted({0, *(brk.end() for brk in _AFTER_LINE_BREAK.finditer(text))})
    pos = 0
    for start in starts:
        if start < pos:
            continue
        run = _BODY_RUN.match(text, start)
        if run is not None:
            yield run
            pos = run.end()


@dataclass(frozen=True, slots=True)
class KeyFileBodyRule:
    """In text known to come from a private key file, base64 body lines without their armour:
    a progress update shows only a few lines of `cat id_rsa` output, with neither BEGIN nor END.
    A run inside a certificate or public key block is left alone."""

    name: str = "private-key-file-body"
    kind: str = KIND
    anchors: tuple[str, ...] = ()
    context_only: bool = True
    reference: str = _REFERENCE

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        if context.source is not SourceKind.PRIVATE_KEY_FILE:
            return
        # Every armour line once (each run looks back to the last one before it; armour lines
        # hold no line break, so none runs across a run's start).
        armours = [(m.end(), m.group(1)) for m in _ANY_BEGIN.finditer(text)]
        ends = [end for end, _ in armours]
        for run in _body_runs(text):
            before = bisect.bisect_right(ends, run.start())
            if before and "PRIVATE" not in armours[before - 1][1]:
                continue  # the body of a certificate or a public key
            lead = _LEADING_NOISE.match(text, run.start(), run.end())
            start = lead.end() if lead else run.start()
            end = _noise_tail_from(text, start, run.end())
            # A body's last line is as short as what is left of it (`VYM=`): a run of full
            # lines ends before it, and it is the key's too.
            last = _LAST_BODY_LINE.match(text, run.end())  # a run ends with a line break
            if last is not None and _body_tail(last.group("body")):
                end = last.end("body")
            if end > start:
                yield Hit(start, end, self.kind, self.name)


# A body's last, shorter line, on its own (up to a line break, a string's end or a quote).
_LAST_BODY_LINE = re.compile(
    r"(?:[ \t]*\d{1,7}(?:→|\t))?[ \t]*(?P<body>[A-Za-z0-9+/]{1,39}={0,2})[ \t]*"
    r"(?=\r?\n|(?:\\r)?\\n|$|\\?[\"'`])"
)

# A word a command prints after the output (`EOF`, `Done`, `ok`): letters, capitalised at most.
_PLAIN_WORD = re.compile(r"[A-Z]?[a-z]*|[A-Z]+")


def _body_tail(line: str) -> bool:
    """Whether a short line after a body is what is left of it, not a word printed after it.

    Padding (`VYM=`) says base64. Unpadded, it is random: a digit, a `+` or `/`, or case mixed
    past a capital. (Its length says nothing on its own: an OpenSSH body wrapped at 70 ends
    anywhere.) A word of plain letters could be either; it is taken for a word: over-redacting
    a command's `Done` helps no one, and missing such a tail leaves a few letters."""
    return line.endswith("=") or _PLAIN_WORD.fullmatch(line) is None


KEY_FILE_BODY = KeyFileBodyRule()


def _not_an_encoded_private_key(value: str) -> bool:
    head = value[:120]
    head = head[: len(head) - len(head) % 4]
    try:
        decoded = base64.b64decode(head)
    except (binascii.Error, ValueError):
        return True
    return b"PRIVATE KEY" not in decoded


# base64("-----BEGIN ") is `LS0tLS1CRUdJTi`: a PEM file stored base64-encoded, as kubeconfig
# `client-key-data` and Kubernetes Secret `data` values are. Certificates decode to
# `BEGIN CERTIFICATE` and are rejected.
ENCODED_PRIVATE_KEY = PatternRule(
    name="base64-pem-private-key",
    kind=KIND,
    pattern=WORD_START + r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,40000}={0,2}(?![A-Za-z0-9+/=])",
    anchors=("ls0tls1crudjti",),
    reference="kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig "
    "(client-key-data is base64 PEM); RFC 7468",
    reject=_not_an_encoded_private_key,
)

# PuTTY .ppk: the private part follows `Private-Lines: N` and ends before `Private-MAC:`
# (PuTTY manual, appendix C "PPK file format").
PUTTY_PRIVATE_KEY = PatternRule(
    name="putty-private-key",
    kind=KIND,
    pattern=r"Private-Lines: ?\d{1,4}(?:\r?\n|\\{1,3}n)(?:[ \t]*\d{1,7}(?:→|\t))?"
    r"(?P<secret>[A-Za-z0-9+/=][\s\S]{0,16000}?)(?:\r?\n|\\{1,3}n)"
    r"(?=(?:[ \t]*\d{1,7}(?:→|\t))?Private-(?:MAC|Hash):)",
    anchors=("private-lines:",),
    reference="PuTTY manual, appendix C (PPK file format)",
)

RULES = (PEM_PRIVATE_KEY, ENCODED_PRIVATE_KEY, PUTTY_PRIVATE_KEY, KEY_FILE_BODY)
