"""The redact use case: redacted copies of a session's files, each a value found in any of
them redacted in all of them (issue 12; redaction/copies.py).

Each file's first pass (redaction/lines.py) goes to a temp file beside its destination; once
every file was redacted, the values found in all of them are looked for in each temp file, the
lines still holding a copy are rewritten, and the file is published. Every write goes through a
temp file in the destination folder, fsync and rename, so a crash leaves the old file or the
new one. In-place rewrites are in redact_in_place.py, the proof (`--check`) in verify.py;
`run_redact` is what `scrub redact` asks for. A run over the config dir's sessions skips the
copies that are already current (redact_cache.py), writing what a full run writes.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrubber import paths
from scrubber.detection.known_values import KnownValues, Scope, ValueIndex
from scrubber.detection.registry import prefilter_engine
from scrubber.detection.scan import FileScan, LineScan, SecretScanner
from scrubber.durable import atomic_write, fsync_dir
from scrubber.errors import InputError, ScrubberError, UsageError
from scrubber.policy.model import Policy, ThinkingMode
from scrubber.redaction.copies import (
    CopyCounts,
    FoundValue,
    found_values,
    has_copies,
    remember,
    rewrite_copies,
    session_of_path,
)
from scrubber.redaction.lines import (
    FileKind,
    FileRedaction,
    LineRedaction,
    classify_file,
    redact_scanned,
    redact_text_stream,
)
from scrubber.transcript.jsonl import IO_BUFFER, RawLine
from scrubber.usecases import parts
from scrubber.usecases.audit_report import FINGERPRINT_SHOWN
from scrubber.usecases.parts import TranscriptLines
from scrubber.usecases.redact_cache import (
    IN_PLACE,
    CopyEntry,
    RedactCache,
    current_copies,
    digest_for,
    file_stat,
    recovered_from,
    redact_in_place_cached,
    report_of,
    report_to_json,
    scope_digests,
)
from scrubber.usecases.redact_targets import (
    Note,
    RedactRequest,
    copy_pairs,
    note_folders,
    select_files,
)

if TYPE_CHECKING:
    from scrubber.usecases.shown_names import FolderNames

_COPY_BLOCK = 1 << 20
# A parallel redaction's output comes part by part, with waits while later parts are still
# being redacted: it is written to disk as it comes (see `atomic_write`).
_SYNC_EVERY = 16 << 20
# A copy's first pass, beside its destination until every file of its session was redacted.
_PENDING_SUFFIX = ".scrub-pending"
IN_PLACE_NOTICE = (
    "--in-place rewrites the transcripts themselves. Secrets in tool results, prompts and "
    "replies are replaced; thinking blocks are left as they are (they are signed) and reported. "
    "On newer models a thinking block's signature also covers earlier messages, so resuming a "
    "rewritten session can make the API reject old thinking; the conversation text still loads. "
    "Keep an archive first if in doubt (scrub archive)."
)


def run_redact(
    request: RedactRequest,
    scanner: SecretScanner,
    thinking: ThinkingMode,
    *,
    note: Note,
    policy: Policy | None = None,
    folders: FolderNames | None = None,
) -> list[FileRedaction]:
    """What `scrub redact` was asked for: redacted copies (thinking text as `thinking` says),
    or the files rewritten in place (thinking text left alone). Values found in any file reach
    their copies in the others of the same session. With the `policy` the scanner was built
    from, what is already current is skipped (redact_cache.py; `request.use_cache`). `folders`
    learns the project folders of the files, to show them by (display only)."""
    selection = select_files(request, note)
    if folders is not None:
        note_folders(folders, request.config, selection.sources)
    # Only the config dir's sessions are remembered: files named one by one (a script's, a
    # benchmark's thousands) would each leave a cache behind.
    cached = policy is not None and not request.paths
    if request.in_place:
        note(IN_PLACE_NOTICE)
        lock_dir = paths.state_dir(request.home) / "locks"
        files = [*selection.sources, *selection.global_files]
        cache = None
        if cached and policy is not None:
            cache = RedactCache.of(request.home, scanner, policy, IN_PLACE, "keep")
        return redact_in_place_cached(files, scanner, lock_dir, cache, fresh=request.use_cache)
    pairs = copy_pairs(request, selection, folders.project if folders is not None else None)
    cache = None
    if cached and policy is not None and pairs:
        where = str((request.output or paths.redacted_dir(request.home)).absolute())
        cache = RedactCache.of(request.home, scanner, policy, where, thinking.value)
        if not request.use_cache:
            cache.forget()
    return redact_copies(pairs, scanner, thinking=thinking, known=KnownValues(), cache=cache)


def redact_copies(
    pairs: Sequence[tuple[Path, Path]],
    scanner: SecretScanner,
    *,
    thinking: ThinkingMode = ThinkingMode.REDACT,
    known: KnownValues | None = None,
    env: Mapping[str, str] | None = None,
    cache: RedactCache | None = None,
) -> list[FileRedaction]:
    """Redacted copies of (source, dest) pairs, in order. A value a detector found in any of
    them is redacted wherever else its session (see `session_of_path`) holds it: each copy is
    first written to a temp file beside its destination, and published once every file was
    redacted, after a pass over the copies the first pass missed. `known`: values found
    elsewhere (for their sessions), updated with those found here (unless every copy was
    current). With a `cache` (redact_cache.py), the copies of sessions that did not change are
    not written again, and what is written is what a run without it writes."""
    values = KnownValues() if known is None else known
    fresh: list[CopyEntry | None] = [None] * len(pairs)
    if cache is not None:
        fresh = current_copies(pairs, cache)
    if pairs and all(entry is not None for entry in fresh):
        if cache is not None and cache.drop_missing():
            cache.store()  # a deleted session's entries go, though nothing was written
        return [report_of(s, d, e) for (s, d), e in zip(pairs, fresh, strict=True) if e]
    run = _CopyRun(pairs, scanner, thinking is ThinkingMode.REDACT, cache is not None)
    try:
        for i, entry in enumerate(fresh):
            if entry is None or not run.recover(i, entry):
                fresh[i] = None
                run.first_pass(i)
        for found in run.found:  # in the pairs' order, as a run without the cache adds them
            if isinstance(found, KnownValues):
                values.update(found)
            else:
                remember(values, found)
        digests = scope_digests(values) if cache is not None else {}
        for i, entry in enumerate(fresh):
            if entry is not None and entry.scope_digest != digest_for(digests, pairs[i][0]):
                fresh[i] = None  # its session's values changed: its copy must take them in
                run.first_pass(i)
        run.publish(values.index(prefilter_engine(env)))
        if cache is not None:
            run.remember(cache, fresh, digests)
    finally:
        run.discard()
    return [
        run.results[i] or report_of(source, dest, entry)  # type: ignore[arg-type]
        for i, ((source, dest), entry) in enumerate(zip(pairs, fresh, strict=True))
    ]


class _CopyRun:
    """The files of one `redact_copies` run: first passes, values, temp files to publish."""

    def __init__(
        self,
        pairs: Sequence[tuple[Path, Path]],
        scanner: SecretScanner,
        redact_thinking: bool,
        keep_places: bool,
    ) -> None:
        self.pairs = pairs
        self.scanner = scanner
        self.redact_thinking = redact_thinking
        self.keep_places = keep_places
        self.results: list[FileRedaction | None] = [None] * len(pairs)
        self.found: list[KnownValues | list[FoundValue]] = [[] for _ in pairs]
        self.stats: list[os.stat_result | None] = [None] * len(pairs)
        self.places: dict[int, Places] = {}
        self.pending: dict[int, tuple[Path, int]] = {}

    def first_pass(self, i: int) -> None:
        source, dest = self.pairs[i]
        places: Places | None = ([], []) if self.keep_places else None
        result, temp, st = _first_pass(source, dest, self.scanner, self.redact_thinking, places)
        self.results[i], self.stats[i] = result, st
        self.found[i] = result.values
        result.values = KnownValues()
        if temp is not None and st is not None:
            self.pending[i] = (temp, st.st_mtime_ns)
        if places is not None:
            self.places[i] = places

    def recover(self, i: int, entry: CopyEntry) -> bool:
        """The values of a current copy's source, without writing it again; False when they
        are not where the cache says (then it is redone)."""
        source = self.pairs[i][0]
        kind = entry.report.get("kind")
        back: KnownValues | list[FoundValue] | None = []
        if kind == FileKind.TRANSCRIPT.value:
            back = recovered_from(source, entry, self.scanner)
        elif kind == FileKind.TEXT.value:
            back = _text_values(source, self.scanner)
        if back is None:
            return False
        self.found[i] = back
        return True

    def publish(self, index: ValueIndex) -> None:
        for i in sorted(self.pending):
            temp, mtime_ns = self.pending[i]
            result = self.results[i]
            assert result is not None  # noqa: S101 - a pending file had its first pass
            _publish(result, temp, mtime_ns, index, self.redact_thinking)
            del self.pending[i]

    def remember(self, cache: RedactCache, fresh: list[CopyEntry | None], digests: Digests) -> None:
        """The cache's entries for the copies written now (the others are kept)."""
        for i, (source, dest) in enumerate(self.pairs):
            result = self.results[i]
            if fresh[i] is not None or result is None:
                continue
            state = None if result.skipped else cache.dest_state(dest)
            st = self.stats[i]
            try:
                st = st or source.lstat()
            except OSError:
                continue
            if state is None and not result.skipped:
                continue
            stored, starts = self.places.get(i, ([], []))
            cache.entries[str(dest)] = CopyEntry(
                str(source), file_stat(st), None if state is None else state[0],
                "" if state is None else state[1], stored, starts,
                digest_for(digests, source), report_to_json(result),
            )  # fmt: skip
        cache.drop_superseded(self.pairs)
        cache.store()

    def discard(self) -> None:
        for temp, _ in self.pending.values():
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()


def _text_values(source: Path, scanner: SecretScanner) -> KnownValues | None:
    """A plain-text file's values, found again (its redaction, written nowhere)."""
    result = FileRedaction(source, None, FileKind.TEXT)
    try:
        with source.open("rb", buffering=IO_BUFFER) as stream:
            for _ in redact_text_stream(stream, scanner, result):
                pass
    except OSError:
        return None
    return result.values


def _first_pass(
    source: Path,
    dest: Path,
    scanner: SecretScanner,
    redact_thinking: bool,
    places: Places | None = None,
) -> tuple[FileRedaction, Path | None, os.stat_result | None]:
    """Redact `source` into a 0600 temp file beside `dest` (None when nothing is to be
    written), with the source's mtime; the source's stat as it was read (None: not read).
    `places`: where a transcript's values were found are added to it (for the cache)."""
    if source.is_symlink():
        raise InputError(f"{source}: is a symbolic link; not followed")
    try:
        kind = classify_file(source)
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror}") from None
    result = FileRedaction(source, dest, kind)
    if kind is FileKind.BINARY:
        result.skipped = "binary file: cannot be redacted, not copied"
        return result, None, None
    if _same_file(source, dest):
        raise UsageError(f"{dest}: the output would overwrite the input; use --in-place for that")
    temp: Path | None = None
    try:
        source_stat = source.stat()
        paths.ensure_private_dir(dest.parent)
        _remove_stale_pending(dest)
        fd, name = tempfile.mkstemp(
            prefix=f".{dest.name}.", suffix=_PENDING_SUFFIX, dir=dest.parent
        )
        os.close(fd)
        temp = Path(name)
        size = source_stat.st_size
        jobs = parts.scan_jobs(size) if kind is FileKind.TRANSCRIPT else 1
        with source.open("rb", buffering=IO_BUFFER) as stream:
            if kind is FileKind.TRANSCRIPT:
                chunks = redacted_transcript(
                    stream,
                    source,
                    size,
                    scanner,
                    result,
                    redact_thinking=redact_thinking,
                    jobs=jobs,
                    places=places,
                )
            else:
                chunks = redact_text_stream(stream, scanner, result)
            atomic_write(
                temp,
                chunks,
                mode=0o600,
                mtime_ns=source_stat.st_mtime_ns,
                sync_every=_SYNC_EVERY if jobs > 1 else None,
            )
    except BaseException as exc:
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        if isinstance(exc, FileNotFoundError):
            raise InputError(
                f"{source}: vanished while it was being read; nothing written"
            ) from None
        if isinstance(exc, OSError):
            raise _write_error(exc, dest) from None
        raise
    return result, temp, source_stat


def _remove_stale_pending(dest: Path) -> None:
    """First passes of a run that died (kill -9) before publishing `dest`: hidden copies whose
    copies of found values may not be redacted yet, that nothing else would delete."""
    name = glob.escape(dest.name)
    for pattern in (f".{name}.*{_PENDING_SUFFIX}", f"..{name}.*{_PENDING_SUFFIX}.*.tmp"):
        for stale in dest.parent.glob(pattern):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


def _write_error(exc: OSError, dest: Path) -> ScrubberError:
    where = dest if exc.filename in (None, str(dest)) else Path(exc.filename)
    return ScrubberError(
        f"cannot write {where}: {exc.strerror}; nothing was written",
        "check free space and permissions of the output folder",
    )


def _publish(
    result: FileRedaction, temp: Path, mtime_ns: int, index: ValueIndex, redact_thinking: bool
) -> None:
    """Move a first pass's temp file to its destination, with the copies of known values it
    still holds redacted on the way (a second atomic write, of those lines only changed)."""
    assert result.dest is not None  # noqa: S101 - copies always have one
    dest = result.dest
    is_jsonl = result.kind is FileKind.TRANSCRIPT
    scope = session_of_path(result.source)
    try:
        with temp.open("rb", buffering=IO_BUFFER) as stream:
            dirty = bool(index) and has_copies(
                stream, index, is_jsonl, scope, redact_thinking=redact_thinking
            )
            if dirty:
                stream.seek(0)
                counts = CopyCounts()
                chunks = rewrite_copies(
                    stream, index, is_jsonl, scope, counts, redact_thinking=redact_thinking
                )
                atomic_write(dest, chunks, mode=0o600, mtime_ns=mtime_ns)
                result.add_copies(counts)
        if dirty:
            temp.unlink()
        else:
            temp.replace(dest)
            fsync_dir(dest.parent)
    except OSError as exc:
        raise _write_error(exc, dest) from None


def redact_copy(
    source: Path,
    dest: Path,
    scanner: SecretScanner,
    *,
    thinking: ThinkingMode = ThinkingMode.REDACT,
) -> FileRedaction:
    """Write a redacted copy of `source` at `dest` (0600, source's mtime), atomically; every
    copy of a value found in it is redacted too. For several files of a session, see
    `redact_copies` (a value found in one file reaches the others)."""
    # One file is a session of one: the same machinery.
    [result] = redact_copies([(source, dest)], scanner, thinking=thinking)
    return result


def redacted_transcript(
    stream: IO[bytes],
    source: Path,
    size: int,
    scanner: SecretScanner,
    result: FileRedaction,
    *,
    redact_thinking: bool,
    jobs: int = 1,
    places: Places | None = None,
) -> Iterator[bytes]:
    """The redacted bytes of a transcript open as `stream`, in order, its lines redacted by
    `jobs` processes (usecases/parts.py); the unchanged bytes between the lines that change are
    copied from the file as they are. `places`: where the values were found is added to it."""
    scope = result.scope
    keep = places is not None

    def redact(raw: RawLine, file_scan: FileScan) -> _Redacted | None:
        scan = file_scan.scan_raw(raw)
        line = redact_scanned(raw, scan, scope, redact_thinking=redact_thinking)
        if line is None:
            return None
        found = _places_of(scan, scope) if keep and line.values and scan is not None else ()
        return _Redacted(line, found)

    lines = TranscriptLines(stream, source, size, scanner, redact, jobs=jobs)
    fd = stream.fileno()
    copied = 0  # the bytes before this offset are written
    for line in lines:
        redacted = line.result.line
        result.add_line(redacted, line.number)
        if places is not None and line.result.places:
            places[0].extend([line.number, *found] for found in line.result.places)
            places[1].append([line.offset, line.number])
        new = redacted.new
        if new is not None:
            yield from _file_range(fd, copied, line.offset)
            yield new + b"\n" if line.terminated else new
            copied = line.end
    yield from _file_range(fd, copied, lines.end)
    result.lines += lines.lines


# Where a transcript's first pass found its values: findings in the scan cache's stored form
# (scan_cache.py: places and fingerprints, no value) and [offset, number] of their lines.
Places = tuple[list[list[Any]], list[list[int]]]
Digests = dict[Scope | None, str]


@dataclass(frozen=True, slots=True)
class _Redacted:
    """One line's redaction, and where its values are (it may come from a forked process)."""

    line: LineRedaction
    places: tuple[tuple[Any, ...], ...]  # a stored finding's fields but its line number


def _places_of(scan: LineScan, scope: Scope | None) -> tuple[tuple[Any, ...], ...]:
    """As `scan_values` finds a line's values: where each is, with its fingerprint."""
    where = scope if scope is not None else scan.session_id
    if where is None:
        return ()
    return tuple(
        (pointer or None, start, end, item.hit.kind, item.hit.detector,
         item.fingerprint[:FINGERPRINT_SHOWN], where, None, None, in_thinking, item.hit.length,
         item.prefix, False, False)
        for _, pointer, start, end, in_thinking, item in found_values(scan)
    )  # fmt: skip


def _file_range(fd: int, start: int, end: int) -> Iterator[bytes]:
    """The bytes [start, end) of an open file, in blocks (read where they are: the stream's
    own position is left alone)."""
    while start < end:
        block = os.pread(fd, min(_COPY_BLOCK, end - start), start)
        if not block:
            return
        start += len(block)
        yield block


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False
