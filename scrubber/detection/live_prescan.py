"""The live hooks' prescan: which live detectors may match in a text, told with the standard
library alone, before any detector's module is imported (importing and building the scanner was
most of a hook call's time: bench/README.md).

`compile_prescan` (live_prescan_compile.py: at `scrub install` and when the worker recompiles
`state/live.json`) turns
the live detectors into plain data: per detector, what wakes it (its anchors' ASCII prefixes,
the literals the scanner's gates are made of, or its own gates: gates.py) and, for a pattern
rule, a confirmation: its pattern without the leading look-behinds, which every hit lies in a
match of (base.PatternRule.find), with how far such a match reaches when that is bounded.

In the hook, `Prescan.candidates` finds every place a literal occurs with one regex shaped like
a trie (one pass over the text, whatever the number of literals), and keeps a woken detector
only when its confirmation matches around one of those places: the 4-hex anchors (`4b1d`,
`acca`) that any megabyte of git SHAs holds no longer send a clean output to the full scan.
Every step is a necessary condition, so a detector left out cannot match the text.

The compiled data lives in a file someone else may have planted: `Prescan.from_json` checks
its shape and bounds, and that it was compiled from the detection code installed now
(`rules_stamp`); anything else gives None, and the caller runs the full scan.
"""

from __future__ import annotations

# os.path throughout: this module is imported on the hooks' fastest path, and pathlib costs
# more to import than the prescan of 100 KB takes.
# ruff: noqa: PTH100, PTH116, PTH118, PTH120
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `typing` costs the hooks' fast path its import
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import Any

PRESCAN_FORMAT = 2
# Placeholders are masked before detectors run (placeholder.py): a text holding one is not
# judged here; every detector is a candidate.
_PLACEHOLDER_PREFIX = "[REDACTED:"
# Bounds on what a compiled file may hold (far above the real ones: ~80 detectors, ~200
# literals), so that a planted file cannot make the hook compile without end.
_MAX_DETECTORS = 512
_MAX_PATTERN = 4096
# Windowed confirmations of one detector before it is confirmed on the whole text once (text
# that repeats a literal thousands of times costs one search, not thousands).
_MAX_WINDOWS = 16
_MEMO_SIZE = 16
_TRIE_DEPTH = 6
_MODULE = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?")
# As a plain int: `~` of a RegexFlag keeps only the bits the enum defines.
_ALLOWED_FLAGS = int(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE)


def rules_stamp() -> list[list[object]]:
    """What the detection code installed now is: (path, size, mtime) of every module of
    `scrubber.detection`. A prescan compiled from other code (an upgrade, an edited checkout)
    is not trusted."""
    root = os.path.dirname(os.path.abspath(__file__))
    stamp: list[list[object]] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                relative = os.path.relpath(os.path.join(folder, name), root)
                stamp.append([relative, st.st_size, st.st_mtime_ns])
    return stamp


# -- what the live path reads of a tool's output ----------------------------------------------

# Built-in tools whose output is text read from the world (files, commands, the web). Tools
# whose output is the model's own words (Write, Edit, TodoWrite, Task) are not scanned: a
# replacement there changes nothing the model did not already write.
TEXT_TOOLS = frozenset(
    {
        "Read",
        "Bash",
        "BashOutput",
        "KillShell",
        "KillBash",
        "Grep",
        "Glob",
        "LS",
        "WebFetch",
        "WebSearch",
        "NotebookRead",
    }
)
# Keys whose string is binary data (an image's base64) or an id: never scanned, never changed.
OPAQUE_KEYS = frozenset({"base64", "signature", "persistedOutputPath", "tool_use_id"})
_IMAGE_TYPES = frozenset({"image", "document"})


def scans_tool(name: object) -> bool:
    """Whether the live hook looks at this tool's output (built-in text tools, MCP tools)."""
    return isinstance(name, str) and (name in TEXT_TOOLS or name.startswith("mcp__"))


def opaque_member(parent: Mapping[str, Any], key: str) -> bool:
    """Whether `parent[key]` (and all inside it) is binary data or an id, never scanned."""
    if key in OPAQUE_KEYS:
        return True
    binary = parent.get("type") in _IMAGE_TYPES or "media_type" in parent or "mimeType" in parent
    return binary and key in ("data", "source")


def tool_output_strings(value: object) -> Iterator[str]:
    """The strings of a tool output the live path scans (usecases.live masks these)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from tool_output_strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not opaque_member(value, key):
                yield from tool_output_strings(item)


# -- in the hook ----------------------------------------------------------------------------


class _Entry:
    __slots__ = ("behind", "confirm", "gates", "index", "literals", "module", "name", "width")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.name: str = raw["name"]
        self.module: str = raw["module"]
        self.index: int = raw["index"]
        self.literals: tuple[bytes, ...] = tuple(lit.encode("ascii") for lit in raw["literals"])
        gates = raw["gates"]
        self.gates: tuple[tuple[str, bool], ...] | None = (
            None if gates is None else tuple((str(p), bool(cl)) for p, cl in gates)
        )
        confirm = raw["confirm"]
        self.confirm: tuple[str, int] | None = None
        self.width: int | None = None  # how far a match reaches, when bounded around literals
        self.behind: int | None = None  # how far the full pattern's look-behinds read back
        if confirm is not None:
            self.confirm = (confirm[0], confirm[1])
            self.width, self.behind = confirm[2], confirm[3]


def _valid_entry(raw: object) -> bool:
    if not isinstance(raw, dict):
        return False
    name, module, index = raw.get("name"), raw.get("module"), raw.get("index")
    literals, gates, confirm = raw.get("literals"), raw.get("gates"), raw.get("confirm")
    return (
        isinstance(name, str)
        and 0 < len(name) <= 100
        and isinstance(module, str)
        and _MODULE.fullmatch(module) is not None
        and type(index) is int
        and 0 <= index < 1000
        and isinstance(literals, list)
        and all(
            isinstance(lit, str) and 0 < len(lit) <= 100 and lit.isascii() and lit == lit.lower()
            for lit in literals
        )
        and (
            gates is None
            or (
                isinstance(gates, list)
                and all(
                    isinstance(g, list)
                    and len(g) == 2
                    and isinstance(g[0], str)
                    and len(g[0]) <= _MAX_PATTERN
                    and isinstance(g[1], bool)
                    for g in gates
                )
            )
        )
        and (gates is not None or bool(literals))
        and (
            confirm is None
            or (
                isinstance(confirm, list)
                and len(confirm) == 4
                and isinstance(confirm[0], str)
                and len(confirm[0]) <= _MAX_PATTERN
                and type(confirm[1]) is int
                and confirm[1] & ~_ALLOWED_FLAGS == 0
                and all(w is None or (type(w) is int and w >= 0) for w in confirm[2:])
            )
        )
    )


class Prescan:
    """Which of the compiled detectors may match in a text (see the module docstring)."""

    __slots__ = ("_by_first", "_confirms", "_gated", "_literal_re", "_memo", "_owners", "entries")

    def __init__(self, entries: Sequence[_Entry]) -> None:
        self.entries = tuple(entries)
        owners: dict[bytes, list[int]] = {}
        gated: list[tuple[int, list[re.Pattern[bytes]]]] = []
        for i, entry in enumerate(self.entries):
            if entry.gates is not None:
                gated.append(
                    (
                        i,
                        [
                            re.compile(p.encode("latin-1"), re.IGNORECASE if caseless else 0)
                            for p, caseless in entry.gates
                        ],
                    )
                )
            for literal in entry.literals:
                owners.setdefault(literal, []).append(i)
        self._owners = owners
        self._gated = gated
        by_first: dict[int, list[bytes]] = {}
        for literal in owners:
            by_first.setdefault(literal[0], []).append(literal)
        self._by_first = by_first
        # The regex finds where a literal's first bytes occur (compiling whole literals took
        # four times as long, and the call is short); the loop checks the whole literal.
        self._literal_re = _trie_regex({lit[:_TRIE_DEPTH] for lit in owners}) if owners else None
        self._confirms: dict[int, re.Pattern[str]] = {}
        # The answers for the last few strings (kept with them, so an id is not reused): the
        # hook asks once to decide, and its scanner asks again for the same strings.
        self._memo: dict[int, tuple[str, frozenset[int], dict[int, tuple[int, int]]]] = {}

    @classmethod
    def from_json(cls, data: object) -> Prescan | None:
        """The prescan `compile_prescan` wrote, or None when `data` is not one, is malformed,
        or was compiled from other detection code than the installed one."""
        if not isinstance(data, dict) or data.get("format") != PRESCAN_FORMAT:
            return None
        raw = data.get("detectors")
        if not isinstance(raw, list) or len(raw) > _MAX_DETECTORS:
            return None
        if not all(_valid_entry(entry) for entry in raw):
            return None
        if data.get("stamp") != rules_stamp():
            return None
        try:
            return cls([_Entry(entry) for entry in raw])
        except (re.error, UnicodeEncodeError, RecursionError, OverflowError):
            return None

    def candidates(self, text: str) -> frozenset[int]:
        """The indexes (into `entries`) of the detectors that may match somewhere in `text`."""
        return self._answer(text)[1]

    def region(self, text: str, i: int) -> tuple[int, int] | None:
        """Where in `text` every match of detector `i`'s pattern lies, with the context its
        look-arounds read (so that the pattern finds the same there as in all of `text`); None
        when that is not known (no bounded reach, no literal place, a text that is not ASCII)."""
        entry = self.entries[i]
        places = self._answer(text)[2].get(i)
        if places is None or entry.width is None or entry.behind is None:
            return None
        first, last_end = places
        # A match holds a literal, is at most `width` long with its look-aheads, and its
        # look-behinds (and a `\b`) read at most `behind` + 1 characters before it.
        return (
            max(0, first - entry.width - entry.behind - 1),
            min(len(text), last_end + entry.width + 1),
        )

    def _answer(self, text: str) -> tuple[str, frozenset[int], dict[int, tuple[int, int]]]:
        remembered = self._memo.get(id(text))
        if remembered is not None and remembered[0] is text:
            return remembered
        places: dict[int, tuple[int, int]] = {}
        answer = (text, frozenset(self._candidates(text, places)), places)
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[id(text)] = answer
        return answer

    def _candidates(self, text: str, places: dict[int, tuple[int, int]]) -> set[int]:
        if _PLACEHOLDER_PREFIX in text:
            return set(range(len(self.entries)))
        data = text.encode("utf-8", "surrogatepass")
        found: set[int] = set()
        ruled_out: set[int] = set()
        if self._literal_re is not None:
            self._literal_candidates(text, data.lower(), found, ruled_out, places)
        for i, gates in self._gated:
            woken = i not in found and any(gate.search(data) for gate in gates)
            if woken and self._confirmed(i, text, None):
                found.add(i)
        return found

    def _literal_candidates(
        self,
        text: str,
        lowered: bytes,
        found: set[int],
        ruled_out: set[int],
        places: dict[int, tuple[int, int]],
    ) -> None:
        """Every place a literal occurs (`places`: per detector, where the first starts and the
        last ends, for an ASCII text, whose byte positions are its character positions)."""
        aligned = text.isascii()
        attempts: dict[int, int] = {}
        search = self._literal_re
        assert search is not None  # noqa: S101 - the caller checked
        position = 0
        while True:
            match = search.search(lowered, position)
            if match is None:
                return
            at = match.start()
            position = at + 1
            for literal in self._by_first[lowered[at]]:
                if not lowered.startswith(literal, at):
                    continue
                end = at + len(literal)
                for i in self._owners[literal]:
                    if aligned:
                        known = places.get(i)
                        places[i] = (at, end) if known is None else (known[0], max(known[1], end))
                    if i in found or i in ruled_out:
                        continue
                    tries = attempts.get(i, 0)
                    attempts[i] = tries + 1
                    window = (at, at + len(literal)) if aligned and tries < _MAX_WINDOWS else None
                    if self._confirmed(i, text, window):
                        found.add(i)
                    elif window is None:
                        ruled_out.add(i)  # confirmed on the whole text: it cannot match

    def _confirmed(self, i: int, text: str, window: tuple[int, int] | None) -> bool:
        """Whether detector `i`'s confirmation matches around `window` (a literal's place), or
        anywhere in `text` (window None, or a confirmation not bounded around its literals)."""
        entry = self.entries[i]
        if entry.confirm is None:
            return True
        pattern = self._confirms.get(i)
        if pattern is None:
            pattern = re.compile(entry.confirm[0], entry.confirm[1])
            self._confirms[i] = pattern
        if window is None or entry.width is None:
            return pattern.search(text) is not None
        width = entry.width
        start, end = window
        return pattern.search(text, max(0, start - width), min(len(text), end + width)) is not None


def _trie_regex(literals: Iterable[bytes]) -> re.Pattern[bytes]:
    """One regex matching where any of `literals` starts, shaped like a trie: at each place
    the engine follows one branch per byte instead of trying every literal (an alternation of
    ~200 literals read 1 MB in 500 ms, this one in about 45 ms)."""
    trie: dict[int, Any] = {}
    for literal in literals:
        node = trie
        for byte in literal:
            node = node.setdefault(byte, {})
        node[-1] = {}  # a literal ends here

    def emit(node: dict[int, Any]) -> bytes:
        if -1 in node:
            return b""  # a literal ends here: matching its prefix is enough
        branches = [re.escape(bytes([b])) + emit(child) for b, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"

    return re.compile(emit(trie))
