"""The scanner: which strings of a transcript line to look at, with what context, and what is
found there.

The fast path works on raw line bytes. Most lines of a real transcript hold no secret; a line
whose bytes contain none of the detectors' anchors (case-insensitively), that is not a tool call,
and that is not the result of a tool call that read a credential source, is skipped without being
parsed. Other lines are parsed, and every string leaf is scanned with what the record tells us:
the JSON key it sits under, the tool call it belongs to, whether it is thinking text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scrubber.detection.context import ToolCall, describe_tool_use
from scrubber.detection.detector import PLAIN, Detector, ScanContext, SourceKind
from scrubber.detection.finding import Hit, resolve_overlaps
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.placeholder import PLACEHOLDER_RE, make_placeholder, mask_placeholders
from scrubber.detection.prefilter import literal_set
from scrubber.detection.rules.base import PatternRule
from scrubber.policy.model import Allowlist
from scrubber.transcript.jsonl import Line, LineProblem, RawLine, parse_line

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
# On a raw line: a JSON key with a credential-like name holding a string value. Lines with no
# anchor are still parsed when this matches, so `{"api_key": "…"}` is never skipped.
_SENSITIVE_JSON_KEY_RAW = re.compile(
    rb"(?:pass|pwd|secret|token|api_?key|apikey|private_?key|access_?key|auth|credential)"
    rb'[a-z0-9_\-.]{0,40}"\s*:\s*"',
    re.IGNORECASE,
)
# The id of the tool call a record answers: `tool_use_id` in a tool_result block, or
# `parentToolUseID` on the `progress` records a running Bash command streams.
_TOOL_USE_ID = re.compile(rb'"(?:tool_use_id|parentToolUseID)"\s*:\s*"([^"\\]{1,200})"')
_TOOL_USE_MARK = b'"tool_use"'
_TOOL_USE_ID_MARK = b'"tool_use_id"'
_PARENT_TOOL_MARK = b'"parentToolUseID"'
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
_LINE_SLACK = 256
_SOURCE_LABEL_MAX = 120


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


def json_pointer(parts: Iterable[str | int]) -> str:
    """RFC 6901: `~` is `~0`, `/` is `~1`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _ascii_prefix(anchor: str) -> str:
    for i, ch in enumerate(anchor):
        if ord(ch) > 127:
            return anchor[:i]
    return anchor


class _AnchorIndex:
    """Which detectors could match, given which anchors a text contains.

    Anchors are found on raw bytes (a JSONL line, before parsing) by their ASCII prefix, which
    JSON never escapes; the full anchor is then checked on each decoded string.
    """

    def __init__(self, detectors: Sequence[Detector], engine: str = "auto") -> None:
        self.detectors = tuple(detectors)
        by_anchor: dict[str, set[int]] = {}
        for i, det in enumerate(detectors):
            for anchor in det.anchors:
                by_anchor.setdefault(anchor.lower(), set()).add(i)
        # Context-only detectors, anchored or not: never run on text of unknown origin.
        self.needs_context = frozenset(i for i, det in enumerate(detectors) if det.context_only)
        self.unanchored = tuple(i for i, d in enumerate(detectors) if not d.anchors)
        prefixes = {full: _ascii_prefix(full) for full in by_anchor}
        self.raw_literals = sorted({p for p in prefixes.values() if p})
        # For each raw literal: the full anchors it stands for, with their detectors.
        expansions: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
        for full, dets in sorted(by_anchor.items()):
            if prefixes[full]:
                expansions.setdefault(prefixes[full], []).append((full, tuple(sorted(dets))))
        self.expansions = {lit: tuple(items) for lit, items in expansions.items()}
        # How far from an anchor a detector's match can reach, before and after it.
        self.reach = tuple(_reach_of(det) for det in self.detectors)
        self._literals = literal_set([lit.encode() for lit in self.raw_literals], engine=engine)

    def raw_anchors(self, data: bytes) -> frozenset[str]:
        """Raw literals present in a raw line (ASCII case ignored)."""
        lits = self.raw_literals
        return frozenset(lits[i] for i in self._literals.present(data))

    def text_anchors(self, text: str) -> frozenset[str]:
        lits = self.raw_literals
        data = text.encode("utf-8", errors="surrogatepass")
        return frozenset(lits[i] for i in self._literals.present(data))

    def windows(
        self, lowered_text: str, line_anchors: Iterable[str]
    ) -> list[tuple[int, int, set[int]]]:
        """Regions of a long text around each anchor occurrence, with the detectors that could
        match there; overlapping regions are merged."""
        regions: list[tuple[int, int, tuple[int, ...]]] = []
        size = len(lowered_text)
        for literal in line_anchors:
            for full, dets in self.expansions.get(literal, ()):
                before = max(self.reach[i][0] for i in dets)
                after = max(self.reach[i][1] for i in dets)
                if lowered_text.count(full) * (before + after) >= size:
                    # A common anchor (":", "."): its windows would cover the text anyway.
                    regions.append((0, size, dets))
                    continue
                position = lowered_text.find(full)
                while position >= 0:
                    regions.append(
                        (max(0, position - before), min(size, position + len(full) + after), dets)
                    )
                    position = lowered_text.find(full, position + 1)
        regions.sort()
        merged: list[tuple[int, int, set[int]]] = []
        for start, end, dets in regions:
            if merged and start <= merged[-1][1]:
                last = merged[-1]
                merged[-1] = (last[0], max(last[1], end), last[2] | set(dets))
            else:
                merged.append((start, end, set(dets)))
        return merged

    def candidates(self, lowered_text: str, line_anchors: Iterable[str]) -> set[int]:
        chosen: set[int] = set()
        for literal in line_anchors:
            for full, dets in self.expansions.get(literal, ()):
                if full in lowered_text:
                    chosen.update(dets)
        return chosen


class SecretScanner:
    """Finds secrets in text and in transcript lines. Holds no secret values."""

    def __init__(
        self,
        detectors: Sequence[Detector],
        fingerprinter: Fingerprinter,
        allowlist: Allowlist | None = None,
        *,
        engine: str = "auto",
    ) -> None:
        self._index = _AnchorIndex(detectors, engine)
        self._fingerprinter = fingerprinter
        self._allowlist = allowlist or Allowlist()

    # -- text ---------------------------------------------------------------------------

    def scan_text(
        self,
        text: str,
        context: ScanContext = PLAIN,
        line_anchors: Iterable[str] | None = None,
    ) -> tuple[FoundSecret, ...]:
        """Secrets in one string, as exact non-overlapping spans with fingerprints."""
        if len(text) < _MIN_SECRET_LEN:
            return ()
        lowered = text.lower()
        redacted_before = "[redacted:" in lowered
        if redacted_before:
            text = mask_placeholders(text)
            lowered = text.lower()
        if line_anchors is None:
            line_anchors = self._index.text_anchors(lowered)
        detectors = self._index.detectors
        hits: list[Hit] = []
        if len(text) <= _WINDOW_THRESHOLD:
            chosen = self._index.candidates(lowered, line_anchors)
            if context.sensitive:
                chosen.update(self._index.unanchored)
            else:
                chosen -= self._index.needs_context
            for i in sorted(chosen):
                hits.extend(detectors[i].find(text, context))
        else:
            # A long tool output with a few anchors: run each detector only around them.
            for region_start, region_end, dets in self._index.windows(lowered, line_anchors):
                start, end = _widen_to_lines(text, region_start, region_end)
                piece = text[start:end]
                runnable = dets if context.sensitive else dets - self._index.needs_context
                for i in sorted(runnable):
                    for hit in detectors[i].find(piece, context):
                        hits.append(Hit(hit.start + start, hit.end + start, hit.kind, hit.detector))
            if context.sensitive:
                for i in self._index.unanchored:
                    hits.extend(detectors[i].find(text, context))
        # A value that already holds a placeholder was redacted: what is left of it (say
        # `SECRET=` before a placeholder) is not the whole value, and flagging it would make a
        # second redaction change the file.
        if context.key and not redacted_before and _SENSITIVE_KEY.search(context.key):
            whole = _whole_value_hit(text, context.key)
            if whole is not None:
                hits.append(whole)
        if not hits:
            return ()
        return self._finish(text, hits)

    def _finish(self, text: str, hits: list[Hit]) -> tuple[FoundSecret, ...]:
        found = []
        pragma = _ALLOWLIST_PRAGMA in text
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
    line_anchors: frozenset[str]
    result_context: ScanContext = PLAIN
    result_source: str | None = None


class FileScan:
    """Scans the lines of one file in order, remembering tool calls to understand results."""

    def __init__(self, scanner: SecretScanner) -> None:
        self._scanner = scanner
        self._calls: dict[str, ToolCall] = {}
        self._sensitive_calls: set[str] = set()
        self._labels: dict[str, str] = {}

    def scan_raw(self, raw: RawLine) -> LineScan | None:
        """Scan one line; None when the fast path proves there is nothing to find."""
        data = raw.data
        if b"\\/" in data:  # JSON may escape "/"; anchors such as "://" must still be seen
            data = data.replace(b"\\/", b"/")
        anchors = self._scanner._index.raw_anchors(data)
        is_call = _TOOL_USE_MARK in data
        sensitive = False
        if self._sensitive_calls and (_TOOL_USE_ID_MARK in data or _PARENT_TOOL_MARK in data):
            sensitive = any(
                m.group(1).decode("utf-8", "replace") in self._sensitive_calls
                for m in _TOOL_USE_ID.finditer(data)
            )
        if (
            not anchors
            and not is_call
            and not sensitive
            and _may_be_whole_object(data)
            and not _SENSITIVE_JSON_KEY_RAW.search(data)
        ):
            return None
        return self.scan_line(parse_line(raw), anchors)

    def scan_line(self, line: Line, anchors: frozenset[str] | None = None) -> LineScan:
        scanner = self._scanner
        if anchors is None:
            anchors = scanner._index.raw_anchors(line.raw.data.replace(b"\\/", b"/"))
        record = line.record
        if record is None:
            # Not a JSON object (a torn last line, say): scan it as plain text.
            leaves: tuple[LeafScan, ...] = ()
            if line.problem is not LineProblem.BLANK:
                found = scanner.scan_text(line.text(), PLAIN, anchors)
                if found:
                    leaves = (LeafScan(None, found, False, None),)
            return LineScan(line, None, None, leaves)
        walk = _Walk(self._calls, [], anchors)
        self._register_calls(record)
        self._walk_record(record, walk)
        uuid = record.get("uuid")
        session = record.get("sessionId")
        return LineScan(
            line,
            uuid if isinstance(uuid, str) else None,
            session if isinstance(session, str) else None,
            tuple(walk.leaves),
        )

    # -- tool calls -------------------------------------------------------------------------

    def _register_calls(self, record: Mapping[str, Any]) -> None:
        for block in _content_blocks(record):
            if block.get("type") != "tool_use":
                continue
            call_id = block.get("id")
            name = block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                continue
            call = describe_tool_use(name, block.get("input"))
            self._calls[call_id] = call
            if call.source is not SourceKind.UNKNOWN:
                self._sensitive_calls.add(call_id)

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
            found = self._scanner.scan_text(value, ctx, walk.line_anchors)
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
