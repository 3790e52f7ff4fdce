"""Splitting one large transcript into parts that several processes scan at once.

The machines scrubber runs on have a few cores and one big transcript can be hundreds of MB; a
part per core, each starting at a line start, lets `scrub audit` and `scrub redact` use them
all. The callers (pipeline.py, redacting.py) make the results identical to one process's: a
part's lines that answer a tool call made in an earlier part are handed back and scanned once
every earlier call is known.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeVar

from scrubber.errors import UsageError
from scrubber.transcript.jsonl import RawLine, iter_raw_lines

if TYPE_CHECKING:
    from scrubber.detection.scan import FileScan, SecretScanner

Job = TypeVar("Job")
Result = TypeVar("Result")

MAX_JOBS = 4
# A process must be worth a fork (about 10 ms) and the imports it shares: below this size, the
# whole file is one part.
BYTES_PER_JOB = 16 << 20
# Each process takes parts one after another, two on average: a transcript's work is uneven
# (one half of the benchmark file takes a third longer than the other), and with smaller
# parts a process that is done early takes the next one instead of waiting for the slowest.
PARTS_PER_JOB = 2


def scan_jobs(size: int, env: Mapping[str, str] | None = None) -> int:
    """How many processes scan a transcript of `size` bytes: one per usable core (at most
    `MAX_JOBS`), and one per `BYTES_PER_JOB` at most, so small files never pay for a fork.
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
    return max(1, min(jobs, size // BYTES_PER_JOB))


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


# The scanner the forked processes inherit (set while `run_parts` runs, in the parent).
_SCANNER: SecretScanner | None = None


def part_scanner() -> SecretScanner:
    """In a forked process: the scanner of the parent that forked it."""
    if _SCANNER is None:
        raise RuntimeError("part_scanner() outside a part started by run_parts")
    return _SCANNER


def run_parts(
    scanner: SecretScanner,
    work: Sequence[Job],
    function: Callable[[Job], Result],
    jobs: int,
) -> Iterator[Result]:
    """`function` over `work` in `jobs` forked processes that inherit `scanner`, prepared once
    here; results in order, as they come."""
    global _SCANNER  # noqa: PLW0603 - handed to the forked processes, never shared live
    scanner.prepare()
    _SCANNER = scanner
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(work))) as pool:
            yield from pool.imap(function, work)
    finally:
        _SCANNER = None


def part_lines(
    stream: IO[bytes], file_scan: FileScan, start: int, end: int, first: bool
) -> Iterator[tuple[RawLine, bool]]:
    """The lines that start in [start, end) of a transcript, numbered from 1, each with whether
    it must wait: in any part but the first, a line that answers a tool call this part has not
    seen is scanned afterwards by the parent, which knows every earlier call."""
    stream.seek(start)
    for raw in iter_raw_lines(stream, offset=start, number=1):
        if raw.offset >= end:
            return
        yield raw, not first and file_scan.answers_unknown_call(raw)
