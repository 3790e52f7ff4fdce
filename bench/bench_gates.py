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

With `--libhs PATH`, the same gates in one database are also compiled and run by another build
of the library (a system `libhs.so`, through ctypes, with a callback per match as the wheel
makes): whether a build for this CPU (the Debian packages `libhyperscan5` and `libvectorscan5`
dispatch to AVX2/AVX-512 at run time; the wheel's databases report no CPU features) would make
the pass faster.

    python bench/bench_gates.py                 # the 100 MB bench transcript, best of 3
    python bench/bench_gates.py --file F.jsonl --repeat 5
    python bench/bench_gates.py --libhs /usr/lib/x86_64-linux-gnu/libhs.so.5

Prints a markdown table (seconds per pass over the file, and per 100 MB).
"""

from __future__ import annotations

import argparse
import ctypes
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


def libhs_pass(
    path: str, patterns: Sequence[tuple[bytes, bool]], lines: Sequence[bytes]
) -> tuple[str, Callable[[], None]]:
    """The database `database` builds, compiled by the library at `path` (its C API through
    ctypes): its info line and a pass over `lines` with a Python callback per match."""
    lib = ctypes.CDLL(path)
    count = len(patterns)
    caseless, single, block_mode = 1, 8, 1  # HS_FLAG_CASELESS, HS_FLAG_SINGLEMATCH, HS_MODE_BLOCK
    expressions = (ctypes.c_char_p * count)(*[pattern for pattern, _ in patterns])
    flags = (ctypes.c_uint * count)(*[(caseless if c else 0) | single for _, c in patterns])
    ids = (ctypes.c_uint * count)(*range(count))
    built, error, scratch = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.hs_compile_multi(
        expressions, flags, ids, ctypes.c_uint(count), ctypes.c_uint(block_mode), None,
        ctypes.byref(built), ctypes.byref(error),
    )  # fmt: skip
    if status != 0 or lib.hs_alloc_scratch(built, ctypes.byref(scratch)) != 0:
        raise SystemExit(f"bench_gates: {path} could not compile the gates (status {status})")
    info = ctypes.c_char_p()
    lib.hs_database_info(built, ctypes.byref(info))
    handler_type = ctypes.CFUNCTYPE(
        ctypes.c_int, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_uint,
        ctypes.c_void_p,
    )  # fmt: skip
    handler = handler_type(lambda *_: 0)
    scan = lib.hs_scan
    scan.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p,
        handler_type, ctypes.c_void_p,
    ]  # fmt: skip

    def run() -> None:
        for line in lines:
            scan(built, line, len(line), 0, scratch, handler, None)

    return (info.value or b"").decode(), run


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
    parser.add_argument("--libhs", help="also time the gates with this libhs.so (ctypes)")
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
    if args.libhs:
        raw = [(raw.encode("latin-1"), caseless) for _, raw, caseless in index.gates]
        wheel = database(hyperscan, raw)
        info, system_pass = libhs_pass(args.libhs, raw, lines)
        passes = {
            f"all gates, the wheel ({wheel.info().decode()})": scan_all(wheel, lines),
            f"all gates, {args.libhs} ({info})": system_pass,
        }
        best = dict.fromkeys(passes, float("inf"))
        for _ in range(args.repeat):  # interleaved: the machine's load weighs on both alike
            for what, run in passes.items():
                best[what] = min(best[what], best_of(1, run))
        for what, seconds in best.items():
            print(f"| {what} | {len(raw)} | {seconds:.3f} | {seconds * 1e8 / size:.3f} |")
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
