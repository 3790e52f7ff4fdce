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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrubber.detection.context import ToolCall, describe_tool_use
from scrubber.detection.detector import PLAIN, Detector, ScanContext, SourceKind
from scrubber.detection.finding import Hit, resolve_overlaps
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.gates import Gate, gates_of, literal_pattern
from scrubber.detection.placeholder import (
    PLACEHOLDER_PREFIX,
    PLACEHOLDER_RE,
    make_placeholder,
    mask_spans,
    placeholder_spans,
)
from scrubber.detection.prefilter import gate_matcher
from scrubber.detection.required_literals import every_match_holds_one_of
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.string_copies import copies_in_same_string
from scrubber.policy.model import Allowlist
from scrubber.transcript.jsonl import (
    Line,
    LineProblem,
    RawLine,
    json_loads_for_strings,
    parse_line,
)

# String values under these keys are identifiers, chain fields, signatures or enum-like tags:
# never secrets, and redaction must leave them byte-identical.
PROTECTED_KEYS = frozenset(
    {
        "uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sessionId", "requestId",
        "timestamp", "messageId", "sourceToolAssistantUUID", "sourceToolUseID", "toolUseID",
        "parentToolUseID", "agentId", "promptId", "tool_use_id", "signature", "type", "subtype",
        "role", "id", "hash", "media_type", "stop_reason", "model", "version", "userType",
        "gitBranch", "permissionMode", "slug", "level", "operation", "name",
    }
)  # fmt: skip
# Keys whose whole value looks like a credential when it is a plausible secret (an MCP tool's
# input `{"api_key": …}`, a parsed config object in toolUseResult).
_SENSITIVE_KEY = re.compile(
    r"(?:^|[_\-.])(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|apikey|private[_\-]?key|"
    r"access[_\-]?key|auth|credentials?|client[_\-]?secret)(?:$|[_\-.])|^(?:password|secret|token)s?$",
    re.IGNORECASE,
)
# On a raw line: a JSON key with a credential-like name holding a string value. Lines no gate
# wakes are still parsed when this matches, so `{"api_key": "…"}` is never skipped (the scanner
# judges such a value by its key). Found in the same hyperscan pass as the gates.
_SENSITIVE_JSON_KEY_RAW = Gate(
    r"(?:pass|pwd|secret|token|api_?key|apikey|private_?key|access_?key|auth|credential)"
    r'[a-z0-9_\-.]{0,40}"\s*:\s*"'
)
# The id of the tool call a record answers: `tool_use_id` in a tool_result block, or
# `parentToolUseID` on the `progress` records a running Bash command streams.
# (Matched only where `find` saw a mark: a regex search would try every quote of a long line.)
_TOOL_USE_ID = re.compile(rb'"(?:tool_use_id|parentToolUseID)"\s*:\s*"([^"\\]{1,200})"')
_ANSWER_MARKS = (b'"tool_use_id"', b'"parentToolUseID"')
# Literals the scanner asks about every raw line, found in the gates' pass (a search of its own
# would read the whole line again, each): JSON's optional escape of "/" (gates such as "://"
# must see the slash), a tool call, and an answer to one.
_ESCAPED_SLASH = b"\\/"
_MAKES_CALL = b'"tool_use"'
_MIN_SECRET_LEN = 6
# detect-secrets' inline marker for a known non-secret (a test value, a documented example):
# honoured on the line where a finding starts, as detect-secrets and its users expect.
_ALLOWLIST_PRAGMA = "pragma: allowlist secret"
# Strings longer than this are scanned in windows around anchor occurrences. A detector can say
# how far its matches reach from an anchor (`reach_before`, `reach_after`); PEM blocks reach far.
_WINDOW_THRESHOLD = 2048
_TOKEN_REACH_BEFORE = 256
_TOKEN_REACH_AFTER = 1024
_FAR_REACH = 16384
# Where a gate matched: the offset its match ends at, and which of its detector's gates it is.
Event = tuple[int, int]
# A gate reports where its match ends; its match may start this far before (the longest gates,
# a name and its operator, run to about 250 bytes).
_GATE_SLACK = 320
_LINE_SLACK = 256
_SOURCE_LABEL_MAX = 120
# Tool calls remembered per file (see FileScan._register_calls).
_MAX_CALLS = 8192


# Public prefixes a masked preview may show (they name the vendor, not the secret).
_PUBLIC_PREFIX = re.compile(
    r"^(?:sk-ant-(?:api|admin|oat|ort|sid)\d\d-|sk-proj-|sk-svcacct-|sk-admin-|sk-or-v1-|"
    r"[sr]k_(?:live|test)_|whsec_|sbp_|sb_secret_|gh[pousr]_|github_pat_|xox[abposre]-|glpat-|npm_|"
    r"hf_|pypi-|dop_v1_|doo_v1_|dor_v1_|AIza|SG\.|AKIA|ASIA|hvs\.|AGE-SECRET-KEY-1|eyJ|-----BEGIN )"
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


@dataclass(frozen=True, slots=True)
class RawLineGates:
    """What one pass of the gates over a raw JSONL line tells (`_GateIndex.line_scan`)."""

    woken: frozenset[int]  # the detectors whose gates match
    credential_member: bool  # a credential-named JSON member with a string value
    # For each confirming detector woken: where (raw offsets of match ends), which of its gates.
    events: dict[int, list[Event]]
    makes_call: bool  # holds a `tool_use` block
    # Where the line's `"tool_use_id"` and `"parentToolUseID"` marks start: the calls it answers.
    answer_marks: tuple[int, ...]
    escaped_slash: bool  # JSON's `\\/`: the gates were matched with `/` in its place


_NOTHING_PRESENT = RawLineGates(frozenset(), False, {}, False, (), False)


def json_pointer(parts: Iterable[str | int]) -> str:
    """RFC 6901: `~` is `~0`, `/` is `~1`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class _GateIndex:
    """Which detectors could match where, from their gates (gates.py), found in one pass.

    On a raw JSONL line the gates say which detectors could match anywhere in it (a line none
    wakes is never parsed); on a decoded string they also say where, so that a detector runs on
    the few windows of a long tool output around its gate matches rather than on all of it.
    """

    def __init__(
        self, detectors: Sequence[Detector], engine: str = "auto", cache_dir: Path | None = None
    ) -> None:
        self.detectors = tuple(detectors)
        # Each gate spec, with (detector, position among that detector's gates) of its owners.
        specs: dict[tuple[str, str, bool], list[tuple[int, int]]] = {}
        rare: dict[tuple[str, str, bool], set[tuple[str, ...]]] = {}
        for i, det in enumerate(detectors):
            for position, gate in enumerate(gates_of(det)):
                key = (gate.text, gate.raw_pattern, gate.caseless)
                specs.setdefault(key, []).append((i, position))
                rare.setdefault(key, set()).add(_proven_rare(gate))
        # The last gate is no detector's: it marks a raw line that holds a credential-named
        # JSON member (see `_SENSITIVE_JSON_KEY_RAW`).
        marker = _SENSITIVE_JSON_KEY_RAW
        marker_spec = (marker.text, marker.raw_pattern, marker.caseless)
        specs.setdefault(marker_spec, [])
        self._marker = list(specs).index(marker_spec)
        # Then the literal marks, no detector's either (see `_ESCAPED_SLASH`).
        mark_specs = [
            (literal_pattern(mark), literal_pattern(mark), False)
            for mark in (_ESCAPED_SLASH, _MAKES_CALL, *_ANSWER_MARKS)
        ]
        for spec in mark_specs:
            specs.setdefault(spec, [])
        order = list(specs)
        self._escaped_slash, self._makes_call, *answer = (order.index(m) for m in mark_specs)
        # Each answer mark's gate, with the length of the mark: where one ends, an id follows.
        self._answer_marks = {g: len(m) for g, m in zip(answer, _ANSWER_MARKS, strict=True)}
        self.gates = tuple(specs)
        # For each gate: the detectors it wakes, and which of their gates it is.
        self._owners = tuple(tuple(owners) for owners in specs.values())
        # Context-only detectors, gated or not: never run on text of unknown origin.
        self.needs_context = frozenset(i for i, det in enumerate(detectors) if det.context_only)
        # Token patterns: they find the same in any context, so their gates hold everywhere.
        self.context_free = frozenset(
            i
            for i, det in enumerate(detectors)
            if isinstance(det, PatternRule) and not det.context_only and gates_of(det)
        )
        self.everyone = tuple(range(len(detectors)))
        # Detectors that can be told where their gates matched (`find_near`).
        self.near = frozenset(i for i, det in enumerate(detectors) if hasattr(det, "find_near"))
        # Detectors that read only the output or input of tool calls on certain files
        # (`reads_file(file_name)`), and those that can confirm a raw line cheaply
        # (`may_match_raw(data)`) before it is parsed for them.
        self.scoped = frozenset(i for i, det in enumerate(detectors) if hasattr(det, "reads_file"))
        self.confirming = tuple(
            (i, det.may_match_raw)
            for i, det in enumerate(detectors)
            if hasattr(det, "may_match_raw")
        )
        # How far from a gate's end a detector's match can reach, before and after it.
        self.reach = tuple(_reach_of(det) for det in self.detectors)
        # Gates that wait for their rare literals (Gate.rare); one two owners share waits only
        # when both name the same literals.
        self.deferred = {
            g: [lit.encode("latin-1") for lit in next(iter(rare[spec]))]
            for g, spec in enumerate(self.gates)
            if len(rare.get(spec, ())) == 1 and next(iter(rare[spec]))
        }
        # The raw-form matches of confirming detectors' gates are reported one by one: where
        # they are is what `may_match_raw` is told; so are the answer marks'.
        confirming = {i for i, _ in self.confirming}
        self._matcher = gate_matcher(
            [(text.encode("latin-1"), raw.encode("latin-1"), c) for text, raw, c in self.gates],
            engine=engine,
            cache_dir=cache_dir,
            every_end=[
                g
                for g, owners in enumerate(self._owners)
                if confirming.intersection(d for d, _ in owners) or g in self._answer_marks
            ],
            deferred=self.deferred,
        )

    def line_detectors(self, data: bytes) -> frozenset[int]:
        """Detectors whose gates match a raw line."""
        owners = self._owners
        return frozenset(d for g in self._matcher.present(data) for d, _ in owners[g])

    def line_scan(self, data: bytes) -> RawLineGates:
        """What the gates and marks say of a raw line (see `RawLineGates`)."""
        owners = self._owners
        present, ends = self._matcher.present_and_ends(data)
        if not present:
            return _NOTHING_PRESENT
        escaped_slash = self._escaped_slash in present
        if escaped_slash:
            present, ends = self._matcher.present_and_ends(data.replace(b"\\/", b"/"))
        by_detector: dict[int, list[Event]] = {}
        answer_marks = self._answer_marks
        answers: list[int] = []
        for gate, end in ends:
            if gate in answer_marks:
                answers.append(end - answer_marks[gate])
                continue
            for d, position in owners[gate]:
                by_detector.setdefault(d, []).append((end, position))
        return RawLineGates(
            frozenset(d for g in present for d, _ in owners[g]),
            self._marker in present,
            by_detector,
            self._makes_call in present,
            tuple(answers),
            escaped_slash,
        )

    def events(self, text: str) -> dict[int, list[Event]]:
        """For each detector woken in `text`: where (character offsets of match ends) and which
        of its gates matched."""
        data = text.encode("utf-8", "surrogatepass")
        found = self._matcher.events(data)
        if not found:
            return {}
        owners = self._owners
        by_detector: dict[int, list[Event]] = {}
        if len(data) == len(text):
            for gate, end in found:
                for d, position in owners[gate]:
                    by_detector.setdefault(d, []).append((end, position))
            return by_detector
        # Non-ASCII text: byte offsets to character offsets, decoding the gaps between events.
        chars = 0
        previous = 0
        for gate, end in sorted(found, key=lambda event: event[1]):
            chars += len(data[previous:end].decode("utf-8", "ignore"))
            previous = end
            for d, position in owners[gate]:
                by_detector.setdefault(d, []).append((chars, position))
        return by_detector

    def windows(
        self, events: Mapping[int, list[Event]], size: int
    ) -> list[tuple[int, int, set[int]]]:
        """Regions of a long text around each gate match, with the detectors that could match
        there; overlapping regions are merged."""
        regions: list[tuple[int, int, int]] = []
        for d, ends in events.items():
            before = self.reach[d][0] + _GATE_SLACK
            after = self.reach[d][1]
            if len(ends) * (before + after) >= size:
                regions.append((0, size, d))  # its windows would cover the text anyway
                continue
            for end, _ in ends:
                regions.append((max(0, end - before), min(size, end + after), d))
        regions.sort()
        merged: list[tuple[int, int, set[int]]] = []
        for start, end, d in regions:
            if merged and start <= merged[-1][1]:
                last = merged[-1]
                last[2].add(d)
                merged[-1] = (last[0], max(last[1], end), last[2])
            else:
                merged.append((start, end, {d}))
        return merged


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
        self._index = _GateIndex(detectors, engine, cache_dir)
        self._fingerprinter = fingerprinter
        self._allowlist = allowlist or Allowlist()

    # -- text ---------------------------------------------------------------------------

    def scan_text(
        self,
        text: str,
        context: ScanContext = PLAIN,
        line_detectors: frozenset[int] | None = None,
        memo: dict[tuple[str, SourceKind, str | None], tuple[Hit, ...]] | None = None,
    ) -> tuple[FoundSecret, ...]:
        """Secrets in one string, as exact non-overlapping spans with fingerprints.

        `line_detectors`: the detectors whose gates matched the raw line the string came from
        (a detector no gate woke there cannot match in any of its strings), when known.
        `memo`: detectors' hits already found for the same string from the same source (no
        detector reads the JSON key; only the whole-value check below does).
        """
        if len(text) < _MIN_SECRET_LEN:
            return ()
        redacted_before = PLACEHOLDER_PREFIX in text
        masked: list[tuple[int, int]] = []
        if redacted_before:
            masked = placeholder_spans(text)
            text = mask_spans(text, masked)
        memo_key = (text, context.source, context.file_name)
        remembered = memo.get(memo_key) if memo is not None else None
        if remembered is not None:
            hits = list(remembered)
        else:
            hits = self._detector_hits(text, context, line_detectors)
            if memo is not None:
                memo[memo_key] = tuple(hits)
        # A value that already holds a placeholder was redacted: what is left of it (say
        # `SECRET=` before a placeholder) is not the whole value, and flagging it would make a
        # second redaction change the file.
        if context.key and not redacted_before and _SENSITIVE_KEY.search(context.key):
            whole = _whole_value_hit(text, context.key)
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
        index = self._index
        detectors = index.detectors
        # (detector index, hit): hits are put in detector order before overlaps are resolved,
        # so that of two equal spans the first detector's kind wins (a vendor's token format
        # over the generic "value of a secret-named variable"), however the hits were found.
        found: list[tuple[int, Hit]] = []
        if context.sensitive:
            # A credential source: every detector reads all of it (the gates describe what a
            # value must look like elsewhere; here the name alone says it is a secret), but
            # for a token pattern, whose matches are the same in any context: there its gates
            # still say whether it can match at all.
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
                near = detectors[i].find_near(text, context, events.pop(i))  # type: ignore[attr-defined]
                found.extend((i, hit) for hit in near)
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
        pragma = _ALLOWLIST_PRAGMA in text
        hits = [*hits, *copies_in_same_string(text, hits)]
        for hit in resolve_overlaps(hits):
            value = text[hit.start : hit.end]
            if not value.strip():
                continue
            if pragma and _ALLOWLIST_PRAGMA in _line_at(text, hit.start):
                continue
            fingerprint = self._fingerprinter.fingerprint(value)
            if self._allowlist.allows(value, fingerprint):
                continue
            prefix = _PUBLIC_PREFIX.match(value)
            found.append(FoundSecret(hit, fingerprint, prefix.group() if prefix else ""))
        return tuple(found)

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
        for detector in self._index.detectors:
            prepare = getattr(detector, "prepare", None)
            if prepare is not None:
                prepare()


def _proven_rare(gate: Gate) -> tuple[str, ...]:
    """A gate's rare literals, once proven held by every raw-form match (a wrong declaration
    would make the prefilter skip lines the gate matches: a missed secret)."""
    if gate.rare and not every_match_holds_one_of(gate.raw_pattern, gate.rare, gate.caseless):
        raise ValueError(
            f"gate {gate.raw_pattern[:60]!r}: not every match holds one of {gate.rare}"
        )
    return tuple(sorted(gate.rare))


def _reach_of(detector: Detector) -> tuple[int, int]:
    """How far a detector's matches reach around an anchor. A one-regex rule matches a token or
    an assignment that holds its anchor; other detectors (PEM blocks, file formats) may reach
    far unless they say otherwise."""
    near = isinstance(detector, PatternRule)
    before = _TOKEN_REACH_BEFORE if near else _FAR_REACH
    after = _TOKEN_REACH_AFTER if near else _FAR_REACH
    return (
        int(getattr(detector, "reach_before", before)),
        int(getattr(detector, "reach_after", after)),
    )


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : len(text) if end < 0 else end]


def _widen_to_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """Move a window's edges out to line breaks (within a bound), so no match is cut."""
    if start > 0:
        cut = text.rfind("\n", max(0, start - _LINE_SLACK), start)
        start = cut + 1 if cut >= 0 else max(0, start - _LINE_SLACK)
    if end < len(text):
        cut = text.find("\n", end, end + _LINE_SLACK)
        end = cut if cut >= 0 else min(len(text), end + _LINE_SLACK)
    return start, end


def _whole_value_hit(text: str, key: str) -> Hit | None:
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


@dataclass(slots=True)
class _Walk:
    """The state of one record's walk: where we are and what the record tells us."""

    calls: Mapping[str, ToolCall]
    leaves: list[LeafScan]
    line_detectors: frozenset[int]
    result_context: ScanContext = PLAIN
    result_source: str | None = None
    # The detectors' hits per (string, source, file) of this record: Claude Code stores a
    # tool's output twice (the tool_result block and toolUseResult), often as the same string.
    memo: dict[tuple[str, SourceKind, str | None], tuple[Hit, ...]] = field(default_factory=dict)


class FileScan:
    """Scans the lines of one file in order, remembering tool calls to understand results."""

    def __init__(self, scanner: SecretScanner) -> None:
        self._scanner = scanner
        self._calls: dict[str, ToolCall] = {}
        self._sensitive_calls: set[str] = set()
        self._labels: dict[str, str] = {}
        # The gates of the line `answers_unknown_call` looked at last: `scan_raw` of the same
        # line uses them instead of a second pass.
        self._looked_at: tuple[RawLine, RawLineGates] | None = None
        # For each scoped detector (see _GateIndex.scoped): the calls whose file it reads.
        self._scoped_calls: dict[int, set[str]] = {i: set() for i in scanner._index.scoped}

    def scan_raw(self, raw: RawLine) -> LineScan | None:
        """Scan one line; None when the fast path proves there is nothing to find."""
        data = raw.data
        looked_at, self._looked_at = self._looked_at, None
        if looked_at is not None and looked_at[0] is raw:
            gates = looked_at[1]
        else:
            gates = self._scanner._index.line_scan(data)
        woken, is_call = gates.woken, gates.makes_call
        # The calls this line answers: needed to narrow woken detectors and to know whether it
        # answers a sensitive call.
        answered: frozenset[str] = frozenset()
        if gates.answer_marks and (woken or self._sensitive_calls):
            answered = _answered_ids(data, gates)
        if gates.escaped_slash:
            data = data.replace(b"\\/", b"/")
        if woken and not is_call:
            woken = self._narrow(woken, data, gates.events, answered)
        sensitive = not self._sensitive_calls.isdisjoint(answered)
        quiet = not woken and not sensitive and not gates.credential_member
        if quiet and not is_call and _may_be_whole_object(data):
            return None
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
            woken = scanner._index.line_detectors(line.raw.data.replace(b"\\/", b"/"))
        record = line.record
        if record is not None and quiet and not self._register_calls(record):
            return _line_scan(line, record, ())
        if record is None:
            # Not a JSON object (a torn last line, say): scan it as plain text.
            leaves: tuple[LeafScan, ...] = ()
            if line.problem is not LineProblem.BLANK:
                found = scanner.scan_text(line.text(), PLAIN, woken)
                if found:
                    leaves = (LeafScan(None, found, False, None),)
            return LineScan(line, None, None, leaves)
        walk = _Walk(self._calls, [], woken)
        if not quiet:
            self._register_calls(record)
        self._walk_record(record, walk)
        return _line_scan(line, record, tuple(walk.leaves))

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
        index = self._scanner._index
        scoped = index.scoped.intersection(woken)
        if scoped:
            drop = {i for i in scoped if answered.isdisjoint(self._scoped_calls[i])}
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
        gates = self._scanner._index.line_scan(raw.data)
        self._looked_at = (raw, gates)
        if not gates.answer_marks:
            return False
        calls = self._calls
        return any(call_id not in calls for call_id in _answered_ids(raw.data, gates))

    def calls_seen(self) -> dict[str, ToolCall]:
        """The tool calls this scan remembers (the most recent ones), in the order made."""
        return dict(self._calls)

    def remember_calls(self, calls: Mapping[str, ToolCall]) -> None:
        """Take over tool calls seen by an earlier scan of the same file (in order)."""
        for call_id, call in calls.items():
            self._note_call(call_id, call)

    def _register_calls(self, record: Mapping[str, Any]) -> bool:
        """Note the record's tool calls; True when one of them touches a credential source.
        Only the most recent `_MAX_CALLS` are kept: a result follows its call closely, and
        memory must not grow with the file."""
        sensitive = False
        for block in _content_blocks(record):
            if block.get("type") != "tool_use":
                continue
            call_id = block.get("id")
            name = block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                continue
            call = describe_tool_use(name, block.get("input"))
            self._note_call(call_id, call)
            sensitive = sensitive or call.source is not SourceKind.UNKNOWN
        return sensitive

    def _note_call(self, call_id: str, call: ToolCall) -> None:
        calls = self._calls
        calls.pop(call_id, None)
        calls[call_id] = call
        if call.source is not SourceKind.UNKNOWN:
            self._sensitive_calls.add(call_id)
        detectors = self._scanner._index.detectors
        for i, scoped in self._scoped_calls.items():
            if detectors[i].reads_file(call.target or None):  # type: ignore[attr-defined]
                scoped.add(call_id)
        while len(calls) > _MAX_CALLS:
            oldest = next(iter(calls))
            del calls[oldest]
            self._sensitive_calls.discard(oldest)
            self._labels.pop(oldest, None)
            for scoped in self._scoped_calls.values():
                scoped.discard(oldest)

    def _label(self, call_id: str) -> str | None:
        label = self._labels.get(call_id)
        if label is None:
            call = self._calls.get(call_id)
            if call is None:
                return None
            target = self._scanner.redact_text(call.target) if call.target else ""
            label = _shorten(call.label(target))
            self._labels[call_id] = label
        return label

    # -- the walk ---------------------------------------------------------------------------

    def _walk_record(self, record: Mapping[str, Any], walk: _Walk) -> None:
        result_id = next(
            (
                b.get("tool_use_id")
                for b in _content_blocks(record)
                if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
            ),
            None,
        )
        if result_id is None and record.get("type") == "progress":
            # A running command's streamed output belongs to the call that started it.
            result_id = record.get("parentToolUseID")
        if isinstance(result_id, str):
            call = self._calls.get(result_id)
            if call is not None:
                walk.result_context = ScanContext(None, call.source, call.target or None)
            walk.result_source = self._label(result_id)
        for key, value in record.items():
            if key == "toolUseResult" or (key == "data" and record.get("type") == "progress"):
                self._walk(value, [key], walk, walk.result_context, walk.result_source, False)
            elif key == "message" and isinstance(value, Mapping):
                self._walk_message(value, walk)
            elif key not in PROTECTED_KEYS:
                self._walk(value, [key], walk, ScanContext(key), None, False)

    def _walk_message(self, message: Mapping[str, Any], walk: _Walk) -> None:
        for key, value in message.items():
            if key == "content" and isinstance(value, list):
                for i, block in enumerate(value):
                    path: list[str | int] = ["message", "content", i]
                    if isinstance(block, Mapping):
                        self._walk_block(block, path, walk)
                    else:
                        self._walk(block, path, walk, PLAIN, None, False)
            elif key not in PROTECTED_KEYS:
                self._walk(value, ["message", key], walk, ScanContext(key), None, False)

    def _walk_block(self, block: Mapping[str, Any], path: list[str | int], walk: _Walk) -> None:
        kind = block.get("type")
        if kind in ("redacted_thinking", "image"):
            return  # opaque data and base64 payloads: not text
        if kind == "tool_use":
            call_id = block.get("id")
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            label = self._label(call_id) if isinstance(call_id, str) else None
            tool_input = block.get("input")
            if isinstance(tool_input, Mapping):
                for key, value in tool_input.items():
                    source = SourceKind.UNKNOWN
                    if call is not None and key in ("content", "new_string", "new_source", "edits"):
                        source = call.source
                    ctx = ScanContext(key, source, call.target if call else None)
                    self._walk(value, [*path, "input", key], walk, ctx, label, False)
            return
        if kind == "tool_result":
            call_id = block.get("tool_use_id")
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            ctx = ScanContext(None, call.source, call.target or None) if call else PLAIN
            label = self._label(call_id) if isinstance(call_id, str) else None
            self._walk(block.get("content"), [*path, "content"], walk, ctx, label, False)
            return
        for key, value in block.items():
            if key in PROTECTED_KEYS:
                continue
            self._walk(value, [*path, key], walk, ScanContext(key), None, kind == "thinking")

    def _walk(
        self,
        value: Any,
        path: list[str | int],
        walk: _Walk,
        ctx: ScanContext,
        source: str | None,
        thinking: bool,
    ) -> None:
        if isinstance(value, str):
            found = self._scanner.scan_text(value, ctx, walk.line_detectors, walk.memo)
            if found:
                walk.leaves.append(LeafScan(json_pointer(path), found, thinking, source))
        elif isinstance(value, Mapping):
            if value.get("type") in ("image", "base64") and "data" in value:
                return
            if value.get("type") == "image" or "media_type" in value:
                return
            for key, item in value.items():
                if key in PROTECTED_KEYS and isinstance(item, str):
                    continue
                sub = ScanContext(key, ctx.source, ctx.file_name) if isinstance(key, str) else ctx
                self._walk(item, [*path, key], walk, sub, source, thinking)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Mapping) and item.get("type") in ("image", "document"):
                    continue
                self._walk(item, [*path, i], walk, ctx, source, thinking)


def _answered_ids(data: bytes, gates: RawLineGates) -> frozenset[str]:
    """The ids of the calls a raw line answers, read from the line as written (the marks'
    offsets are those of the line without `\\/`, when it has one)."""
    if gates.escaped_slash:
        return _answered_call_ids(data)
    return _call_ids_at(data, gates.answer_marks)


def _call_ids_at(data: bytes, marks: Iterable[int]) -> frozenset[str]:
    """The ids of the calls a raw line answers, given where its answer marks start."""
    ids = []
    for at in marks:
        match = _TOOL_USE_ID.match(data, at)
        if match is not None:
            ids.append(match.group(1).decode("utf-8", "replace"))
    return frozenset(ids)


def _answered_call_ids(data: bytes) -> frozenset[str]:
    """The ids of the tool calls a raw line answers (its results, a command's progress)."""
    ids = []
    for mark in _ANSWER_MARKS:
        at = data.find(mark)
        while at >= 0:
            match = _TOOL_USE_ID.match(data, at)
            if match is not None:
                ids.append(match.group(1).decode("utf-8", "replace"))
            at = data.find(mark, at + len(mark))
    return frozenset(ids)


def _line_scan(line: Line, record: Mapping[str, Any], leaves: tuple[LeafScan, ...]) -> LineScan:
    uuid = record.get("uuid")
    session = record.get("sessionId")
    return LineScan(
        line,
        uuid if isinstance(uuid, str) else None,
        session if isinstance(session, str) else None,
        leaves,
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


def _content_blocks(record: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    message = record.get("message")
    if not isinstance(message, Mapping):
        return
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                yield block


def _shorten(label: str) -> str:
    """Cut a long label without cutting a placeholder in half."""
    if len(label) <= _SOURCE_LABEL_MAX:
        return label
    cut = _SOURCE_LABEL_MAX - 1
    for match in PLACEHOLDER_RE.finditer(label):
        if match.start() < cut < match.end():
            cut = match.start()
            break
    return label[:cut] + "…"
