"""Redacting a session's files together: a value a detector found in any of them is redacted
in all of them (issue 12; redaction/copies.py), in copies and in place.

Copies: each file's first pass (redacting.py's, unchanged) goes to a temp file beside its
destination; once every file was redacted, the values found in all of them are looked for in
each temp file, the lines still holding a copy are rewritten, and the file is published. In
place: each file is rewritten with the values known so far; a file rewritten before a later one
gave a value is searched again and rewritten only if it holds a copy.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from scrubber import paths
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.scan import SecretScanner
from scrubber.durable import atomic_write, fsync_dir
from scrubber.errors import InputError, ScrubberError, UsageError
from scrubber.policy.model import ThinkingMode
from scrubber.redacting import (
    _SYNC_EVERY,
    FileKind,
    FileRedaction,
    _same_file,
    classify_file,
    engine_of,
    redact_in_place,
    redact_text_stream,
    redacted_transcript,
)
from scrubber.redaction.copies import CopyCounts, has_copies, rewrite_copies, session_of_path
from scrubber.transcript.jsonl import IO_BUFFER
from scrubber.usecases import parts

# A copy's first pass, beside its destination until every file of its session was redacted.
_PENDING_SUFFIX = ".scrub-pending"


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
        index = values.index(engine_of(env))
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


def redact_files_in_place(
    files: Sequence[Path],
    scanner: SecretScanner,
    lock_dir: Path,
    *,
    known: KnownValues | None = None,
    env: Mapping[str, str] | None = None,
) -> list[FileRedaction]:
    """`redact_in_place` for each file, in order, with the values found in any of them (and
    in `known`, updated) redacted wherever else their session holds them: a file rewritten
    before a value was found in a later one is looked at again (a search; rewritten only when
    it holds a copy)."""
    values = KnownValues() if known is None else known
    results: list[FileRedaction] = []
    seen_at: list[int] = []  # how many values were known when each file was rewritten
    for path in files:
        result = redact_in_place(path, scanner, lock_dir, known=values, env=env)
        result.values = KnownValues()
        results.append(result)
        seen_at.append(len(values))
    index = values.index(engine_of(env))
    for i, (path, result) in enumerate(zip(files, results, strict=True)):
        if seen_at[i] == len(values) or result.skipped or not index:
            continue
        is_jsonl = result.kind is FileKind.TRANSCRIPT
        try:
            with path.open("rb", buffering=IO_BUFFER) as stream:
                scope = session_of_path(path)
                if not has_copies(stream, index, is_jsonl, scope, redact_thinking=False):
                    continue
        except OSError:
            continue  # gone meanwhile: its own rewrite already reported what it did
        again = redact_in_place(path, scanner, lock_dir, known=values, env=env)
        result.lines_changed += again.lines_changed
        result.replaced += again.replaced
        result.by_kind.update(again.by_kind)
        result.folded_tail_bytes += again.folded_tail_bytes
    return results
