"""Many files scanned in parallel: a pool of forked processes over the files, big transcripts
still in parts (usecases/parts.py). The results come back in the order asked for, so a report
is the same as a serial scan's.

A config dir holds hundreds of sessions of a few KB to tens of MB: one process per file would
pay a fork per file, and a pool over parts of each file would pay its start per file. Here one
pool is started for all the small files (taken largest first, so that no big one is left for
the end), and each big transcript is then split over the cores as before.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from scrubber.detection.scan import SecretScanner
from scrubber.usecases import parts
from scrubber.usecases.audit_copies import POOL_MIN_BYTES
from scrubber.usecases.audit_report import ScanTarget
from scrubber.usecases.audit_scan import Resume, ScannedFile, scan_file
from scrubber.usecases.parts import Progress

# Files are handed out a few at a time: a tiny session costs less than the trip of its task.
_CHUNK_BYTES = 1 << 20
_CHUNK_FILES = 64


@dataclass(frozen=True, slots=True)
class ScanJob:
    target: ScanTarget
    size: int  # as listed (for ordering and splitting; the scan takes its own fstat)
    resume: Resume | None = None


def scan_files(
    jobs: Sequence[ScanJob],
    scanner: SecretScanner,
    *,
    processes: int,
    progress: Progress | None = None,
    for_cache: bool = False,
    pool_min_bytes: int = POOL_MIN_BYTES,
) -> list[ScannedFile]:
    """Every job's scan, in the jobs' order. Below `pool_min_bytes` in all, the small files
    are scanned here: a pool costs its start (a fork per process, about 10 ms each, and the
    results' trip back)."""
    results: list[ScannedFile | None] = [None] * len(jobs)
    big = [
        i
        for i, job in enumerate(jobs)
        if processes > 1 and job.resume is None and job.size >= parts.BYTES_PER_JOB
    ]
    small = sorted(set(range(len(jobs))) - set(big), key=lambda i: -jobs[i].size)
    pooled = processes > 1 and len(small) > 1
    pooled = pooled and sum(jobs[i].size for i in small) >= pool_min_bytes
    if pooled:
        for i, scanned in _in_pool(jobs, small, scanner, processes, for_cache):
            results[i] = scanned
            if progress:
                progress(jobs[i].size)
    else:
        for i in small:
            job = jobs[i]
            results[i] = scan_file(
                job.target, scanner, progress=progress, resume=job.resume, jobs=1,
                for_cache=for_cache,
            )  # fmt: skip
    for i in big:
        job = jobs[i]
        results[i] = scan_file(job.target, scanner, progress=progress, for_cache=for_cache)
    return [r for r in results if r is not None]


# In a forked process of `_in_pool` only: what it scans, set by the pool's initializer.
_WORK: tuple[Sequence[ScanJob], SecretScanner, bool] | None = None


def _start(jobs: Sequence[ScanJob], scanner: SecretScanner, for_cache: bool) -> None:
    global _WORK  # noqa: PLW0603 - one per forked process, set once as it starts
    _WORK = (jobs, scanner, for_cache)


def _scan_some(batch: list[int]) -> list[tuple[int, ScannedFile]]:
    if _WORK is None:
        raise RuntimeError("_scan_some outside a process started by _in_pool")
    jobs, scanner, for_cache = _WORK
    return [
        (i, scan_file(jobs[i].target, scanner, resume=jobs[i].resume, jobs=1, for_cache=for_cache))
        for i in batch
    ]


def batches(sizes: Sequence[int], order: Sequence[int]) -> list[list[int]]:
    """The files (indexes, largest first) in tasks of about `_CHUNK_BYTES` or `_CHUNK_FILES`:
    a big file is a task of its own, thousands of tiny sessions do not cost a trip each, and
    the small tasks at the end keep every process busy until the last."""
    tasks: list[list[int]] = []
    current: list[int] = []
    current_bytes = 0
    for i in order:
        current.append(i)
        current_bytes += sizes[i]
        if current_bytes >= _CHUNK_BYTES or len(current) >= _CHUNK_FILES:
            tasks.append(current)
            current, current_bytes = [], 0
    if current:
        tasks.append(current)
    return tasks


def _in_pool(
    jobs: Sequence[ScanJob],
    order: list[int],
    scanner: SecretScanner,
    processes: int,
    for_cache: bool,
) -> Iterator[tuple[int, ScannedFile]]:
    """(index, scan) of the jobs named in `order`, as they are done, by `processes` forked
    processes that inherit the jobs and the scanner (prepared once, here: never pickled)."""
    scanner.prepare()
    context = multiprocessing.get_context("fork")
    tasks = batches([job.size for job in jobs], order)
    with context.Pool(processes, _start, (jobs, scanner, for_cache)) as pool:
        for done in pool.imap_unordered(_scan_some, tasks):
            yield from done
