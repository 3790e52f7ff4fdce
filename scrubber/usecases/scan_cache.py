"""The audit's scan cache (`state/scan-cache/`): what an earlier audit found in each file, so
that a file that did not change answers from it and an appended transcript is scanned from
where the last scan stopped.

Per scanned file: its size, mtime_ns, ctime_ns, inode and device as they were when the scan
began, the offset and number of its last settled line (newline-terminated: a torn last line is
scanned again), keyed digests of its first bytes and of every byte before that offset (an
append leaves both alone; an edit anywhere in the settled part does not, whatever it does to
the size and mtime: `vim` with backupcopy=yes and `rsync --inplace` rewrite in place), the tool calls the scan remembered at the end
(targets redacted: a command line may hold a secret), and its findings as fingerprints and
places. Never a value, nor a project folder's name or a path: a session that changes gets the values its unchanged files hold back by
reading them again at the cached places (audit_resume.py), checked against the fingerprints.

A session is the unit that is answered from the cache or looked at again (a value found in one
file of a session is a finding in the others). Sessions are kept in one shard per project
folder (and one for the files outside any project), named by a keyed digest of its name (a
folder's name may hold a token; so may a file's path, and files and sessions are named by keyed
digests too): a shard is
rewritten whole when one of its sessions changed, and fewer shards cost fewer fsyncs (a shard
per session made writing the cache of 300 sessions cost 3 s). Every shard is 0600 in a 0700 folder, written atomically, and starts with an
HMAC of its body under the installation's fingerprint key, taken with the fingerprint of the
rules (format, scrubber version, the detection code, the policy's detection settings, the
detectors, the key). A shard that is not a regular file of ours, not private, damaged, signed
with another key or written for other rules is ignored, never trusted: its files are scanned.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import scrubber
from scrubber import paths
from scrubber.detection.context import ClassifiedCall
from scrubber.detection.detector import SourceKind
from scrubber.detection.finding import Finding
from scrubber.detection.scan import SecretScanner
from scrubber.durable import PRIVATE_FILE_MODE, atomic_write
from scrubber.errors import ScrubberError
from scrubber.policy.model import Policy
from scrubber.transcript.jsonl import json_loads_for_strings

CACHE_FORMAT = 3  # 2: shards, sessions and files named by keyed digests; 3: findings in keys
CACHE_FOLDER = "scan-cache"
_DIGEST_BYTES = 4096  # how much of a file's head its own digest covers
_HASH_CHUNK = 1 << 20
_MAX_SHARD_BYTES = 256 << 20  # a bigger shard is not one we wrote: ignored unread
_SHARD_NAME = re.compile(r"[0-9a-f]{40}\.json")  # what `_shard_path` names: nothing else is ours
# The code whose change changes what a scan finds: its bytes are part of the rules' fingerprint
# (the version alone does not change in an editable install).
_RULE_CODE = ("detection", "transcript", "redaction/copies.py", "usecases/audit.py",
              "usecases/audit_copies.py", "usecases/audit_resume.py", "usecases/parts.py")  # fmt: skip


class Verdict(StrEnum):
    FRESH = "fresh"  # unchanged since the cached scan: answer from the cache
    APPENDED = "appended"  # lines were added after the settled ones: scan from there
    CHANGED = "changed"  # anything else: scan it all


@dataclass(frozen=True, slots=True)
class FileState:
    """A scanned file as it was when its scan began, and where the scan may resume."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    settled: int  # offset just past the last newline-terminated line scanned
    settled_lines: int  # the number of that line (0: none)
    head: str  # keyed digest of the first bytes before `settled`
    tail: str  # keyed digest of the bytes just before `settled`


@dataclass(slots=True)
class CachedFile:
    """What the cached scan of one file found (findings in report order, copies included)."""

    state: FileState
    # As stored (see `findings_in`): tens of thousands of findings are read for a warm audit,
    # and each is made a Finding once, with its file's name.
    stored_findings: list[list[Any]]
    problems: list[tuple[int, str]] = field(default_factory=list)
    line_starts: dict[int, int] = field(default_factory=dict)
    calls: list[tuple[str, str, str, str]] = field(default_factory=list)  # id, name, target, source
    title: str | None = None  # the report's (redacted) title
    title_digest: str | None = None  # keyed digest of the raw title it was made from
    # The path and project as the report shows them (FileAudit.shown_path), redacted with the
    # values known when it was written: an unchanged session's are not known to a warm audit.
    shown: tuple[str | None, str | None] = (None, None)

    @classmethod
    def of(cls, state: FileState, findings: Sequence[Finding], **fields: Any) -> CachedFile:
        return cls(state, [_finding_to_json(f) for f in findings], **fields)

    def findings_in(self, file: str, *, upto_line: int | None = None) -> list[Finding]:
        """The findings, in `file` (the name the report gives the file); with `upto_line`,
        only those on lines up to it (copies found by value among them: the audit drops those
        of the sessions it looks at again, and keeps history.jsonl's of the others)."""
        if upto_line is None:
            return [finding_from_json(file, item) for item in self.stored_findings]
        return [
            finding_from_json(file, item) for item in self.stored_findings if item[0] <= upto_line
        ]


def verdict(cached: CachedFile | None, st: os.stat_result) -> Verdict:
    """What the cache can say of a file whose stat is `st` (the digests are checked apart, by
    `settled_part_unchanged`, for an append)."""
    if cached is None:
        return Verdict.CHANGED
    state = cached.state
    if (st.st_ino, st.st_dev) != (state.inode, state.device):
        return Verdict.CHANGED  # replaced (a rename over it): new content whatever the size
    if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (state.size, state.mtime_ns, state.ctime_ns):
        return Verdict.FRESH
    if st.st_size > state.size and state.settled > 0:
        return Verdict.APPENDED  # grown: the digests tell whether the settled part is untouched
    # Truncated, or written in place at the same size (its mtime may have been set back: the
    # ctime says it was touched).
    return Verdict.CHANGED


def calls_to_cache(
    calls: Mapping[str, ClassifiedCall], scanner: SecretScanner
) -> list[tuple[str, str, str, str]]:
    """The remembered tool calls, their names and targets redacted with the detectors (a
    command may hold a secret, and so may an MCP tool's name: `mcp__<server>__<tool>`, the
    server named as its user chose). The session's known values go too, before the cache is
    written (`audit_copies.redacted_calls`). What a resumed scan needs of a call is its source
    kind, its redacted target (the label) and, for its label, its name: all of it redacted
    already, so a resumed label is the one a full scan shows once redacted."""
    redacted: dict[str, str] = {}

    def shown(text: str) -> str:
        if text and text not in redacted:
            redacted[text] = scanner.redact_text(text)
        return redacted.get(text, "")

    return [
        (call_id, shown(call.name), shown(call.target), call.source.value)
        for call_id, call in calls.items()
    ]


def calls_from_cache(calls: Sequence[tuple[str, str, str, str]]) -> dict[str, ClassifiedCall]:
    return {
        call_id: ClassifiedCall(name, target, SourceKind(source))
        for call_id, name, target, source in calls
    }


Group = dict[str, CachedFile]  # one session's files, by ScanCache.key


class ScanCache:
    """The shards of one scrubber folder, read when first asked for, written when changed."""

    def __init__(self, folder: Path, home: Path, scanner: SecretScanner, policy: Policy) -> None:
        self.folder = folder
        self._home = home
        self._scanner = scanner
        self.rules = rules_fingerprint(scanner, policy)
        self._shards: dict[str, dict[str, Group]] = {}
        # Each name's digest, made once a run: an audit asks for a file's several times (to
        # plan, to look up, to store), 140,000 HMACs for 20,000 sessions.
        self._names: dict[str, str] = {}
        # A cache folder that is not ours (a link, another owner, open to others) is neither
        # read nor written, and the audit goes on without it: a cache can only save time.
        self._writable = True
        try:
            present = os.path.lexists(folder)
            self._usable = paths.check_private_dir(folder, home) if present else True
        except (ScrubberError, OSError):
            self._usable = self._writable = False

    @classmethod
    def of(cls, home: Path, scanner: SecretScanner, policy: Policy) -> ScanCache:
        return cls(paths.state_dir(home) / CACHE_FOLDER, home, scanner, policy)

    def key(self, path: Path) -> str:
        """A file's name in its shard: a keyed digest of its absolute path, symlinks left as
        they are (the audit never follows one out of the config dir). A path holds its
        project folder's name, and that may hold a token: the cache keeps no name."""
        return self._name(str(path.absolute()))

    def _name(self, text: str) -> str:
        name = self._names.get(text)
        if name is None:
            name = self._names[text] = self._scanner.fingerprint("scan-cache name\0" + text)[:32]
        return name

    def files(self, shard: str, group: str) -> Group:
        """The cached files of a session (by `key`) in a shard (its project folder's name);
        empty when the shard is absent or not to be trusted."""
        return self._shard(shard).get(self._name(group), {})

    def _shard(self, shard: str) -> dict[str, Group]:
        groups = self._shards.get(shard)
        if groups is None:
            groups = self._read(shard) if self._usable else {}
            self._shards[shard] = groups
        return groups

    def forget(self) -> None:
        """Answer nothing from what is on disk (`--no-cache`): every file is scanned, and the
        shards are written afresh."""
        self._usable = False
        self._shards.clear()

    def drop_others(self, shard: str, present: Iterable[str]) -> bool:
        """Forget the sessions of a shard other than `present` (after an audit of the whole
        config dir, which names every session still there: the others were deleted, and no
        audit looks at them again): True when one was, and the shard is to be written."""
        groups = self._shard(shard)
        kept = {self._name(group) for group in present}
        gone = [name for name in groups if name not in kept]
        for name in gone:
            del groups[name]
        return bool(gone)

    def keep_only(self, shards: Iterable[str]) -> None:
        """Delete the shard files of every other shard (the project folders that are gone):
        only after an audit of the whole config dir, which names every shard still wanted."""
        if not paths.check_private_dir(self.folder, self._home):
            return  # not a folder of ours: nothing in it is deleted
        wanted = {self._shard_path(shard).name for shard in shards}
        with contextlib.suppress(OSError):
            for path in self.folder.glob("*.json"):
                if path.name not in wanted and _SHARD_NAME.fullmatch(path.name):
                    path.unlink(missing_ok=True)

    def _shard_path(self, shard: str) -> Path:
        return self.folder / (self._shard_id(shard) + ".json")

    def _shard_id(self, shard: str) -> str:
        """A project folder's name may hold a token (a cwd of `/home/u/ghp_…`): a shard is
        named, inside and out, by a keyed digest of it (40 hex digits)."""
        return self._scanner.fingerprint("scan-cache shard\0" + shard)[:40]

    def _read(self, shard: str) -> dict[str, Group]:
        try:
            with paths.open_regular(self._shard_path(shard), follow=False) as handle:
                st = os.fstat(handle.fileno())
                if st.st_uid != os.geteuid() or st.st_mode & 0o077:
                    return {}  # not ours, or open to others: not to be trusted
                if st.st_size > _MAX_SHARD_BYTES:
                    return {}
                data = handle.read()
        except OSError:
            return {}
        mac, _, body = data.partition(b"\n")
        if mac.decode("latin-1") != self._mac(body):
            return {}  # damaged, or written with another key or for other rules
        with contextlib.suppress(ValueError, TypeError, KeyError, IndexError, AttributeError):
            # orjson when installed. Its integers are exact to 64 bits, and the states' are
            # nanosecond times (19 digits: `json_loads` would take them to the stdlib); one
            # past that comes back a float, which `_file_from_json` refuses.
            parsed = json_loads_for_strings(body)
            if parsed["format"] == CACHE_FORMAT and parsed["shard"] == self._shard_id(shard):
                return {
                    group: {path: _file_from_json(item) for path, item in files.items()}
                    for group, files in parsed["groups"].items()
                }
        return {}

    def _mac(self, body: bytes) -> str:
        return self._scanner.fingerprint(f"scan-cache\0{self.rules}\0" + body.decode("latin-1"))

    def store(self, shard: str, groups: Mapping[str, Group]) -> None:
        """Replace these sessions' entries in a shard and write it (best effort: a cache that
        cannot be written is not). A session with no entry left is dropped."""
        kept = self._shard(shard)
        for group, files in groups.items():
            if files:
                kept[self._name(group)] = files
            else:
                kept.pop(self._name(group), None)
        body = json.dumps(
            {
                "format": CACHE_FORMAT,
                "shard": self._shard_id(shard),
                "groups": {
                    group: {path: _file_to_json(item) for path, item in files.items()}
                    for group, files in kept.items()
                },
            },
            separators=(",", ":"),
        ).encode()
        if not self._writable:
            return
        try:
            paths.ensure_private_dir(self.folder, self._home)
            mac = self._mac(body).encode()
            atomic_write(self._shard_path(shard), [mac, b"\n", body], mode=PRIVATE_FILE_MODE)
        except (ScrubberError, OSError):
            return


def rules_fingerprint(scanner: SecretScanner, policy: Policy) -> str:
    """What the cached findings depend on, besides the file: a cache made under other rules
    is not trusted."""
    digest = hashlib.sha256()
    digest.update(f"{CACHE_FORMAT}\0{scrubber.__version__}\0{_code_digest()}\0".encode())
    digest.update(repr(policy.detection).encode())
    for detector in scanner.index.detectors:
        digest.update(f"\0{type(detector).__qualname__}:{detector.name}".encode())
    digest.update(scanner.fingerprint("scan-cache key").encode())
    return digest.hexdigest()


_CODE_DIGESTS: dict[tuple[str, ...], str] = {}


def code_digest(names: tuple[str, ...]) -> str:
    """A digest of the package's files and folders `names` (paths relative to the package):
    what a cache made by other code must not be trusted for. Computed once per process."""
    if names not in _CODE_DIGESTS:
        digest = hashlib.sha256()
        package = Path(scrubber.__file__).parent
        for name in names:
            where = package / name
            files = sorted(where.rglob("*.py")) if where.is_dir() else [where]
            for file in files:
                with contextlib.suppress(OSError):
                    digest.update(str(file.relative_to(package)).encode() + file.read_bytes())
        _CODE_DIGESTS[names] = digest.hexdigest()
    return _CODE_DIGESTS[names]


def _code_digest() -> str:
    return code_digest(_RULE_CODE)


def file_state(st: os.stat_result, settled: tuple[int, int], head: str, tail: str) -> FileState:
    return FileState(
        st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, *settled, head, tail
    )


def settled_digests(fd: int, settled: int, scanner: SecretScanner) -> tuple[str, str]:
    """Keyed digests (the fingerprint key's HMAC) of a file's first bytes and of all of its
    first `settled` bytes. The whole settled part, not samples of it: a same-size edit in the
    middle followed by an append must not pass for an append (a SHA-256 of the bytes, read in
    chunks, then keyed: about 2 ms per MB)."""
    head = os.pread(fd, min(settled, _DIGEST_BYTES), 0)
    whole = hashlib.sha256()
    offset = 0
    if len(head) == settled:  # a small file: its head is all of it, read once
        whole.update(head)
        offset = settled
    while offset < settled:
        chunk = os.pread(fd, min(_HASH_CHUNK, settled - offset), offset)
        if not chunk:
            break  # shorter than it was: the digest cannot match
        whole.update(chunk)
        offset += len(chunk)
    return keyed_digest(head, scanner), keyed_digest(whole.digest(), scanner)


def keyed_digest(data: bytes, scanner: SecretScanner) -> str:
    return scanner.fingerprint("scan-cache bytes\0" + data.decode("latin-1"))[:32]


def settled_part_unchanged(fd: int, cached: CachedFile, scanner: SecretScanner) -> bool:
    state = cached.state
    return settled_digests(fd, state.settled, scanner) == (state.head, state.tail)


# -- JSON -------------------------------------------------------------------------------------


def _finding_to_json(f: Finding) -> list[Any]:
    return [f.line, f.json_path, f.span[0], f.span[1], f.kind, f.detector, f.fingerprint,
            f.session_id, f.record_uuid, f.source, f.in_thinking, f.length, f.prefix,
            f.by_value, f.in_key]  # fmt: skip


def _finding_types() -> frozenset[tuple[type, ...]]:
    """The types a stored finding's fields may have, field by field (a pointer, session id,
    record uuid and source may be null)."""
    text, maybe = (str,), (str, type(None))
    fields = [(int,), maybe, (int,), (int,), text, text, text, maybe, maybe, maybe, (bool,),
              (int,), text, (bool,), (bool,)]  # fmt: skip
    return frozenset(itertools.product(*fields))


_FINDING_TYPES = _finding_types()


def checked_finding(item: list[Any]) -> list[Any]:
    """A stored finding, once its fields are of the types a Finding's are (one look-up of
    their types: a warm audit checks tens of thousands)."""
    if type(item) is not list or tuple(map(type, item)) not in _FINDING_TYPES:
        raise TypeError("a stored finding's fields are not of a finding's types")
    return item


def finding_from_json(file: str, item: list[Any]) -> Finding:
    (line, pointer, start, end, kind, detector, fingerprint, session_id, record_uuid, source,
     in_thinking, length, prefix, by_value, in_key) = item  # fmt: skip
    return Finding(file, line, pointer, (start, end), kind, detector, fingerprint, session_id,
                   record_uuid, source, in_thinking, length, prefix, by_value, in_key)  # fmt: skip


def _file_to_json(item: CachedFile) -> dict[str, Any]:
    s = item.state
    return {
        "state": [
            s.size,
            s.mtime_ns,
            s.ctime_ns,
            s.inode,
            s.device,
            s.settled,
            s.settled_lines,
            s.head,
            s.tail,
        ],
        "findings": item.stored_findings,
        "problems": item.problems,
        "line_starts": list(item.line_starts.items()),
        "calls": item.calls,
        "title": [item.title, item.title_digest],
        "shown": list(item.shown),
    }


def _file_from_json(item: dict[str, Any]) -> CachedFile:
    size, mtime, ctime, inode, device, settled, settled_lines, head, tail = item["state"]
    numbers = (size, mtime, ctime, inode, device, settled, settled_lines)
    if not all(isinstance(v, int) for v in numbers):
        raise TypeError("a file state is not numbers")
    title, title_digest = item["title"]
    shown_path, shown_project = item["shown"]
    if not all(isinstance(v, str | None) for v in (shown_path, shown_project)):
        raise TypeError("a shown place is not text")
    return CachedFile(
        FileState(size, mtime, ctime, inode, device, settled, settled_lines, str(head), str(tail)),
        [checked_finding(f) for f in item["findings"]],
        [(int(line), str(why)) for line, why in item["problems"]],
        {int(offset): int(number) for offset, number in item["line_starts"]},
        [(str(i), str(n), str(t), str(SourceKind(s))) for i, n, t, s in item["calls"]],
        title if isinstance(title, str) else None,
        title_digest if isinstance(title_digest, str) else None,
        (shown_path, shown_project),
    )
