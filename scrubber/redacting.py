"""The redact use case: redacted copies, in-place rewrites, and the proof (`--check`).

Only string leaves change (see redaction/rewrite.py); lines without findings are written back
byte for byte. Every write goes through a temp file in the destination folder, fsync and rename,
so a crash leaves the old file or the new one. An in-place rewrite keeps mode, owner and mtime,
holds a lock, and folds in whatever Claude Code appended while it ran.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO

from scrubber import paths
from scrubber.detection.detector import PLAIN
from scrubber.detection.known_values import KnownValues, Scope, ValueIndex, ValueInfo
from scrubber.detection.scan import FileScan, LineScan, SecretScanner
from scrubber.errors import BusyError, InputError, ScrubberError
from scrubber.policy.model import ThinkingMode
from scrubber.redaction.copies import (
    CopyCounts,
    FoundValue,
    has_copies,
    remember,
    rewrite_copies,
    rewrite_line_copies,
    scan_values,
    session_of_path,
)
from scrubber.redaction.rewrite import (
    RewriteError,
    replace_spans,
    rewrite_json_line,
    rewrite_text_line,
)
from scrubber.transcript.jsonl import (
    IO_BUFFER,
    LineProblem,
    RawLine,
    fsync_dir,
    iter_raw_lines,
    parse_line,
)
from scrubber.usecases.parts import TranscriptLines

_BINARY_SNIFF = 8192
_TEXT_BLOCK = 1 << 20
_COPY_BLOCK = 1 << 20
# A parallel redaction's output is written to disk part by part, while later parts are still
# being redacted (see `atomic_write`).
_SYNC_EVERY = 16 << 20
# After an in-place rewrite's rename, how long the old file must hold still before it is let
# go, how often it is looked at, and the longest it is watched (see `_rewrite_locked`).
_LATE_SETTLE = 0.05
_LATE_POLL = 0.005
_LATE_WATCH_MAX = 1.0
_TMP_SUFFIX = ".scrub-tmp"  # in-place temp files: `.<name>.<random>.scrub-tmp` beside the file


class FileKind(StrEnum):
    TRANSCRIPT = "transcript"  # JSONL: string leaves only
    TEXT = "text"  # tool-results/*.txt, file-history copies, shell snapshots: plain text
    BINARY = "binary"  # cannot be redacted: never copied into a redacted tree


@dataclass(slots=True)
class FileRedaction:
    """What one file's redaction did (no values)."""

    source: Path
    dest: Path | None
    kind: FileKind
    lines: int = 0
    lines_changed: int = 0
    replaced: int = 0
    left_in_thinking: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    problems: list[tuple[int, str]] = field(default_factory=list)
    folded_tail_bytes: int = 0  # bytes appended by another writer during an in-place rewrite
    skipped: str | None = None  # why the file was not written
    # The values its detectors found, for the pass over their copies (redaction/copies.py): in
    # memory only, while the run needs them (emptied before the result is handed back).
    values: KnownValues = field(default_factory=KnownValues, repr=False, compare=False)
    # Known values whose copies are replaced line by line as they are redacted (the tail an
    # in-place rewrite folds in after its pass over copies).
    inline: ValueIndex | None = field(default=None, repr=False, compare=False)
    # The session its values belong to (see `session_of_path`), worked out once.
    scope: Scope | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.scope = session_of_path(self.source)

    def add_copies(self, counts: CopyCounts) -> None:
        self.lines_changed += counts.lines_changed
        self.replaced += counts.replaced
        self.by_kind.update(counts.by_kind)

    def add_line(self, line: LineRedaction, number: int) -> None:
        """Count what redacting line `number` found and changed."""
        if line.problem is not None:
            self.problems.append((number, line.problem))
        remember(self.values, line.values)
        self.by_kind.update(line.kinds)
        self.replaced += len(line.kinds)
        self.left_in_thinking += line.left_in_thinking
        if line.new is not None:
            self.lines_changed += 1


def classify_file(path: Path) -> FileKind:
    if path.suffix == ".jsonl":
        return FileKind.TRANSCRIPT
    with path.open("rb") as stream:
        head = stream.read(_BINARY_SNIFF)
    return FileKind.BINARY if b"\0" in head else FileKind.TEXT


# -- the line transform ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineRedaction:
    """What redacting one line found and changed (it may come from a forked process)."""

    new: bytes | None  # the line's bytes (without its newline), None when they stay as they are
    problem: str | None  # why the line is not a record we can read
    values: tuple[FoundValue, ...]
    kinds: tuple[str, ...]  # the kind of each secret replaced, in order
    left_in_thinking: int = 0


def redact_line(
    raw: RawLine, file_scan: FileScan, scope: Scope | None, *, redact_thinking: bool
) -> LineRedaction | None:
    """One line redacted, or None when it has nothing to redact or report. `scope`: the
    session its values belong to (None: the line's own `sessionId`)."""
    scan = file_scan.scan_raw(raw)
    if scan is None:
        return None
    problem = str(scan.line.problem) if scan.line.problem not in (None, LineProblem.BLANK) else None
    if not scan.leaves:
        return None if problem is None else LineRedaction(None, problem, (), ())
    values = scan_values(scan, scope)
    new, kinds, left_in_thinking = _apply(scan, redact_thinking=redact_thinking)
    changed = None if new == raw.data else new
    return LineRedaction(changed, problem, values, kinds, left_in_thinking)


def _redact_line(
    raw: RawLine,
    file_scan: FileScan,
    result: FileRedaction,
    *,
    redact_thinking: bool,
) -> bytes:
    """The line's bytes as they are to be written (its newline included), counted in
    `result`, with the copies of `result.inline` replaced too."""
    result.lines += 1
    line = redact_line(raw, file_scan, result.scope, redact_thinking=redact_thinking)
    new = None
    if line is not None:
        result.add_line(line, raw.number)
        new = line.new
    if result.inline is not None:
        new = _inline_copies(raw, new, result, redact_thinking)
    if new is None:
        return raw.to_bytes()
    return new + b"\n" if raw.terminated else new


def _inline_copies(
    raw: RawLine, new: bytes | None, result: FileRedaction, redact_thinking: bool
) -> bytes | None:
    assert result.inline is not None  # noqa: S101 - the caller's check
    data = raw.data if new is None else new
    counts = CopyCounts()
    out = rewrite_line_copies(
        data, result.inline, result.scope, counts, redact_thinking=redact_thinking
    )
    if out == data:
        return new
    if new is not None:
        counts.lines_changed = 0  # counted once, by the first pass
    result.add_copies(counts)
    return out


def _apply(scan: LineScan, *, redact_thinking: bool) -> tuple[bytes, tuple[str, ...], int]:
    """The line's new bytes, the kinds replaced and how many secrets were left in thinking."""
    data = scan.line.raw.data
    if scan.line.record is None:
        found = [f for leaf in scan.leaves for f in leaf.found]
        edits = [(f.hit.start, f.hit.end, f.placeholder) for f in found]
        return rewrite_text_line(data, sorted(edits)), tuple(f.hit.kind for f in found), 0
    replacements: dict[str, list[tuple[int, int, str]]] = {}
    kinds: list[str] = []
    left_in_thinking = 0
    for leaf in scan.leaves:
        if leaf.pointer is None:
            continue
        if leaf.in_thinking and not redact_thinking:
            left_in_thinking += len(leaf.found)
            continue
        edits = replacements.setdefault(leaf.pointer, [])
        edits.extend((f.hit.start, f.hit.end, f.placeholder) for f in leaf.found)
        kinds.extend(f.hit.kind for f in leaf.found)
    for edits in replacements.values():
        edits.sort()
    try:
        return rewrite_json_line(data, replacements), tuple(kinds), left_in_thinking
    except RewriteError as exc:
        # The scanner and the rewriter disagree on the line's shape: never guess. Fall back to
        # redacting the line as text would break its JSON, so refuse the whole file instead.
        raise ScrubberError(
            f"line {scan.line.number}: could not rewrite the line in place ({exc.message})"
        ) from None


def redact_transcript_lines(
    stream: IO[bytes],
    scanner: SecretScanner,
    result: FileRedaction,
    *,
    redact_thinking: bool,
    file_scan: FileScan | None = None,
    offset: int = 0,
    number: int = 1,
) -> Iterator[bytes]:
    """Redacted bytes of every line of a JSONL stream, in order."""
    scan = file_scan or scanner.new_file_scan()
    for raw in iter_raw_lines(stream, offset=offset, number=number):
        yield _redact_line(raw, scan, result, redact_thinking=redact_thinking)


def redact_text(text: str, scanner: SecretScanner, result: FileRedaction) -> str:
    found = scanner.scan_text(text, PLAIN)
    if not found:
        return text
    scope = session_of_path(result.source) or str(result.source)
    for item in found:
        hit = item.hit
        info = ValueInfo(hit.kind, hit.detector, item.fingerprint, item.prefix)
        result.values.add(text[hit.start : hit.end], info, scope)
    result.replaced += len(found)
    result.by_kind.update(item.hit.kind for item in found)
    return replace_spans(text, sorted((f.hit.start, f.hit.end, f.placeholder) for f in found))


def redact_text_stream(
    stream: IO[bytes], scanner: SecretScanner, result: FileRedaction
) -> Iterator[bytes]:
    """A plain-text file in blocks of whole lines (a PEM block is never split)."""
    block: list[bytes] = []
    size = 0
    for raw in iter_raw_lines(stream):
        result.lines += 1
        block.append(raw.to_bytes())
        size += len(raw.data) + 1
        if size >= _TEXT_BLOCK and b"-----BEGIN" not in raw.data:
            yield _redact_block(block, scanner, result)
            block, size = [], 0
    if block:
        yield _redact_block(block, scanner, result)


def _redact_block(block: list[bytes], scanner: SecretScanner, result: FileRedaction) -> bytes:
    data = b"".join(block)
    text = data.decode("utf-8", errors="surrogateescape")
    new = redact_text(text, scanner, result)
    if new == text:
        return data
    old_lines = text.split("\n")
    new_lines = new.split("\n")
    result.lines_changed += sum(1 for a, b in zip(old_lines, new_lines, strict=False) if a != b)
    return new.encode("utf-8", errors="surrogateescape")


# -- copies -----------------------------------------------------------------------------------


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
    # One file is a session of one: the same machinery (imported here: it builds on this module).
    from scrubber.session_redacting import redact_copies

    [result] = redact_copies([(source, dest)], scanner, thinking=thinking)
    return result


def engine_of(env: Mapping[str, str] | None) -> str:
    """The prefilter engine `SCRUB_PREFILTER` asks for (as pipeline.build_scanner reads it)."""
    env = os.environ if env is None else env
    return env.get("SCRUB_PREFILTER", "auto") or "auto"


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


# -- in place ---------------------------------------------------------------------------------


@contextlib.contextmanager
def file_lock(lock_dir: Path, target: Path) -> Iterator[None]:
    """An exclusive lock on `target`, kept outside Claude Code's folders."""
    paths.ensure_private_dir(lock_dir)
    name = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:32]
    lock_path = lock_dir / f"{name}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BusyError(f"{target}: another scrubber run is rewriting it") from None
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
            return _rewrite_locked(path, scanner, result, values, engine_of(env))
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
                # Fold in what was appended meanwhile, until the size holds still. The fsync
                # comes before the last look (it can take long enough for more lines to
                # arrive), so that only a moment separates the last look from the rename:
                # lines that reach the old file after it are copied late, behind any line
                # already written to the new one.
                synced = False
                for round_ in range(100):
                    size = os.fstat(original.fileno()).st_size
                    if size < done:
                        raise ScrubberError(
                            f"{path}: shrank during the rewrite (another tool rewrote it); "
                            "nothing changed"
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
                result.folded_tail_bytes = done - main_pass_end
            if result.lines_changed == 0:
                tmp.unlink()
                return result
            current = path.stat()
            if current.st_ino != st.st_ino:
                raise ScrubberError(
                    f"{path}: replaced by another program meanwhile; nothing changed"
                )
            # Claude Code's cleanup is keyed on mtime: the rewrite must not make a session young.
            os.utime(tmp, ns=(current.st_atime_ns, current.st_mtime_ns))
            tmp.replace(path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        # Anything that reaches the old inode after our last check: a line written between that
        # check and the rename, or by a writer that opened the file just before the rename and
        # writes a moment later. The old inode is watched until it has held still for a while
        # (before the directory fsync, which may take a while), and what arrives is appended.
        late_start = done
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
        result.folded_tail_bytes += done - late_start
        fsync_dir(folder)
    return result


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
        out.write(_redact_line(raw, file_scan, result, redact_thinking=redact_thinking))
        offset = raw.end_offset
    return offset


# -- the proof --------------------------------------------------------------------------------


@dataclass(slots=True)
class CheckResult:
    path: Path
    lines: int = 0
    invalid_lines: list[int] = field(default_factory=list)
    structure_mismatches: list[int] = field(default_factory=list)
    line_count_mismatch: tuple[int, int] | None = None
    findings: int = 0
    findings_in_thinking: int = 0
    finding_lines: list[int] = field(default_factory=list)
    compared_with: Path | None = None

    @property
    def ok(self) -> bool:
        return (
            not self.invalid_lines
            and not self.structure_mismatches
            and self.line_count_mismatch is None
            and self.findings == 0
        )


def check_redacted(path: Path, scanner: SecretScanner, original: Path | None) -> CheckResult:
    """Prove a redacted transcript: valid JSONL, the original's structure, no findings left."""
    from scrubber.redaction.structure import same_structure

    result = CheckResult(path, compared_with=original)
    orig_stream = original.open("rb", buffering=IO_BUFFER) if original is not None else None
    try:
        orig_lines = iter_raw_lines(orig_stream) if orig_stream is not None else None
        file_scan = scanner.new_file_scan()
        with path.open("rb", buffering=IO_BUFFER) as stream:
            for raw in iter_raw_lines(stream):
                result.lines += 1
                line = parse_line(raw)
                torn_last = line.problem is LineProblem.TORN
                if line.problem not in (None, LineProblem.BLANK) and not torn_last:
                    result.invalid_lines.append(raw.number)
                if orig_lines is not None:
                    orig_raw = next(orig_lines, None)
                    if orig_raw is None or (
                        line.record is not None
                        and not same_structure(parse_line(orig_raw).value, line.value)
                    ):
                        result.structure_mismatches.append(raw.number)
                scan = file_scan.scan_line(line)
                for leaf in scan.leaves:
                    if leaf.in_thinking:
                        result.findings_in_thinking += len(leaf.found)
                    else:
                        result.findings += len(leaf.found)
                        result.finding_lines.append(raw.number)
        if orig_lines is not None:
            remaining = sum(1 for _ in orig_lines)
            if remaining:
                result.line_count_mismatch = (result.lines + remaining, result.lines)
    finally:
        if orig_stream is not None:
            orig_stream.close()
    return result
