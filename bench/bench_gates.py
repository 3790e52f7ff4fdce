"""Benchmark: what the hyperscan pass over raw lines costs, and which gates it pays for.

Every raw line of a transcript goes through the gates' raw database once (`GateIndex.line_scan`)
before anything else is decided about it, so that pass is a floor under `scrub audit`'s time. This
script times it in one process on the benchmark transcript (bench/make_transcript.py), best of
--repeat, and splits it:

- `line_scan` as the scanner calls it, and its database alone (the scans, no bookkeeping);
- the same gates in databases of our own making (no deferral, every gate reports once per line):
  all of them, all but the *name gates* (the gates that look for a credential word such as
  `pass`/`secret`/`token` before an operator: the assignment, label, CLI-flag, XML and
  detect-secrets keyword rules), the name gates alone, and the other gates plus the bare
  credential words as literals in place of the name gates. That last one is the floor for any
  rewriting of the name gates that still looks for their words: a gate must stay a necessary
  condition of its detector's hits, so it cannot skip the words.

Then how much of the file lies within windows around those words (before, after, in bytes):
what running the name gates only near their words would still scan.

    python bench/bench_gates.py                 # the 100 MB bench transcript, best of 3
    python bench/bench_gates.py --file F.jsonl --repeat 5

Prints a markdown table (seconds per pass over the file, and per 100 MB).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from make_transcript import default_path, make_transcript

from scrubber.detection.gate_index import GateIndex
from scrubber.detection.prefilter import load_hyperscan
from scrubber.detection.registry import full_detectors

# A name gate holds a credential word as plain text (literal gates are all \xHH escapes, so a
# token prefix such as `pass:` written that way is not one).
_NAME_GATE = re.compile(r"pass|secret|token", re.IGNORECASE)
# What every name gate looks for first, as the literals a rewritten gate would still need.
_CREDENTIAL_WORDS = rb"(?:pass|pwd|pw|secret|token|key|auth|cred|_pat|name|contrase)"


def lines_of(path: Path) -> list[bytes]:
    with path.open("rb") as stream:
        return [line.rstrip(b"\n") for line in stream if line.strip()]


def best_of(repeat: int, run: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def database(hyperscan: Any, patterns: Sequence[tuple[bytes, bool]]) -> Any:
    """One block-mode database, every pattern reported once per scan."""
    built = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    built.compile(
        expressions=[pattern for pattern, _ in patterns],
        ids=list(range(len(patterns))),
        flags=[
            (hyperscan.HS_FLAG_CASELESS if caseless else 0) | hyperscan.HS_FLAG_SINGLEMATCH
            for _, caseless in patterns
        ],
    )
    return built


def scan_all(built: Any, lines: Sequence[bytes]) -> Callable[[], None]:
    def ignore(pattern: int, start: int, end: int, flags: int, context: Any) -> None:
        return None

    def run() -> None:
        for line in lines:
            built.scan(line, match_event_handler=ignore)

    return run


def measurements(
    index: GateIndex, hyperscan: Any, lines: Sequence[bytes], repeat: int
) -> list[tuple[str, int, float]]:
    """(what, gates, best seconds) for each way of running the gates over `lines`."""
    raw = [(raw.encode("latin-1"), caseless) for _, raw, caseless in index.gates]
    names = [
        i for i, (pattern, _) in enumerate(raw) if _NAME_GATE.search(pattern.decode("latin-1"))
    ]
    others = [raw[i] for i in range(len(raw)) if i not in names]
    named = [raw[i] for i in names]
    words = [(_CREDENTIAL_WORDS, True)]

    def line_scan() -> None:
        for line in lines:
            index.line_scan(line)

    return [
        ("GateIndex.line_scan, as the scanner runs it", len(raw), best_of(repeat, line_scan)),
        ("all gates, one database", len(raw), best_of(repeat, scan_all(database(hyperscan, raw), lines))),
        ("all but the name gates", len(others), best_of(repeat, scan_all(database(hyperscan, others), lines))),
        ("the name gates alone", len(named), best_of(repeat, scan_all(database(hyperscan, named), lines))),
        (
            "all but the name gates, plus their bare credential words",
            len(others) + 1,
            best_of(repeat, scan_all(database(hyperscan, others + words), lines)),
        ),
    ]  # fmt: skip


def word_windows(lines: Sequence[bytes], before: int, after: int) -> tuple[int, int]:
    """(credential words found, bytes within `before`/`after` of one) over `lines`."""
    words = re.compile(_CREDENTIAL_WORDS, re.IGNORECASE)
    found = covered = 0
    for line in lines:
        reached = -1
        for match in words.finditer(line):
            found += 1
            start, end = max(0, match.start() - before), min(len(line), match.end() + after)
            covered += max(0, end - max(start, reached))
            reached = max(reached, end)
    return found, covered


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--file", type=Path, default=None, help="a JSONL transcript")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    hyperscan = load_hyperscan()
    if hyperscan is None:
        print("bench_gates: the hyperscan package is not installed", file=sys.stderr)
        return 2
    path = args.file
    if path is None:
        path = default_path(100)
        make_transcript(path, 100)
    lines = lines_of(path)
    size = sum(len(line) for line in lines)
    index = GateIndex(full_detectors(()), "hyperscan", None)
    print(f"{path}: {len(lines)} lines, {size / 1e6:.1f} MB; best of {args.repeat}\n")
    print("| pass over every raw line | gates | s | s per 100 MB |")
    print("|---|---:|---:|---:|")
    for what, gates, seconds in measurements(index, hyperscan, lines, args.repeat):
        print(f"| {what} | {gates} | {seconds:.3f} | {seconds * 1e8 / size:.3f} |")
    print("\n| window around each credential word | words | MB within | share |")
    print("|---|---:|---:|---:|")
    for before, after in ((64, 128), (128, 256), (320, 1024)):
        found, covered = word_windows(lines, before, after)
        print(
            f"| {before} before, {after} after | {found} | {covered / 1e6:.1f} | {covered / size:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
