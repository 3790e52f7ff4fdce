"""The redaction cache (`state/redact-cache/`): what an earlier `scrub redact` wrote, so that a
run over files that did not change writes nothing again, and its output stays what a full run
writes (usecases/redact.py).

A copy is current when its source has the size, mtime, ctime, inode and device it had when its
first pass read it, the copy in DEST is the file we published (same stat, ctime included, and
keyed digests of its first and last bytes), and the values known for the copy's session (the
session's values, found in any of its files or its lines of history.jsonl; history.jsonl's:
every session's) are the ones it was published with: a keyed digest of their fingerprints and
kinds is kept, never a value. A session is the unit: it is answered from the cache only when
all of its files are current and are the files cached for it. When anything else is redone,
the values of the files answered from the cache are read back from them at the places their
first pass found them (transcripts; audit_resume.recovered_values checks each against its
fingerprint) or found again (plain-text side files), so that the copies pass sees every value
a full run sees, in the same order.

In place, a file is current when it has the stat it had just after our last rewrite (or look)
left it: a run whose every file is current changes nothing and is skipped whole; any other run
rewrites them all as before (redact_in_place.py: lock, settled check, fold-in of tails).

The cache file is 0600 in a 0700 folder, written atomically, and starts with an HMAC of its
body under the installation's fingerprint key, taken with the fingerprint of the rules and the
redaction code: one that is not ours, not private, damaged, or made under other rules is
ignored and everything is redone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.detection.known_values import KnownValues, Scope
from scrubber.detection.scan import SecretScanner
from scrubber.durable import PRIVATE_FILE_MODE, atomic_write
from scrubber.policy.model import Policy
from scrubber.redaction.copies import FoundValue, scope_of, session_of_path
from scrubber.redaction.lines import FileKind, FileRedaction
from scrubber.usecases.audit_report import FileAudit, ScanTarget
from scrubber.usecases.audit_resume import recovered_values
from scrubber.usecases.redact_in_place import redact_files_in_place
from scrubber.usecases.scan_cache import (
    checked_finding,
    code_digest,
    finding_from_json,
    rules_fingerprint,
    settled_digests,
)

CACHE_FORMAT = 1
CACHE_FOLDER = "redact-cache"
_MAX_BYTES = 256 << 20  # a bigger cache is not one we wrote: ignored unread
# The code whose change changes what a redaction writes, besides the detection code the scan
# cache's rules fingerprint already covers.
_REDACTION_CODE = ("redaction", "usecases/redact.py", "usecases/redact_cache.py",
                   "usecases/redact_in_place.py")  # fmt: skip
IN_PLACE = "in-place"  # the cache of in-place rewrites (copies: one per destination root)


def file_stat(st: os.stat_result) -> list[int]:
    """What says a file is the one it was: a write changes the ctime whatever it puts back."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


@dataclass(slots=True)
class CopyEntry:
    """One copy as the last run left it (or, in place, one rewritten file)."""

    source: str
    source_stat: list[int]  # as its first pass read it (in place: as the rewrite left it)
    dest_stat: list[int] | None = None  # the published copy (None: nothing written)
    dest_digest: str = ""
    # The first pass's findings in a transcript (scan_cache's stored form: places and
    # fingerprints) and its lines' offsets: where its values are read back from.
    places: list[list[Any]] = field(default_factory=list)
    line_starts: list[list[int]] = field(default_factory=list)
    scope_digest: str = ""  # of the values known for its session when it was published
    report: dict[str, Any] = field(default_factory=dict)  # the FileRedaction's counts


def unit_of(source: Path) -> Scope:
    """The unit answered from the cache: the file's session (a file of its own outside any;
    history.jsonl is one)."""
    return scope_of(None, source)


class RedactCache:
    """The entries of one destination root (or of in-place rewrites), by destination path."""

    def __init__(self, path: Path, home: Path, scanner: SecretScanner, rules: str) -> None:
        self.path = path
        self._home = home
        self.scanner = scanner
        self._rules = rules
        self.entries: dict[str, CopyEntry] = {}
        if paths.check_private_dir(path.parent, home) or not path.parent.exists():
            self.entries = self._read()

    @classmethod
    def of(
        cls, home: Path, scanner: SecretScanner, policy: Policy, where: str, thinking: str
    ) -> RedactCache:
        """The cache of copies under the destination root `where` made with `thinking` (or of
        in-place rewrites: `where` is IN_PLACE)."""
        rules = hashlib.sha256(
            f"{CACHE_FORMAT}\0{rules_fingerprint(scanner, policy)}\0{_code_digest()}\0"
            f"{where}\0{thinking}".encode()
        ).hexdigest()
        name = hashlib.sha256(f"{where}\0{thinking}".encode()).hexdigest()[:40] + ".json"
        return cls(paths.state_dir(home) / CACHE_FOLDER / name, home, scanner, rules)

    def forget(self) -> None:
        """Answer nothing from the cache (`--no-cache`); it is written afresh."""
        self.entries = {}

    def _mac(self, body: bytes) -> str:
        return self.scanner.fingerprint(f"redact-cache\0{self._rules}\0" + body.decode("latin-1"))

    def _read(self) -> dict[str, CopyEntry]:
        try:
            with paths.open_regular(self.path, follow=False) as handle:
                st = os.fstat(handle.fileno())
                if st.st_uid != os.geteuid() or st.st_mode & 0o077 or st.st_size > _MAX_BYTES:
                    return {}  # not ours, open to others, or not one we wrote
                data = handle.read()
        except OSError:
            return {}
        mac, _, body = data.partition(b"\n")
        if mac.decode("latin-1") != self._mac(body):
            return {}
        with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
            parsed = json.loads(body)
            if parsed["format"] == CACHE_FORMAT:
                return {
                    str(dest): _entry_from_json(item) for dest, item in parsed["copies"].items()
                }
        return {}

    def store(self) -> None:
        """Write the entries (best effort: a cache that cannot be written is not); those of
        sources no longer there (a deleted session's) are dropped."""
        self.drop_missing()
        copies = {dest: _entry_to_json(entry) for dest, entry in self.entries.items()}
        body = json.dumps({"format": CACHE_FORMAT, "copies": copies}, separators=(",", ":"))
        data = body.encode()
        try:
            paths.ensure_private_dir(self.path.parent, self._home)
            atomic_write(self.path, [self._mac(data).encode(), b"\n", data], mode=PRIVATE_FILE_MODE)
        except OSError:
            return

    def drop_missing(self) -> bool:
        """Forget the entries of sources no longer there: True when there was one."""
        kept = {d: e for d, e in self.entries.items() if os.path.lexists(e.source)}
        dropped = len(kept) != len(self.entries)
        self.entries = kept
        return dropped

    def drop_superseded(self, pairs: Sequence[tuple[Path, Path]]) -> None:
        """Copies recorded for a source that is now copied elsewhere (its project folder is
        named otherwise: redact_targets.copy_pairs, a token of its cwd no longer in the name)
        go, when the file there is still the very one written (its keyed digest) and the new
        copy is in place: no stale copy is left under the old name. A file changed since is
        left alone; its entry goes either way."""
        placed = {str(source): dest for source, dest in pairs}
        for old, entry in list(self.entries.items()):
            new = placed.get(entry.source)
            if new is None or str(new) == old or not new.is_file():
                continue
            del self.entries[old]
            written = Path(old)
            # Only a copy beside the new one (the same destination's projects/ folder).
            projects = next((p for p in new.parents if p.name == "projects"), None)
            if projects is None or not written.is_relative_to(projects) or ".." in written.parts:
                continue
            state = self.dest_state(written)
            if entry.dest_stat is None or state != (entry.dest_stat, entry.dest_digest):
                continue
            with contextlib.suppress(OSError):
                written.unlink()
                for folder in written.parents:  # its folders, once empty, up to projects/
                    if folder.name == "projects":
                        break
                    folder.rmdir()

    def dest_state(self, dest: Path) -> tuple[list[int], str] | None:
        """The stat and keyed digest of a published copy (None: not a regular file)."""
        try:
            with paths.open_regular(dest, follow=False) as handle:
                st = os.fstat(handle.fileno())
                head, tail = settled_digests(handle.fileno(), st.st_size, self.scanner)
        except OSError:
            return None
        return file_stat(st), head + tail


def current_copies(
    pairs: Sequence[tuple[Path, Path]], cache: RedactCache
) -> list[CopyEntry | None]:
    """Each pair's entry when its session may be answered from the cache (its files are those
    cached for it, none changed, and every copy is the one we wrote), else None."""
    entries: list[CopyEntry | None] = [_current(source, dest, cache) for source, dest in pairs]
    wanted: dict[Scope, set[str]] = {}
    for source, dest in pairs:
        wanted.setdefault(unit_of(source), set()).add(str(dest))
    cached: dict[Scope, set[str]] = {}
    for cached_dest, entry in cache.entries.items():
        unit = unit_of(Path(entry.source))
        if unit in wanted:
            cached.setdefault(unit, set()).add(cached_dest)
    stale = {unit for unit, dests in wanted.items() if cached.get(unit) != dests}
    stale.update(
        unit_of(source) for (source, _), e in zip(pairs, entries, strict=True) if e is None
    )
    return [
        None if unit_of(source) in stale else entry
        for (source, _), entry in zip(pairs, entries, strict=True)
    ]


def _current(source: Path, dest: Path, cache: RedactCache) -> CopyEntry | None:
    entry = cache.entries.get(str(dest))
    if entry is None or entry.source != str(source):
        return None
    try:
        st = source.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or file_stat(st) != entry.source_stat:
        return None
    if entry.dest_stat is None:
        return entry if entry.report.get("skipped") else None  # binary: nothing was written
    state = cache.dest_state(dest)
    if state is None or state != (entry.dest_stat, entry.dest_digest):
        return None  # missing, or not the copy we wrote
    return entry


def scope_digests(known: KnownValues) -> dict[Scope | None, str]:
    """A keyed digest of the values known for each scope, from their fingerprints and kinds
    (what a copy's placeholders are made of); under None, of every value with its scopes
    (history.jsonl's lines belong to every session)."""
    by_scope: dict[Scope | None, list[str]] = {None: []}
    for _, info, scopes in known.items():
        for scope in scopes:
            by_scope.setdefault(scope, []).append(f"{info.fingerprint}:{info.kind}")
        by_scope[None].append(f"{info.fingerprint}:{info.kind}:{','.join(sorted(scopes))}")
    return {
        scope: hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest()[:32]
        for scope, items in by_scope.items()
    }


_NO_VALUES = hashlib.sha256(b"").hexdigest()[:32]


def digest_for(digests: dict[Scope | None, str], source: Path) -> str:
    """The digest of the values a copy of `source` is redacted with."""
    return digests.get(session_of_path(source), _NO_VALUES)


def recovered_from(
    source: Path, entry: CopyEntry, scanner: SecretScanner
) -> list[FoundValue] | None:
    """A transcript's values, read back at the places its first pass found them (None: one is
    not there any more)."""
    role = "history" if session_of_path(source) is None else "transcript"
    target = ScanTarget(source, True, role=role)
    findings = [finding_from_json(str(source), item) for item in entry.places]
    audit = FileAudit(target, findings, line_starts={p[0]: p[1] for p in entry.line_starts})
    return recovered_values(audit, None, scanner)


def report_of(source: Path, dest: Path | None, entry: CopyEntry) -> FileRedaction:
    """What the run that wrote a current copy said of it."""
    report = entry.report
    result = FileRedaction(source, dest, FileKind(report["kind"]))
    result.lines = int(report["lines"])
    result.lines_changed = int(report["lines_changed"])
    result.replaced = int(report["replaced"])
    result.left_in_thinking = int(report["left_in_thinking"])
    result.left_in_keys = int(report["left_in_keys"])
    result.by_kind.update({str(k): int(n) for k, n in report["by_kind"].items()})
    result.problems = [(int(n), str(p)) for n, p in report["problems"]]
    result.skipped = report["skipped"] if isinstance(report["skipped"], str) else None
    return result


def report_to_json(result: FileRedaction) -> dict[str, Any]:
    return {
        "kind": result.kind.value,
        "lines": result.lines,
        "lines_changed": result.lines_changed,
        "replaced": result.replaced,
        "left_in_thinking": result.left_in_thinking,
        "left_in_keys": result.left_in_keys,
        "by_kind": dict(result.by_kind),
        "problems": [list(p) for p in result.problems],
        "skipped": result.skipped,
    }


# -- in place ---------------------------------------------------------------------------------


def current_in_place(files: Iterable[Path], cache: RedactCache) -> list[FileRedaction] | None:
    """What a run over `files` in place would report when every one is as our last rewrite
    (or look) left it: nothing replaced, the secrets left in thinking text still there. None
    when one is not."""
    results = []
    for path in files:
        entry = cache.entries.get(str(path))
        try:
            st = path.lstat()
        except OSError:
            return None
        if entry is None or not stat.S_ISREG(st.st_mode) or file_stat(st) != entry.source_stat:
            return None
        result = report_of(path, path, entry)
        result.lines_changed = result.replaced = 0
        result.by_kind.clear()
        results.append(result)
    return results


def redact_in_place_cached(
    files: Sequence[Path],
    scanner: SecretScanner,
    lock_dir: Path,
    cache: RedactCache | None,
    *,
    fresh: bool = True,
    env: Mapping[str, str] | None = None,
) -> list[FileRedaction]:
    """`redact_files_in_place`, skipped whole when every file is as our last rewrite (or look)
    left it (`fresh`: the cache may say so): redacting them again would change nothing."""
    if cache is not None and fresh and files:
        current = current_in_place(files, cache)
        if current is not None:
            return current
    results = redact_files_in_place(files, scanner, lock_dir, env=env)
    if cache is not None:
        remember_in_place(results, cache)
    return results


def remember_in_place(results: Iterable[FileRedaction], cache: RedactCache) -> None:
    """Each rewritten (or looked at) file's stat as the run left it."""
    for result in results:
        with contextlib.suppress(OSError):
            st = result.source.lstat()
            cache.entries[str(result.source)] = CopyEntry(
                str(result.source), file_stat(st), report=report_to_json(result)
            )
    cache.store()


# -- JSON -------------------------------------------------------------------------------------


def _entry_to_json(entry: CopyEntry) -> list[Any]:
    return [entry.source, entry.source_stat, entry.dest_stat, entry.dest_digest, entry.places,
            entry.line_starts, entry.scope_digest, entry.report]  # fmt: skip


def _ints(value: Any) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise TypeError("not a list of numbers")
    return list(value)


def _entry_from_json(item: Any) -> CopyEntry:
    source, source_stat, dest_stat, dest_digest, places, line_starts, scope_digest, report = item
    if not isinstance(source, str) or not isinstance(dest_digest, str):
        raise TypeError("an entry's names are not text")
    if not isinstance(scope_digest, str) or not isinstance(report, dict):
        raise TypeError("an entry's digest or report is not of its type")
    return CopyEntry(
        source,
        _ints(source_stat),
        None if dest_stat is None else _ints(dest_stat),
        dest_digest,
        [checked_finding(f) for f in places],
        [_ints(pair) for pair in line_starts],
        scope_digest,
        report,
    )


def _code_digest() -> str:
    return code_digest(_REDACTION_CODE)
