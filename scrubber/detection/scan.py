"""The scanner: which strings of a transcript line to look at, with what context, and what is
found there.

The fast path works on raw line bytes. Most lines of a real transcript hold no secret; a line
whose bytes match none of the detectors' gates (gates.py), that is not a tool call,
and that is not the result of a tool call that read a credential source, is skipped without being
parsed. Other lines are parsed, and every string leaf is scanned with what the record tells us:
the JSON key it sits under, the tool call it belongs to, whether it is thinking text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrubber.detection.context import ClassifiedCall
from scrubber.detection.detector import (
    PLAIN,
    Detector,
    FindsNear,
    ScanContext,
    ShowsPublicPrefix,
    SourceKind,
    needs_preparing,
)
from scrubber.detection.finding import Hit
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.gate_index import Event, GateIndex, RawLineGates, answered_call_ids
from scrubber.detection.kept_hits import kept_hits
from scrubber.detection.key_scan import found_in_keys
from scrubber.detection.placeholder import (
    PLACEHOLDER_PREFIX,
    PLACEHOLDER_RE,
    make_placeholder,
    mask_spans,
    placeholder_spans,
)
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.walk import CallMemory, record_strings
from scrubber.policy.model import Allowlist
from scrubber.transcript.jsonl import (
    Line,
    LineProblem,
    RawLine,
    json_loads_for_strings,
    parse_line,
)

# Keys whose whole value looks like a credential when it is a plausible secret (an MCP tool's
# input `{"api_key": …}`, a parsed config object in toolUseResult).
_SENSITIVE_KEY = re.compile(
    r"(?:^|[_\-.])(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|apikey|private[_\-]?key|"
    r"access[_\-]?key|auth|credentials?|client[_\-]?secret)(?:$|[_\-.])|^(?:password|secret|token)s?$",
    re.IGNORECASE,
)
_MIN_SECRET_LEN = 6
# Strings longer than this are scanned in windows around anchor occurrences. A detector can say
# how far its matches reach from an anchor (`reach_before`, `reach_after`); PEM blocks reach far.
_WINDOW_THRESHOLD = 2048
_LINE_SLACK = 256
# Bounds of `SecretScanner`'s answers by string (characters of the strings held, entries).
_FOUND_CACHE_CHARS = 8_000_000
_FOUND_CACHE_ENTRIES = 50_000


# Public prefixes a masked preview may show (they name the vendor, not the secret), as the
# rules declare them: the whole catalog's, whichever detectors a policy runs.
_PUBLIC_PREFIX = re.compile(
    "^(?:"
    + "|".join(
        rule.public_prefix
        for rule in ALL_RULES
        if isinstance(rule, ShowsPublicPrefix) and rule.public_prefix
    )
    + ")"
)


@dataclass(frozen=True, slots=True)
class FoundSecret:
    """A hit with its keyed fingerprint, length and public prefix; never the value."""

    hit: Hit
    fingerprint: str
    prefix: str = ""

    @property
    def placeholder(self) -> str:
        return make_placeholder(self.hit.kind, self.fingerprint)


# (string, source, file name, whether the JSON key names a secret): what `scan_text` answers by.
_FoundKey = tuple[str, SourceKind, str | None, bool]


@dataclass(frozen=True, slots=True)
class LeafScan:
    """The secrets found in one string of a line."""

    pointer: str | None  # RFC 6901 pointer; None for a line that is not JSON
    found: tuple[FoundSecret, ...]
    in_thinking: bool
    source: str | None  # tool label, already redacted


@dataclass(frozen=True, slots=True)
class LineScan:
    line: Line
    record_uuid: str | None
    session_id: str | None
    leaves: tuple[LeafScan, ...]
    # Secrets in the record's keys, which no redaction may change (detection/key_scan.py):
    # each leaf's pointer names the object that holds the key.
    key_leaves: tuple[LeafScan, ...] = ()


class SecretScanner:
    """Finds secrets in text and in transcript lines. Holds no secret values."""

    def __init__(
        self,
        detectors: Sequence[Detector],
        fingerprinter: Fingerprinter,
        allowlist: Allowlist | None = None,
        *,
        engine: str = "auto",
        cache_dir: Path | None = None,
    ) -> None:
        """`cache_dir`: where the prefilter may keep compiled databases between runs."""
        self.index = GateIndex(detectors, engine, cache_dir)
        self._fingerprinter = fingerprinter
        self._allowlist = allowlist or Allowlist()
        # What `scan_text` found in a string, by everything its answer depends on: transcripts
        # repeat themselves (a tool's output is stored twice in its line, files are read again,
        # a command prints the same thing), and in a dense fleet four in five strings the
        # detectors read had been read before. Bounded, oldest first out; in memory only.
        self._found_by_string: dict[_FoundKey, tuple[FoundSecret, ...]] = {}
        self._found_chars = 0

    # -- text ---------------------------------------------------------------------------

    def scan_text(
        self,
        text: str,
        context: ScanContext = PLAIN,
        line_detectors: frozenset[int] | None = None,
    ) -> tuple[FoundSecret, ...]:
        """Secrets in one string, as exact non-overlapping spans with fingerprints.

        `line_detectors`: the detectors whose gates matched the raw line the string came from
        (a detector no gate woke there cannot match in any of its strings), when known.
        """
        if len(text) < _MIN_SECRET_LEN:
            return ()
        sensitive_key = bool(context.key) and _SENSITIVE_KEY.search(context.key or "") is not None
        if not context.sensitive and line_detectors is not None and not line_detectors:
            # No detector can match here: only the whole-value check may find something.
            return self._scan_string(text, context, line_detectors, sensitive_key)
        # No detector reads the JSON key, and the woken set matters only by being empty:
        # the answer depends on nothing else (the fingerprint key and allowlist are fixed).
        cache_key = (text, context.source, context.file_name, sensitive_key)
        found = self._found_by_string.get(cache_key)
        if found is None:
            found = self._scan_string(text, context, line_detectors, sensitive_key)
            self._remember(cache_key, found)
        return found

    def _remember(self, cache_key: _FoundKey, found: tuple[FoundSecret, ...]) -> None:
        cache = self._found_by_string
        cache[cache_key] = found
        self._found_chars += len(cache_key[0])
        while self._found_chars > _FOUND_CACHE_CHARS or len(cache) > _FOUND_CACHE_ENTRIES:
            oldest = next(iter(cache))
            del cache[oldest]
            self._found_chars -= len(oldest[0])

    def _scan_string(
        self,
        text: str,
        context: ScanContext,
        line_detectors: frozenset[int] | None,
        sensitive_key: bool,
    ) -> tuple[FoundSecret, ...]:
        redacted_before = PLACEHOLDER_PREFIX in text
        masked: list[tuple[int, int]] = []
        if redacted_before:
            masked = placeholder_spans(text)
            text = mask_spans(text, masked)
        hits = self._detector_hits(text, context, line_detectors)
        # A value that already holds a placeholder was redacted: what is left of it (say
        # `SECRET=` before a placeholder) is not the whole value, and flagging it would make a
        # second redaction change the file.
        if sensitive_key and not redacted_before:
            whole = _whole_value_hit(text)
            if whole is not None:
                hits.append(whole)
        if masked:
            # A placeholder stands for a value already taken: no hit may reach into one (the
            # rule that read `password <placeholder>` as a label then took the next word, or
            # the placeholder itself, made every later run change the file again).
            hits = [h for h in hits if not any(s < h.end and h.start < e for s, e in masked)]
        if not hits:
            return ()
        return self._finish(text, hits)

    def _detector_hits(
        self, text: str, context: ScanContext, line_detectors: frozenset[int] | None
    ) -> list[Hit]:
        index = self.index
        detectors = index.detectors
        # (detector index, hit): hits are put in detector order before overlaps are resolved,
        # so that of two equal spans the first detector's kind wins (a vendor's token format
        # over the generic "value of a secret-named variable"), however the hits were found.
        found: list[tuple[int, Hit]] = []
        if context.sensitive:
            # A credential source: every detector reads all of it (the gates describe what a
            # value must look like elsewhere; here the name alone says it is a secret), but
            # for a token pattern or another detector whose matches are the same in any context
            # (`SameInAnyContext`): there its gates still say whether it can match at all. In
            # a dense fleet most of the detectors' time went to credential sources read whole.
            events = index.events(text) if index.context_free else {}
            for i in index.everyone:
                if i in index.context_free and i not in events:
                    continue
                found.extend((i, hit) for hit in detectors[i].find(text, context))
        elif line_detectors is None or line_detectors:
            events = index.events(text)
            for i in index.needs_context.intersection(events):
                del events[i]
            for i in index.near.intersection(events):
                # Detectors that read only around their gate matches, whatever the length.
                detector = detectors[i]
                assert isinstance(detector, FindsNear)  # noqa: S101 - index.near holds only these
                found.extend((i, hit) for hit in detector.find_near(text, context, events.pop(i)))
            if len(text) <= _WINDOW_THRESHOLD:
                for i in events:
                    found.extend((i, hit) for hit in detectors[i].find(text, context))
            else:
                # A long tool output: run each detector only around its gate matches.
                whole: set[int] = set()
                for region_start, region_end, dets in index.windows(events, len(text)):
                    start, end = _widen_to_lines(text, region_start, region_end)
                    piece = text[start:end]
                    for i in dets - whole:
                        hits = list(detectors[i].find(piece, context))
                        if any(
                            (hit.end >= len(piece) and end < len(text))
                            or (hit.start == 0 and start > 0)
                            for hit in hits
                        ):
                            # A hit that reaches the window's edge may go on beyond it (a long
                            # base64 key on one line): this detector reads the whole text.
                            whole.add(i)
                            continue
                        found.extend(
                            (i, Hit(h.start + start, h.end + start, h.kind, h.detector))
                            for h in hits
                        )
                for i in whole:
                    found = [item for item in found if item[0] != i]
                    found.extend((i, hit) for hit in detectors[i].find(text, context))
        found.sort(key=lambda item: item[0])
        return [hit for _, hit in found]

    def _finish(self, text: str, hits: list[Hit]) -> tuple[FoundSecret, ...]:
        found = []
        for hit, value, fingerprint in kept_hits(text, hits, self._fingerprinter, self._allowlist):
            prefix = _PUBLIC_PREFIX.match(value)
            found.append(FoundSecret(hit, fingerprint, prefix.group() if prefix else ""))
        return tuple(found)

    def fingerprint(self, value: str) -> str:
        """The keyed fingerprint of a value (the full hex HMAC, as a FoundSecret holds it)."""
        return self._fingerprinter.fingerprint(value)

    def redact_text(self, text: str, context: ScanContext = PLAIN) -> str:
        """The text with every secret replaced by its placeholder (for labels and titles)."""
        found = self.scan_text(text, context)
        for item in sorted(found, key=lambda f: f.hit.start, reverse=True):
            text = text[: item.hit.start] + item.placeholder + text[item.hit.end :]
        return text

    # -- transcript lines -----------------------------------------------------------------

    def new_file_scan(self) -> FileScan:
        return FileScan(self)

    def prepare(self) -> None:
        """Do the detectors' costly one-time work now (importing detect-secrets), so that
        processes forked afterwards share it instead of each paying for it. Our rules compile
        their patterns on first use: a part's process compiles only those it wakes."""
        for detector in self.index.detectors:
            if needs_preparing(detector):
                detector.prepare()


def _widen_to_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """Move a window's edges out to line breaks (within a bound), so no match is cut."""
    if start > 0:
        cut = text.rfind("\n", max(0, start - _LINE_SLACK), start)
        start = cut + 1 if cut >= 0 else max(0, start - _LINE_SLACK)
    if end < len(text):
        cut = text.find("\n", end, end + _LINE_SLACK)
        end = cut if cut >= 0 else min(len(text), end + _LINE_SLACK)
    return start, end


def _whole_value_hit(text: str) -> Hit | None:
    """A string that is the whole value of a `password`/`token`-like key."""
    value = text.strip()
    if len(value) < _MIN_SECRET_LEN or len(value) > 4096 or "\n" in value or " " in value:
        return None
    if PLACEHOLDER_RE.fullmatch(value) or value.startswith(("$", "<", "{{")) or value.isdigit():
        return None
    if value.lower() in {"true", "false", "null", "none", "redacted", "changeme", "xxxxxx"}:
        return None
    start = text.index(value)
    return Hit(start, start + len(value), "sensitive-key-value", "sensitive-key")


class FileScan:
    """Scans the lines of one file in order, remembering tool calls to understand results."""

    def __init__(self, scanner: SecretScanner) -> None:
        self._scanner = scanner
        index = scanner.index
        # The file-scoped detectors, told once by the index: a check against their protocol
        # per file cost 33 µs, most of a tiny file's scan.
        self._memory = CallMemory(index.file_readers, scanner.redact_text)
        # The gates of the line `answers_unknown_call` looked at last: `scan_raw` of the same
        # line uses them instead of a second pass.
        self._looked_at: tuple[RawLine, RawLineGates] | None = None

    def scan_raw(self, raw: RawLine) -> LineScan | None:
        """Scan one line; None when the fast path proves there is nothing to find."""
        data = raw.data
        looked_at, self._looked_at = self._looked_at, None
        if looked_at is not None and looked_at[0] is raw:
            gates = looked_at[1]
        else:
            gates = self._scanner.index.line_scan(data)
        woken, is_call = gates.woken, gates.makes_call
        sensitive_calls = self._memory.sensitive
        # The calls this line answers: needed to narrow woken detectors and to know whether it
        # answers a sensitive call.
        answered: frozenset[str] = frozenset()
        if gates.answer_marks and (woken or sensitive_calls):
            answered = answered_call_ids(data, gates)
        if gates.escaped_slash:
            data = data.replace(b"\\/", b"/")
        if woken and not is_call:
            woken = self._narrow(woken, data, gates.events, answered)
        sensitive = not sensitive_calls.isdisjoint(answered)
        quiet = not woken and not sensitive and not gates.credential_member
        if quiet and not is_call and _may_be_whole_object(data):
            if not gates.may_title:
                return None
            # A record that may title the session is parsed, whatever it holds: the caller
            # may take the title from it (`LineScan.line.record`) rather than read the file
            # for it again. Otherwise it is what any quiet line is: unparsable, it is skipped,
            # never reported here, and it makes no tool call to note.
            line = parse_line(raw, json_loads_for_strings)
            return None if line.record is None else _line_scan(line, line.record, ())
        # Only strings are scanned (and redaction rewrites the raw bytes): a large integer that
        # comes back as a float changes nothing here.
        return self.scan_line(parse_line(raw, json_loads_for_strings), woken, quiet=quiet)

    def scan_line(
        self, line: Line, woken: frozenset[int] | None = None, *, quiet: bool = False
    ) -> LineScan:
        """Scan one parsed line. `quiet`: the raw line woke no detector, answers no sensitive
        call and has no credential-named member, so unless it makes a sensitive call itself
        (a Write of `.env`), its strings need not be walked; its tool calls are still noted."""
        scanner = self._scanner
        if woken is None:
            woken = scanner.index.line_detectors(line.raw.data.replace(b"\\/", b"/"))
        record = line.record
        if record is not None and quiet and not self._memory.register(record):
            return _line_scan(line, record, ())
        if record is None:
            # Not a JSON object (a torn last line, say): scan it as plain text.
            leaves: tuple[LeafScan, ...] = ()
            if line.problem is not LineProblem.BLANK:
                found = scanner.scan_text(line.text(), PLAIN, woken)
                if found:
                    leaves = (LeafScan(None, found, False, None),)
            return LineScan(line, None, None, leaves)
        if not quiet:
            self._memory.register(record)
        found_leaves = []
        for leaf in record_strings(record, self._memory):
            found = scanner.scan_text(leaf.text, leaf.context, woken)
            if found:
                found_leaves.append(LeafScan(leaf.pointer, found, leaf.in_thinking, leaf.source))
        keys = self._key_leaves(record, woken)
        return _line_scan(line, record, tuple(found_leaves), keys)

    def _key_leaves(self, record: Mapping[str, Any], woken: frozenset[int]) -> tuple[LeafScan, ...]:
        """The secrets in the record's keys, looked for only where a token pattern's literal
        (`ghp_`, `AKIA`) woke on the raw line, whatever its strings held (the same token may
        stand in a value and in a key): walking every record's keys would cost a tenth of the
        scan."""
        if woken.isdisjoint(self._scanner.index.literal_tokens):
            return ()
        in_keys = found_in_keys(record, self._scanner, woken)
        return tuple(LeafScan(pointer, secrets, False, None) for pointer, _, secrets in in_keys)

    def _narrow(
        self,
        woken: frozenset[int],
        data: bytes,
        ends: Mapping[int, list[Event]],
        answered: frozenset[str],
    ) -> frozenset[int]:
        """Drop from a raw line's woken detectors those that cannot match there after all: a
        scoped detector when the line answers no call on a file it reads, a confirming one
        when its cheap check of the raw bytes says no. (A line that makes a call, or answers
        a sensitive one, is read whole anyway.)"""
        index = self._scanner.index
        scoped = index.scoped.intersection(woken)
        if scoped:
            scoped_calls = self._memory.scoped_calls
            drop = {i for i in scoped if answered.isdisjoint(scoped_calls[i])}
            if drop:
                woken = woken - drop
        for i, may_match_raw in index.confirming:
            if i in woken and not may_match_raw(data, ends.get(i, ())):
                woken = woken - {i}
        return woken

    # -- tool calls -------------------------------------------------------------------------

    def answers_unknown_call(self, raw: RawLine) -> bool:
        """Whether a raw line answers a tool call this scan has not seen (its results or the
        progress of a running command). A scan that starts in the middle of a file (one part
        of a parallel scan) hands such lines back, to be scanned where the call is known."""
        gates = self._scanner.index.line_scan(raw.data)
        self._looked_at = (raw, gates)
        if not gates.answer_marks:
            return False
        calls = self._memory.calls
        return any(call_id not in calls for call_id in answered_call_ids(raw.data, gates))

    def calls_seen(self) -> dict[str, ClassifiedCall]:
        """The tool calls this scan remembers (the most recent ones), in the order made."""
        return dict(self._memory.calls)

    def sensitive_calls_seen(self) -> dict[str, ClassifiedCall]:
        """Of `calls_seen`, those that touched a credential source, in the order made."""
        sensitive = self._memory.sensitive
        return {i: call for i, call in self._memory.calls.items() if i in sensitive}

    def remember_calls(self, calls: Mapping[str, ClassifiedCall]) -> None:
        """Take over tool calls seen by an earlier scan of the same file (in order)."""
        for call_id, call in calls.items():
            self._memory.note(call_id, call)


def _line_scan(
    line: Line,
    record: Mapping[str, Any],
    leaves: tuple[LeafScan, ...],
    key_leaves: tuple[LeafScan, ...] = (),
) -> LineScan:
    uuid = record.get("uuid")
    session = record.get("sessionId")
    return LineScan(
        line,
        uuid if isinstance(uuid, str) else None,
        session if isinstance(session, str) else None,
        leaves,
        key_leaves,
    )


def _may_be_whole_object(data: bytes) -> bool:
    """Whether a line may be a whole JSON object, judged cheaply. A line that cannot be (torn,
    garbage, invalid UTF-8, blank) is parsed even with nothing to find in it, so that it is
    reported as a problem rather than skipped in silence."""
    if data[:64].lstrip()[:1] != b"{" or data[-64:].rstrip()[-1:] != b"}":
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
