"""Sessions searched side by side by forked processes (`SCRUB_JOBS`, as audit's parts).

A session with hits is read through the full scanner (usecases/search.py), which is audit's
speed, not a byte search's: on two cores two processes search about twice the sessions. Each
process is forked from the one that built the scanner (its compiled databases are shared,
never pickled) and hands back only the outcomes, which hold
no secret. Results come back in the sessions' order, so one process or several give the same.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from scrubber.usecases.search_sources import SearchedSession

T = TypeVar("T")

# In a forked process only: the sessions and the search of one, inherited at the fork.
_SHARED: tuple[Sequence[SearchedSession], Callable[[SearchedSession], Any]] | None = None


def _search_one(index: int) -> Any:
    assert _SHARED is not None  # noqa: S101 - set before the pool forks
    sessions, search = _SHARED
    return search(sessions[index])


def search_sessions(
    sessions: Sequence[SearchedSession],
    search: Callable[[SearchedSession], T],
    jobs: int,
) -> Iterator[T]:
    """`search` of each session, in order; with `jobs` > 1 (and more than one session) run by
    that many forked processes (`search` is inherited, never pickled; what it returns is)."""
    if jobs <= 1 or len(sessions) < 2:
        for session in sessions:
            yield search(session)
        return
    global _SHARED  # noqa: PLW0603 - read by the forked processes only
    # No `scanner.prepare()` first: most sessions hold no hit and never wake a detector, so a
    # process imports detect-secrets (and compiles its hyperscan sets, 25 ms) only once it
    # needs it.
    _SHARED = (sessions, search)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(sessions))) as pool:
            yield from pool.imap(_search_one, range(len(sessions)))
    finally:
        _SHARED = None
