"""One transcript, line by line, in parallel parts when it is large: the service audit and
redact share. They supply a per-line function (what to make of one line, given the file's
scan so far); this module runs it over every line and yields its results in file order.

The machines scrubber runs on have a few cores and one big transcript can be hundreds of MB; a
part per core, each starting at a line start, uses them all. The results are those of one
process: a part's lines that answer a tool call made in an earlier part (its first few,
usually) are handed back and done here, once every earlier call is known.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from scrubber.detection.context import ClassifiedCall
from scrubber.detection.scan import FileScan, SecretScanner
from scrubber.detection.walk import MAX_CALLS_REMEMBERED
from scrubber.errors import UsageError
from scrubber.transcript.jsonl import IO_BUFFER, RawLine, iter_raw_lines

R = TypeVar("R")

# What to make of one line, given the scan of the lines before it; None: nothing to report.
PerLine = Callable[[RawLine, FileScan], R | None]
Progress = Callable[[int], None]  # called with the number of bytes just processed

MAX_JOBS = 4
# A process must be worth a fork (about 10 ms) and the imports it shares: below this size, the
# whole file is one part.
BYTES_PER_JOB = 16 << 20
# Each process takes parts one after another, two on average: a transcript's work is uneven
# (one half of the benchmark file takes a third longer than the other), and with smaller
# parts a process that is done early takes the next one instead of waiting for the slowest.
PARTS_PER_JOB = 2
_PROGRESS_STEP = 4 << 20  # one process reports progress about every this many bytes


def scan_jobs(size: int, env: Mapping[str, str] | None = None) -> int:
    """How many processes scan a transcript of `size` bytes: `worker_processes`, and one per
    `BYTES_PER_JOB` at most, so small files never pay for a fork."""
    return max(1, min(worker_processes(env), size // BYTES_PER_JOB))


def worker_processes(env: Mapping[str, str] | None = None) -> int:
    """How many processes may scan at once: one per usable core (at most `MAX_JOBS`).
    `SCRUB_JOBS=1` turns parallel scanning off. Linux only: it forks the process that built
    the scanner."""
    env = os.environ if env is None else env
    wanted = env.get("SCRUB_JOBS", "").strip()
    if wanted:
        try:
            jobs = max(1, int(wanted))
        except ValueError:
            raise UsageError(f"SCRUB_JOBS={wanted!r}: expected a whole number") from None
    else:
        affinity = getattr(os, "sched_getaffinity", None)
        jobs = min(len(affinity(0)) if affinity else (os.cpu_count() or 1), MAX_JOBS)
    if (
        not sys.platform.startswith("linux")
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return 1  # forking is safe on Linux; macOS's system libraries may not survive it
    return jobs


def part_bounds(path: Path, size: int, parts: int) -> list[tuple[int, int]]:
    """[start, end) byte ranges of about equal size, each starting at a line start."""
    starts = [0]
    with path.open("rb") as stream:
        for i in range(1, parts):
            stream.seek(max(size * i // parts - 1, starts[-1]))
            stream.readline()  # to the start of the next line
            position = stream.tell()
            if position >= size:
                break
            if position > starts[-1]:
                starts.append(position)
    return list(zip(starts, [*starts[1:], size], strict=True))


@dataclass(frozen=True, slots=True)
class LineResult(Generic[R]):
    """The per-line function's result for one line, and where the line is in the file."""

    offset: int
    end: int  # offset just past the line (its newline included)
    number: int
    terminated: bool
    result: R

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields, as Finding is (a part sends back one per line it kept).
        return (LineResult, (self.offset, self.end, self.number, self.terminated, self.result))


class TranscriptLines(Generic[R]):
    """Iterating runs `per_line` over every line of the transcript at `path` (open as `stream`,
    `size` bytes when it was opened) and yields its results, in file order. With `jobs` > 1,
    `jobs` forked processes do parts of the file. A result must not carry the line's number
    (a part knows only its number within the part): the number is the LineResult's.

    `start` (offset, number of the line there) and `calls` resume a scan where an earlier one
    of the same file stopped (an incremental audit: the lines before `start` are settled, and
    `calls` are the tool calls that scan remembered); a resumed scan runs in one process.
    Lines that start at or past `size` are left for the next scan (Claude Code may be
    appending as we read: the scan is of the file as it was when opened).

    After the iteration: `lines`, the number of lines read (counted from the file's start);
    `end`, the offset just past the last one; `settled`, the offset just past the last
    newline-terminated line and its number (what a later scan may resume after); `calls`, the
    tool calls remembered at the end; `part_starts`, the offset and number of each part's
    first line."""

    def __init__(
        self,
        stream: IO[bytes],
        path: Path,
        size: int,
        scanner: SecretScanner,
        per_line: PerLine[R],
        *,
        jobs: int = 1,
        progress: Progress | None = None,
        start: tuple[int, int] = (0, 1),
        calls: Mapping[str, ClassifiedCall] | None = None,
    ) -> None:
        self._stream = stream
        self._path = path
        self._size = size
        self._scanner = scanner
        self._per_line = per_line
        self._jobs = jobs
        self._progress = progress
        self._start = start
        self._calls = calls
        self.lines = start[1] - 1
        self.end = start[0]
        self.settled = (start[0], start[1] - 1)
        self.calls: dict[str, ClassifiedCall] = dict(calls or {})
        self.part_starts: dict[int, int] = {}

    def __iter__(self) -> Iterator[LineResult[R]]:
        resumed = self._start[0] > 0
        return self._in_parts() if self._jobs > 1 and not resumed else self._in_one_process()

    def _in_one_process(self) -> Iterator[LineResult[R]]:
        """Every line from `start` to `size`, in this process."""
        file_scan = self._scanner.new_file_scan()
        if self._calls:
            file_scan.remember_calls(self._calls)
        per_line, progress = self._per_line, self._progress
        pending = 0
        offset, number = self._start
        self._stream.seek(offset)
        for raw in iter_raw_lines(self._stream, offset=offset, number=number):
            if raw.offset >= self._size:
                break  # appended after the scan began: the next scan's
            if raw.terminated:
                self.settled = (raw.end_offset, raw.number)
            self.lines, self.end = raw.number, raw.end_offset
            result = per_line(raw, file_scan)
            pending += len(raw.data) + 1
            if progress and pending > _PROGRESS_STEP:
                progress(pending)
                pending = 0
            if result is not None:
                yield LineResult(raw.offset, raw.end_offset, raw.number, raw.terminated, result)
        if progress and pending:
            progress(pending)
        self.calls = file_scan.calls_seen()

    def _in_parts(self) -> Iterator[LineResult[R]]:
        """The parts' results as they come, each part's in order, line numbers made whole."""
        bounds = part_bounds(self._path, self._size, self._jobs * PARTS_PER_JOB)
        work = [(start, end, i == 0) for i, (start, end) in enumerate(bounds)]
        worker = _PartWorker(self._path, self._scanner, self._per_line)
        before = 0
        calls: dict[str, ClassifiedCall] = {}  # every call made in the parts done so far
        for part, (start, end) in zip(_run_parts(worker, work, self._jobs), bounds, strict=True):
            if self._progress:
                self._progress(end - start)
            self.part_starts[start] = before + 1
            yield from self._merged(part, before, calls)
            _carry_over(calls, part.calls)
            if part.last_terminated:
                self.settled = (part.end, before + part.lines)
            before += part.lines
            self.lines, self.end = before, part.end
        self.calls = calls

    def _merged(
        self, part: _Part[R], before: int, calls: Mapping[str, ClassifiedCall]
    ) -> Iterator[LineResult[R]]:
        """A part's results, with the lines it left out done here (in their place), knowing
        every call of the parts before it. `before`: the lines of the parts before it."""
        results = part.results
        done = 0
        file_scan: FileScan | None = None
        for offset, number in part.deferred:
            while done < len(results) and results[done].offset < offset:
                yield _renumbered(results[done], before)
                done += 1
            if file_scan is None:
                file_scan = self._scanner.new_file_scan()
                file_scan.remember_calls(calls)
            self._stream.seek(offset)
            raw = next(iter_raw_lines(self._stream, offset=offset, number=number + before))
            result = self._per_line(raw, file_scan)
            if result is not None:
                yield LineResult(raw.offset, raw.end_offset, raw.number, raw.terminated, result)
        for line in results[done:]:
            yield _renumbered(line, before)


def _carry_over(calls: dict[str, ClassifiedCall], later: Mapping[str, ClassifiedCall]) -> None:
    """Add a later part's calls in the order a single scan would hold them (a call noted again
    moves to the end), keeping only as many as a single scan remembers."""
    for call_id, call in later.items():
        calls.pop(call_id, None)
        calls[call_id] = call
    excess = len(calls) - MAX_CALLS_REMEMBERED
    for call_id in list(itertools.islice(calls, max(0, excess))):
        del calls[call_id]


def _renumbered(line: LineResult[R], before: int) -> LineResult[R]:
    if not before:
        return line
    return LineResult(line.offset, line.end, line.number + before, line.terminated, line.result)


@dataclass(slots=True)
class _Part(Generic[R]):
    """What one process made of one part (line numbers within the part)."""

    lines: int = 0
    end: int = 0  # offset just past its last line
    last_terminated: bool = False  # whether its last line ends with a newline
    results: list[LineResult[R]] = field(default_factory=list)
    # Lines that answer a tool call made before the part began: (byte offset, line number).
    deferred: list[tuple[int, int]] = field(default_factory=list)
    calls: dict[str, ClassifiedCall] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _PartWorker(Generic[R]):
    """What a forked process needs to do a part: handed to it when it starts (inherited by
    the fork, never pickled: the scanner holds compiled databases)."""

    path: Path
    scanner: SecretScanner
    per_line: PerLine[R]

    def part(self, start: int, end: int, first: bool) -> _Part[R]:
        """The lines that start in [start, end). In any part but the first, a line that
        answers a tool call this part has not seen is left for the parent."""
        part: _Part[R] = _Part()
        file_scan = self.scanner.new_file_scan()
        per_line = self.per_line
        with self.path.open("rb", buffering=IO_BUFFER) as stream:
            stream.seek(start)
            for raw in iter_raw_lines(stream, offset=start, number=1):
                if raw.offset >= end:
                    break
                part.lines, part.end = raw.number, raw.end_offset
                part.last_terminated = raw.terminated
                if not first and file_scan.answers_unknown_call(raw):
                    part.deferred.append((raw.offset, raw.number))
                    continue
                result = per_line(raw, file_scan)
                if result is not None:
                    part.results.append(
                        LineResult(raw.offset, raw.end_offset, raw.number, raw.terminated, result)
                    )
        part.calls = file_scan.calls_seen()
        return part


# In a forked process of `_run_parts` only: its worker, set by the pool's initializer. The
# parent never sets it.
_WORKER: _PartWorker[Any] | None = None


def _start_worker(worker: _PartWorker[Any]) -> None:
    global _WORKER  # noqa: PLW0603 - one per forked process, set once as it starts
    _WORKER = worker


def _do_part(bounds: tuple[int, int, bool]) -> _Part[Any]:
    if _WORKER is None:
        raise RuntimeError("_do_part outside a process started by _run_parts")
    return _WORKER.part(*bounds)


def _run_parts(
    worker: _PartWorker[R], work: Sequence[tuple[int, int, bool]], jobs: int
) -> Iterator[_Part[R]]:
    """The parts done by `jobs` forked processes that inherit `worker` (its scanner prepared
    once, here); results in order, as they come."""
    worker.scanner.prepare()
    context = multiprocessing.get_context("fork")
    with context.Pool(min(jobs, len(work)), _start_worker, (worker,)) as pool:
        yield from pool.imap(_do_part, work)
