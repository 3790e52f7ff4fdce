"""Redacting transcripts in place: each rewritten with its secrets replaced (thinking text
left as it is: it is signed), keeping mode, owner and mtime, under a lock, folding in whatever
Claude Code appended while it ran; a session's files together, so that a value found in any
of them is redacted in all of them.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from scrubber import paths
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.registry import prefilter_engine
from scrubber.detection.scan import FileScan, SecretScanner
from scrubber.durable import fsync_dir
from scrubber.errors import BusyError, InputError, ScrubberError
from scrubber.redaction.copies import CopyCounts, has_copies, rewrite_copies, session_of_path
from scrubber.redaction.lines import (
    FileKind,
    FileRedaction,
    classify_file,
    redact_text_stream,
    redacted_line_bytes,
)
from scrubber.transcript.jsonl import IO_BUFFER, iter_raw_lines

# After an in-place rewrite's rename, how long the old file must hold still before it is let
# go, how often it is looked at, and the longest it is watched (see `_copy_late_lines`).
_LATE_SETTLE = 0.05
_LATE_POLL = 0.005
_LATE_WATCH_MAX = 1.0
_TMP_SUFFIX = ".scrub-tmp"  # in-place temp files: `.<name>.<random>.scrub-tmp` beside the file


@contextlib.contextmanager
def file_lock(lock_dir: Path, target: Path) -> Iterator[None]:
    """An exclusive lock on `target`, kept outside Claude Code's folders."""
    paths.ensure_private_dir(lock_dir)
    name = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:32]
    lock_path = lock_dir / f"{name}.lock"
    fd = paths.try_lock_own_file(lock_path)  # a planted link or FIFO: ScrubberError
    if fd is None:
        raise BusyError(f"{target}: another scrubber run is rewriting it")
    try:
        yield
    finally:
        os.close(fd)


def redact_in_place(
    path: Path,
    scanner: SecretScanner,
    lock_dir: Path,
    *,
    known: KnownValues | None = None,
    env: Mapping[str, str] | None = None,
) -> FileRedaction:
    """Rewrite `path` with its secrets replaced; thinking text is never touched (reported).

    Claude Code opens, appends and closes the transcript for every write, so lines can arrive
    while we work: after the main pass we fold in the tail that appeared, re-check right before
    the rename, and after the rename copy over anything that reaches the old inode (watching it
    until it holds still: a writer may have opened it just before the rename).

    Order: nothing is lost or duplicated, and one reorder is possible. A line L1 that reaches
    the old inode after the last size check (its writer opened the path before the rename) is
    appended to the new file by the watch, which polls every _LATE_POLL s until the old inode
    has held still for _LATE_SETTLE s (at most _LATE_WATCH_MAX s). A line L2 that a later
    writer (one that opened the path after the rename) appended to the new file before the
    watch copied L1 then comes first: L2, L1. That is safe for `claude --resume`, which chains
    records by uuid/parentUuid, not by line order: tests/e2e/claude/test_resume_reordered.py
    resumes such a file with the real client (README, "In place, while Claude Code appends").
    """
    if path.is_symlink():
        raise InputError(f"{path}: is a symbolic link; not rewritten")
    kind = classify_file(path)
    result = FileRedaction(path, path, kind)
    if kind is FileKind.BINARY:
        result.skipped = "binary file: cannot be redacted"
        return result
    with file_lock(lock_dir, path):
        _remove_stale_temps(path)
        try:
            values = KnownValues() if known is None else known
            return _rewrite_locked(path, scanner, result, values, prefilter_engine(env))
        except FileNotFoundError:
            raise InputError(f"{path}: vanished during the rewrite; nothing changed") from None
        except OSError as exc:
            # A full disk or a folder we cannot write: the temp file is gone, the original
            # untouched. Say so, as redact_copy does, rather than fail as an internal error.
            raise ScrubberError(
                f"cannot rewrite {path}: {exc.strerror or type(exc).__name__}; nothing changed",
                "check free space and permissions of the transcript's folder",
            ) from None
        finally:
            result.inline = None


def _remove_stale_temps(path: Path) -> None:
    """Temp files of rewrites that died (kill -9, power loss): hidden copies of the transcript,
    thinking included, that nothing else would ever delete. Called under the file's lock, so
    no live run owns them."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*{_TMP_SUFFIX}"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()


def _rewrite_locked(
    path: Path, scanner: SecretScanner, result: FileRedaction, known: KnownValues, engine: str
) -> FileRedaction:
    folder = path.parent
    with path.open("rb", buffering=IO_BUFFER) as original:
        st = os.fstat(original.fileno())
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=_TMP_SUFFIX, dir=folder)
        tmp = Path(tmp_name)
        try:
            with contextlib.ExitStack() as outs:
                out: IO[bytes] = outs.enter_context(os.fdopen(fd, "wb", buffering=IO_BUFFER))
                # The mode and owner first: the last fsync below makes them durable too, and
                # nothing is left to do between the last look at the file and the rename.
                _own_like(out, st)
                file_scan = scanner.new_file_scan()
                done = _copy_redacted(original, out, 0, 1, scanner, result, file_scan, result.kind)
                main_pass_end = done
                # Copies of known values the pass missed (one found later in this file, or in
                # another file of the session): the temp file is rewritten, before any tail is
                # folded in; the tail's lines get the same treatment line by line.
                known.update(result.values)
                index = known.index(engine)
                if index:
                    result.inline = index
                    swapped = _without_copies(out, tmp, st, index, result, outs)
                    if swapped is not None:
                        out, tmp = swapped
                done = _fold_in_tail(path, original, out, done, scanner, result, file_scan)
                # Only what lies past the size the file had when opened was appended: an
                # unterminated last line the main pass left for the tail was there already.
                result.folded_tail_bytes = max(0, done - max(main_pass_end, st.st_size))
            if result.lines_changed == 0:
                tmp.unlink()
                return result
            _replace_keeping_times(path, tmp, st)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        late_start = done
        done = _copy_late_lines(path, original, done, scanner, result, file_scan)
        result.folded_tail_bytes += done - late_start
        fsync_dir(folder)
    return result


def _fold_in_tail(
    path: Path,
    original: IO[bytes],
    out: IO[bytes],
    done: int,
    scanner: SecretScanner,
    result: FileRedaction,
    file_scan: FileScan,
) -> int:
    """Fold in what was appended to `original` since offset `done`, until the size holds
    still; return the offset reached. The fsync comes before the last look (it can take long
    enough for more lines to arrive), so that only a moment separates the last look from the
    rename: lines that reach the old file after it are copied late (`_copy_late_lines`), behind
    any line already written to the new one."""
    synced = False
    for round_ in range(100):
        size = os.fstat(original.fileno()).st_size
        if size < done:
            raise ScrubberError(
                f"{path}: shrank during the rewrite (another tool rewrote it); nothing changed"
            )
        if size == done:
            if synced:
                break
            out.flush()
            os.fsync(out.fileno())
            synced = True
            continue
        synced = False
        done = _copy_redacted(
            original, out, done, result.lines + 1, scanner, result, file_scan,
            result.kind, final=round_ >= 3,
        )  # fmt: skip
    else:  # the file never held still: make what was written durable all the same
        out.flush()
        os.fsync(out.fileno())
    return done


def _replace_keeping_times(path: Path, tmp: Path, st: os.stat_result) -> None:
    """Rename the rewrite `tmp` over `path` (opened as `st`), with the times `path` has now."""
    current = path.stat()
    if current.st_ino != st.st_ino:
        raise ScrubberError(f"{path}: replaced by another program meanwhile; nothing changed")
    # Claude Code's cleanup is keyed on mtime: the rewrite must not make a session young.
    os.utime(tmp, ns=(current.st_atime_ns, current.st_mtime_ns))
    tmp.replace(path)


def _copy_late_lines(
    path: Path,
    original: IO[bytes],
    done: int,
    scanner: SecretScanner,
    result: FileRedaction,
    file_scan: FileScan,
) -> int:
    """Append to the new `path` anything that reaches the old inode (`original`) after offset
    `done`, our last check: a line written between that check and the rename, or by a writer
    that opened the file just before the rename and writes a moment later. The old inode is
    watched until it has held still for a while (before the directory fsync, which may take a
    while). Returns the offset reached."""
    with contextlib.ExitStack() as late:
        tail: IO[bytes] | None = None
        still_since = time.monotonic()
        deadline = still_since + _LATE_WATCH_MAX
        while True:
            now = time.monotonic()
            settled = now - still_since >= _LATE_SETTLE or now >= deadline
            if os.fstat(original.fileno()).st_size > done:
                if tail is None:
                    tail = late.enter_context(path.open("ab"))
                reached = _copy_redacted(
                    original, tail, done, result.lines + 1, scanner, result, file_scan,
                    result.kind, final=settled,
                )  # fmt: skip
                if reached > done:
                    done = reached
                    if now < deadline:  # past it, a writer that never stops is let go
                        still_since = now
                        continue
            if settled:
                break
            time.sleep(_LATE_POLL)
        if tail is not None:
            tail.flush()
            os.fsync(tail.fileno())
    return done


def _own_like(out: IO[bytes], st: os.stat_result) -> None:
    os.fchmod(out.fileno(), stat.S_IMODE(st.st_mode))
    with contextlib.suppress(PermissionError):
        os.fchown(out.fileno(), st.st_uid, st.st_gid)


def _without_copies(
    out: IO[bytes],
    tmp: Path,
    st: os.stat_result,
    index: ValueIndex,
    result: FileRedaction,
    outs: contextlib.ExitStack,
) -> tuple[IO[bytes], Path] | None:
    """When the temp file holds copies of known values, a new temp file without them (same
    mode and owner; the old one removed), and its handle, open for the tail; else None.
    Thinking text is left as it is (signed)."""
    out.flush()
    is_jsonl = result.kind is FileKind.TRANSCRIPT
    scope = session_of_path(result.source)
    with tmp.open("rb", buffering=IO_BUFFER) as written:
        if not has_copies(written, index, is_jsonl, scope, redact_thinking=False):
            return None
        written.seek(0)
        fd, name = tempfile.mkstemp(
            prefix=f".{result.source.name}.", suffix=_TMP_SUFFIX, dir=tmp.parent
        )
        new_tmp = Path(name)
        try:
            new_out = outs.enter_context(os.fdopen(fd, "wb", buffering=IO_BUFFER))
            _own_like(new_out, st)
            counts = CopyCounts()
            for chunk in rewrite_copies(
                written, index, is_jsonl, scope, counts, redact_thinking=False
            ):
                new_out.write(chunk)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                new_tmp.unlink()
            raise
    tmp.unlink()
    result.add_copies(counts)
    return new_out, new_tmp


def _copy_redacted(
    original: IO[bytes],
    out: IO[bytes],
    offset: int,
    number: int,
    scanner: SecretScanner,
    result: FileRedaction,
    file_scan: FileScan,
    kind: FileKind,
    *,
    final: bool = False,
) -> int:
    """Redact whole lines from `offset` to the end of `original` into `out`; return the offset
    reached. An unterminated last line may still be being written: it is left for the next
    round, unless `final` (then it is a torn line, kept and redacted as text)."""
    original.seek(offset)
    if kind is FileKind.TEXT:
        for chunk in redact_text_stream(original, scanner, result):
            out.write(chunk)
        return original.tell()
    redact_thinking = False  # in place: thinking blocks are signed, never edited
    for raw in iter_raw_lines(original, offset=offset, number=number):
        if not raw.terminated and not final:
            return raw.offset
        out.write(redacted_line_bytes(raw, file_scan, result, redact_thinking=redact_thinking))
        offset = raw.end_offset
    return offset


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
    index = values.index(prefilter_engine(env))
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
