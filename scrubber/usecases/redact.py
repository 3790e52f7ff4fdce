"""The redact use case: redacted copies of a session's files, each a value found in any of
them redacted in all of them (issue 12; redaction/copies.py).

Each file's first pass (redaction/lines.py) goes to a temp file beside its destination; once
every file was redacted, the values found in all of them are looked for in each temp file, the
lines still holding a copy are rewritten, and the file is published. Every write goes through a
temp file in the destination folder, fsync and rename, so a crash leaves the old file or the
new one. In-place rewrites are in redact_in_place.py, the proof (`--check`) in verify.py;
`run_redact` is what `scrub redact` asks for.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from scrubber import paths
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.registry import prefilter_engine
from scrubber.detection.scan import FileScan, SecretScanner
from scrubber.durable import atomic_write, fsync_dir
from scrubber.errors import InputError, ScrubberError, UsageError
from scrubber.policy.model import ThinkingMode
from scrubber.redaction.copies import CopyCounts, has_copies, rewrite_copies, session_of_path
from scrubber.redaction.lines import (
    FileKind,
    FileRedaction,
    LineRedaction,
    classify_file,
    redact_line,
    redact_text_stream,
)
from scrubber.transcript.jsonl import IO_BUFFER, RawLine
from scrubber.usecases import parts
from scrubber.usecases.parts import TranscriptLines
from scrubber.usecases.redact_in_place import redact_files_in_place
from scrubber.usecases.redact_targets import Note, RedactRequest, copy_pairs, select_files

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
    request: RedactRequest, scanner: SecretScanner, thinking: ThinkingMode, *, note: Note
) -> list[FileRedaction]:
    """What `scrub redact` was asked for: redacted copies (thinking text as `thinking` says),
    or the files rewritten in place (thinking text left alone). Values found in any file reach
    their copies in the others of the same session."""
    selection = select_files(request, note)
    if request.in_place:
        note(IN_PLACE_NOTICE)
        lock_dir = paths.state_dir(request.home) / "locks"
        files = [*selection.sources, *selection.global_files]
        return redact_files_in_place(files, scanner, lock_dir)
    pairs = copy_pairs(request, selection)
    return redact_copies(pairs, scanner, thinking=thinking, known=KnownValues())


def redact_copies(
    pairs: Sequence[tuple[Path, Path]],
    scanner: SecretScanner,
    *,
    thinking: ThinkingMode = ThinkingMode.REDACT,
    known: KnownValues | None = None,
    env: Mapping[str, str] | None = None,
) -> list[FileRedaction]:
    """Redacted copies of (source, dest) pairs, in order. A value a detector found in any of
    them is redacted wherever else its session (see `session_of_path`) holds it: each copy is
    first written to a temp file beside its destination, and published once every file was
    redacted, after a pass over the copies the first pass missed. `known`: values found
    elsewhere (for their sessions), updated with those found here."""
    values = KnownValues() if known is None else known
    redact_thinking = thinking is ThinkingMode.REDACT
    results: list[FileRedaction] = []
    pending: list[tuple[FileRedaction, Path, int]] = []
    try:
        for source, dest in pairs:
            result, temp, mtime_ns = _first_pass(source, dest, scanner, redact_thinking)
            results.append(result)
            values.update(result.values)
            result.values = KnownValues()
            if temp is not None:
                pending.append((result, temp, mtime_ns))
        index = values.index(prefilter_engine(env))
        while pending:
            result, temp, mtime_ns = pending[0]
            _publish(result, temp, mtime_ns, index, redact_thinking)
            pending.pop(0)
    finally:
        for _, temp, _ in pending:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
    return results


def _first_pass(
    source: Path, dest: Path, scanner: SecretScanner, redact_thinking: bool
) -> tuple[FileRedaction, Path | None, int]:
    """Redact `source` into a 0600 temp file beside `dest` (None when nothing is to be
    written), with the source's mtime."""
    if source.is_symlink():
        raise InputError(f"{source}: is a symbolic link; not followed")
    try:
        kind = classify_file(source)
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror}") from None
    result = FileRedaction(source, dest, kind)
    if kind is FileKind.BINARY:
        result.skipped = "binary file: cannot be redacted, not copied"
        return result, None, 0
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
    return result, temp, source_stat.st_mtime_ns


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
) -> Iterator[bytes]:
    """The redacted bytes of a transcript open as `stream`, in order, its lines redacted by
    `jobs` processes (usecases/parts.py); the unchanged bytes between the lines that change are
    copied from the file as they are."""
    scope = result.scope

    def redact(raw: RawLine, file_scan: FileScan) -> LineRedaction | None:
        return redact_line(raw, file_scan, scope, redact_thinking=redact_thinking)

    lines = TranscriptLines(stream, source, size, scanner, redact, jobs=jobs)
    fd = stream.fileno()
    copied = 0  # the bytes before this offset are written
    for line in lines:
        result.add_line(line.result, line.number)
        new = line.result.new
        if new is not None:
            yield from _file_range(fd, copied, line.offset)
            yield new + b"\n" if line.terminated else new
            copied = line.end
    yield from _file_range(fd, copied, lines.end)
    result.lines += lines.lines


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
