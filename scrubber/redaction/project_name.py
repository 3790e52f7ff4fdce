"""A project folder's name as every report shows it, with the secrets it holds replaced.

Claude Code names a session's project folder after its working directory, every character but
letters and digits made `-` (reference/claude-code.md): cwd `/home/u/w-ghp_…` is the folder
`-home-u-w-ghp-…`. A token in the cwd is then in the folder name, but altered: no detector
knows the `ghp-` form, and a value found elsewhere (`GITHUB_TOKEN=…` in file-history) matches
only where it stands as itself. So a name is cleaned here of
- what the detectors find in it (word by word, and whole: a token may hold dashes),
- every known value of the session, as itself and in its folder form,
- what the detectors find in the session's cwd, placed in the name by that same mapping (one
  character for one, so a span of the cwd is the same span of the name, also when Claude Code
  cut a long name and added a hash).
The commands that scan nothing (`scrub sessions`, a hint listing projects, an archive listing)
still know the cwd, read from the transcript's metadata: its detectors' values count here.

Every span found is replaced at once (overlapping spans merged), so no placeholder is ever
read again by a detector and no half of a secret stays beside one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from scrubber.detection.known_values import MIN_LENGTH, KnownValues, Scope
from scrubber.detection.placeholder import PLACEHOLDER_RE, make_placeholder
from scrubber.detection.scan import SecretScanner

# Every character Claude Code makes `-` in a folder name: all but ASCII letters and digits.
_NOT_IN_FOLDER_NAMES = re.compile(r"[^A-Za-z0-9]")


def folder_form(text: str) -> str:
    """`text` as Claude Code writes it into a folder name: only ASCII letters and digits kept,
    every other character `-`, one for one."""
    return _NOT_IN_FOLDER_NAMES.sub("-", text)


@dataclass(frozen=True, slots=True)
class NamedValue:
    """A secret value with the placeholder that replaces it (held in memory only: its repr
    shows the placeholder alone)."""

    value: str
    placeholder: str

    def __repr__(self) -> str:
        return f"NamedValue({self.placeholder})"


def _forms(value: str) -> Iterator[str]:
    """The value as itself and in its folder form, when that form still says something (a
    value made mostly of punctuation would turn into dashes that match any path)."""
    yield value
    mangled = folder_form(value)
    if mangled != value and len(mangled) - mangled.count("-") >= MIN_LENGTH:
        yield mangled


def _words(name: str) -> str:
    """`name` with its dashes made spaces, but inside placeholders (a name shown once may be
    shown again: `[REDACTED:github-token:…]` must stay one)."""
    pieces: list[str] = []
    cursor = 0
    for found in PLACEHOLDER_RE.finditer(name):
        pieces += (name[cursor : found.start()].replace("-", " "), found.group())
        cursor = found.end()
    pieces.append(name[cursor:].replace("-", " "))
    return "".join(pieces)


def _occurrences(text: str, needle: str) -> Iterator[tuple[int, int]]:
    at = text.find(needle)
    while at >= 0:
        yield at, at + len(needle)
        at = text.find(needle, at + 1)


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def _merged(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping or touching spans as one, with the placeholder of the widest among them."""
    merged: list[tuple[int, int, str, int]] = []
    for start, end, placeholder in sorted(spans):
        if merged and start <= merged[-1][1]:
            low, high, kept, width = merged[-1]
            if end - start > width:
                kept, width = placeholder, end - start
            merged[-1] = (low, max(high, end), kept, width)
        else:
            merged.append((start, end, placeholder, end - start))
    return [(start, end, placeholder) for start, end, placeholder, _ in merged]


class ProjectNames:
    """Shows project folder names with the detectors of `scanner` and the values of `known`
    (by scope: a session id). Each (name, scope, cwds) is worked out once."""

    def __init__(self, scanner: SecretScanner, known: KnownValues | None = None) -> None:
        self._scanner = scanner
        self._known = known
        self._done: dict[tuple[str, Scope | None, tuple[str, ...]], str] = {}
        self._forms: _FormIndex | None = None
        self._forms_of = -1  # the `known.changes` the index and the names done were made at

    def __repr__(self) -> str:
        return f"ProjectNames({len(self._done)} names)"

    def shown(self, name: str, scope: Scope | None = None, cwds: Iterable[str] = ()) -> str:
        """`name` (a project folder's name) with every secret replaced by its placeholder:
        those the detectors find in it, the values known for `scope` (None: of any session,
        for a name shown apart from its sessions), and those the detectors find in the
        session's working directories `cwds`."""
        key = (name, scope, tuple(c for c in cwds if c))
        if self._known is not None and self._known.changes != self._forms_of:
            self._forms = _FormIndex(self._known)
            self._forms_of = self._known.changes
            self._done.clear()
        done = self._done.get(key)
        if done is None:
            done = self._clean(name, scope, key[2])
            self._done[key] = done
        return done

    def _clean(self, name: str, scope: Scope | None, cwds: tuple[str, ...]) -> str:
        # Dashes made spaces keep every position: these are spans of `name`.
        spans = self._found(_words(name), name)
        forms = self._forms
        # Values the detectors find in a cwd count as known for the name too.
        extra: list[NamedValue] = []
        for cwd in cwds:
            found = self._in_cwd(cwd, scope, extra)
            extra += [named for _, _, named in found if named not in extra]
            # The folder is the cwd's folder form: a span of the cwd is the same span of the
            # name, as far as they agree (a long name is cut and ends in a hash).
            agree = _common_prefix(name, folder_form(cwd))
            spans += [(s, min(e, agree), n.placeholder) for s, e, n in found if s < agree]
        if forms is not None:
            spans += [(s, e, n.placeholder) for s, e, n in forms.occurrences(name, scope)]
        for named in extra:
            for form in _forms(named.value):
                spans += [(s, e, named.placeholder) for s, e in _occurrences(name, form)]
        if not spans:
            return name
        pieces: list[str] = []
        cursor = 0
        for start, end, placeholder in _merged(spans):
            pieces += (name[cursor:start], placeholder)
            cursor = end
        pieces.append(name[cursor:])
        return "".join(pieces)

    def _found(self, by_words: str, whole: str) -> list[tuple[int, int, str]]:
        """What the detectors find word by word (`by_words`: `whole` with its separators made
        spaces, same length), then in the whole text where no word's find is: a detector may
        take all of `-home-u-ghp_…` for one value, and the readable part would go with it; a
        value that holds separators (a key with `/`) is found whole."""
        words = [(f.hit.start, f.hit.end, f.placeholder) for f in self._scanner.scan_text(by_words)]
        wholes = [
            (f.hit.start, f.hit.end, f.placeholder)
            for f in self._scanner.scan_text(whole)
            if not any(f.hit.start < end and start < f.hit.end for start, end, _ in words)
        ]
        return words + wholes

    def _in_cwd(
        self, cwd: str, scope: Scope | None, extra: list[NamedValue]
    ) -> list[tuple[int, int, NamedValue]]:
        """Where the cwd holds a secret: the detectors' finds and the copies of the values
        known for `scope` and of `extra` (found in the session's other cwds), as themselves."""
        found = [
            (start, end, NamedValue(cwd[start:end], placeholder))
            for start, end, placeholder in self._found(cwd.replace("/", " "), cwd)
        ]
        if self._forms is not None:
            found += self._forms.occurrences(cwd, scope, as_itself=True)
        for named in extra:
            found += [(s, e, named) for s, e in _occurrences(cwd, named.value)]
        return found


class _FormIndex:
    """Every known value in its forms (`_forms`), looked up by its first `MIN_LENGTH`
    characters: a name or cwd is a few hundred characters, and a fleet knows thousands of
    values, so each text is read once rather than searched for each value."""

    def __init__(self, known: KnownValues) -> None:
        self._named: list[NamedValue] = []
        self._scopes: list[frozenset[Scope]] = []
        # The forms by their start: (form, the value's number, whether it is the value itself).
        self._by_start: dict[str, list[tuple[str, int, bool]]] = {}
        for value, info, scopes in known.items():
            number = len(self._named)
            self._named.append(NamedValue(value, make_placeholder(info.kind, info.fingerprint)))
            self._scopes.append(scopes)
            for form in _forms(value):
                self._by_start.setdefault(form[:MIN_LENGTH], []).append(
                    (form, number, form == value)
                )

    def occurrences(
        self, text: str, scope: Scope | None, *, as_itself: bool = False
    ) -> list[tuple[int, int, NamedValue]]:
        """Every occurrence in `text` of a form of a value known for `scope` (None: any);
        `as_itself`: of the values as themselves only."""
        found: list[tuple[int, int, NamedValue]] = []
        by_start = self._by_start
        for at in range(len(text) - MIN_LENGTH + 1):
            for form, number, itself in by_start.get(text[at : at + MIN_LENGTH], ()):
                if as_itself and not itself:
                    continue
                if scope is not None and scope not in self._scopes[number]:
                    continue
                if text.startswith(form, at):
                    found.append((at, at + len(form), self._named[number]))
        return found


def path_shown(path: Path | str, shown: Mapping[str, str]) -> str:
    """`path` with each part that is a project folder's name (a key of `shown`) as shown."""
    parts = Path(path).parts
    return str(Path(*(shown.get(part, part) for part in parts))) if parts else str(path)
