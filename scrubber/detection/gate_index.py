"""Which detectors could match where: their gates (gates.py) found in one prefilter pass.

On a raw JSONL line the gates say which detectors could match anywhere in it (a line none wakes
is never parsed), whether the line makes or answers a tool call, and whether it holds a
credential-named JSON member; on a decoded string they also say where, so that a detector runs
on the few windows of a long tool output around its gate matches rather than on all of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scrubber.detection.detector import (
    Detector,
    Reaches,
    confirms_raw,
    finds_near,
    reads_files,
)
from scrubber.detection.gates import Gate, gates_of, is_literal_pattern, literal_pattern
from scrubber.detection.prefilter import gate_matcher
from scrubber.detection.required_literals import every_match_holds_one_of
from scrubber.detection.rules.base import PatternRule, SameInAnyContext
from scrubber.transcript.metadata import TITLE_ONLY_MARKERS

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
# How far a detector's matches reach from a gate match, unless it says (`Reaches`): a token
# pattern's are near; other detectors (PEM blocks, file formats) may reach far.
_TOKEN_REACH_BEFORE = 256
_TOKEN_REACH_AFTER = 1024
_FAR_REACH = 16384
# Where a gate matched: the offset its match ends at, and which of its detector's gates it is.
Event = tuple[int, int]
# A gate reports where its match ends; its match may start this far before (the longest gates,
# a name and its operator, run to about 250 bytes).
_GATE_SLACK = 320


@dataclass(frozen=True, slots=True)
class RawLineGates:
    """What one pass of the gates over a raw JSONL line tells (`GateIndex.line_scan`)."""

    woken: frozenset[int]  # the detectors whose gates match
    credential_member: bool  # a credential-named JSON member with a string value
    # For each confirming detector woken: where (raw offsets of match ends), which of its gates.
    events: dict[int, list[Event]]
    makes_call: bool  # holds a `tool_use` block
    # Where the line's `"tool_use_id"` and `"parentToolUseID"` marks start: the calls it answers.
    answer_marks: tuple[int, ...]
    escaped_slash: bool  # JSON's `\\/`: the gates were matched with `/` in its place
    # Holds a title marker (transcript/metadata.py's): such a line is parsed whatever else it
    # holds, so that a scan of every line takes the title on its way instead of a pass of its
    # own over the file (0.5 s of CPU for 250 MB of transcripts).
    may_title: bool = False


_NOTHING_PRESENT = RawLineGates(frozenset(), False, {}, False, (), False)


class GateIndex:
    """Which detectors could match where, from their gates (gates.py), found in one pass.

    On a raw JSONL line the gates say which detectors could match anywhere in it (a line none
    wakes is never parsed); on a decoded string they also say where, so that a detector runs on
    the few windows of a long tool output around its gate matches rather than on all of it.
    """

    def __init__(
        self, detectors: Sequence[Detector], engine: str = "auto", cache_dir: Path | None = None
    ) -> None:
        self.detectors = tuple(detectors)
        own_gates = [gates_of(det) for det in detectors]  # each worked out once: not free
        specs, rare = _gate_specs(own_gates)
        # The last gate is no detector's: it marks a raw line that holds a credential-named
        # JSON member (see `_SENSITIVE_JSON_KEY_RAW`).
        marker = _SENSITIVE_JSON_KEY_RAW
        marker_spec = (marker.text, marker.raw_pattern, marker.caseless)
        specs.setdefault(marker_spec, [])
        self._marker = list(specs).index(marker_spec)
        # Then the literal marks, no detector's either (see `_ESCAPED_SLASH`, `may_title`).
        mark_specs = _literal_specs((_ESCAPED_SLASH, _MAKES_CALL, *_ANSWER_MARKS))
        title_specs = _literal_specs(TITLE_ONLY_MARKERS)
        for spec in (*mark_specs, *title_specs):
            specs.setdefault(spec, [])
        order = list(specs)
        self._escaped_slash, self._makes_call, *answer = (order.index(m) for m in mark_specs)
        self._title_marks = frozenset(order.index(m) for m in title_specs)
        # Each answer mark's gate, with the length of the mark: where one ends, an id follows.
        self._answer_marks = {g: len(m) for g, m in zip(answer, _ANSWER_MARKS, strict=True)}
        self.gates = tuple(specs)
        # For each gate: the detectors it wakes, and which of their gates it is.
        self._owners = tuple(tuple(owners) for owners in specs.values())
        # Context-only detectors, gated or not: never run on text of unknown origin.
        self.needs_context = frozenset(i for i, det in enumerate(detectors) if det.context_only)
        # Token patterns and the other detectors that find the same in any context: their
        # gates hold everywhere, in a credential source too.
        self.context_free = frozenset(
            i for i, det in enumerate(detectors) if _context_free(det, own_gates[i])
        )
        # Of those, the token patterns woken by a literal (`ghp_`, `AKIA`): where one wakes, a
        # token may stand in a JSON object key (detection/key_scan.py). Not the shape gates
        # (pgpass's colons wake on every timestamp).
        self.literal_tokens = frozenset(
            i
            for i in self.context_free
            if all(is_literal_pattern(g.raw_pattern) for g in own_gates[i])
        )
        self.everyone = tuple(range(len(detectors)))
        # Detectors that can be told where their gates matched (`find_near`).
        self.near = frozenset(i for i, det in enumerate(detectors) if finds_near(det))
        # Detectors that read only the output or input of tool calls on certain files
        # (`reads_file(file_name)`), and those that can confirm a raw line cheaply
        # (`may_match_raw(data)`) before it is parsed for them.
        self.file_readers = {i: d for i, d in enumerate(detectors) if reads_files(d)}
        self.scoped = frozenset(self.file_readers)
        self.confirming = tuple(
            (i, det.may_match_raw) for i, det in enumerate(detectors) if confirms_raw(det)
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
            not self._title_marks.isdisjoint(present),
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


_Spec = tuple[str, str, bool]  # a gate's text form, raw form, caseless


def _gate_specs(
    own_gates: Sequence[tuple[Gate, ...]],
) -> tuple[dict[_Spec, list[tuple[int, int]]], dict[_Spec, set[tuple[str, ...]]]]:
    """Each distinct gate spec, with (detector, position among that detector's gates) of its
    owners, and the rare literals each owner declares for it."""
    specs: dict[_Spec, list[tuple[int, int]]] = {}
    rare: dict[_Spec, set[tuple[str, ...]]] = {}
    for i, det_gates in enumerate(own_gates):
        for position, gate in enumerate(det_gates):
            key = (gate.text, gate.raw_pattern, gate.caseless)
            specs.setdefault(key, []).append((i, position))
            rare.setdefault(key, set()).add(_proven_rare(gate))
    return specs, rare


def _literal_specs(marks: Iterable[bytes]) -> list[tuple[str, str, bool]]:
    """Gate specs (text form, raw form, caseless) that match each mark as written."""
    return [(literal_pattern(mark), literal_pattern(mark), False) for mark in marks]


def _context_free(detector: Detector, own_gates: tuple[Gate, ...]) -> bool:
    """Whether a detector's gates (`own_gates`) hold in any context (see `SameInAnyContext`)."""
    same = isinstance(detector, PatternRule) or (
        isinstance(detector, SameInAnyContext) and detector.same_in_any_context
    )
    return same and not detector.context_only and bool(own_gates)


def _proven_rare(gate: Gate) -> tuple[str, ...]:
    """A gate's rare literals, once proven held by every raw-form match (a wrong declaration
    would make the prefilter skip lines the gate matches: a missed secret)."""
    if gate.rare and not every_match_holds_one_of(gate.raw_pattern, gate.rare, gate.caseless):
        raise ValueError(
            f"gate {gate.raw_pattern[:60]!r}: not every match holds one of {gate.rare}"
        )
    return tuple(sorted(gate.rare))


def _reach_of(detector: Detector) -> tuple[int, int]:
    """How far a detector's matches reach around a gate match (see `Reaches`)."""
    if isinstance(detector, Reaches):
        return (int(detector.reach_before), int(detector.reach_after))
    if isinstance(detector, PatternRule):
        return (_TOKEN_REACH_BEFORE, _TOKEN_REACH_AFTER)
    return (_FAR_REACH, _FAR_REACH)


def answered_call_ids(data: bytes, gates: RawLineGates) -> frozenset[str]:
    """The ids of the calls a raw line answers, read from the line as written (the marks'
    offsets are those of the line without `\\/`, when it has one)."""
    if gates.escaped_slash:
        return _call_ids_anywhere(data)
    return _call_ids_at(data, gates.answer_marks)


def _call_ids_at(data: bytes, marks: Iterable[int]) -> frozenset[str]:
    """The ids of the calls a raw line answers, given where its answer marks start."""
    ids = []
    for at in marks:
        match = _TOOL_USE_ID.match(data, at)
        if match is not None:
            ids.append(match.group(1).decode("utf-8", "replace"))
    return frozenset(ids)


def _call_ids_anywhere(data: bytes) -> frozenset[str]:
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
