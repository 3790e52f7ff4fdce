"""Write the benchmark transcript: a realistic Claude Code session of a given size, fixed seed.

The content comes from `scrubber.demo.write_large_transcript`: code reads, test logs, git
output, JSON payloads, lockfiles, edits, with about one planted fake secret per 200 lines
(built at run time from the seeded generator, never literals). The same size and seed give
the same bytes, so numbers from different runs and machines are about the same file.

    python bench/make_transcript.py                           # bench/out/transcript-100mb.jsonl
    python bench/make_transcript.py --size-mb 1000 --out /tmp/scrub-bench/transcript-1gb.jsonl

MB here is 10^6 bytes. An existing file of the right size written from the same seed is
reused unless --force is given (the generator runs at about 50 MB/s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from scrubber.demo import write_large_transcript

ROOT = Path(__file__).resolve().parents[1]
SEED = 20260101
MB = 1_000_000


def default_path(size_mb: int) -> Path:
    return ROOT / "bench" / "out" / f"transcript-{size_mb}mb.jsonl"


def make_transcript(path: Path, size_mb: int, seed: int = SEED, force: bool = False) -> Path:
    """Write (or reuse) the transcript at `path`; returns the path.

    A small sidecar `<path>.meta.json` records size and seed, so a file left over from another
    size or seed is regenerated instead of silently reused."""
    meta_path = path.with_name(path.name + ".meta.json")
    wanted = {"size_mb": size_mb, "seed": seed}
    if not force and path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            meta = {}
        if {k: meta.get(k) for k in wanted} == wanted and meta.get("bytes") == path.stat().st_size:
            return path
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    result = write_large_transcript(path, size_mb * MB, seed=seed)
    elapsed = time.perf_counter() - start
    meta = {
        **wanted,
        "bytes": result.size,
        "lines": result.lines,
        "planted_secrets": len(result.secrets),
        "session_id": result.session_id,
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(
        f"wrote {path} ({result.size / MB:.1f} MB, {result.lines} lines, "
        f"{len(result.secrets)} planted fake secrets) in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100, help="target size in 10^6 bytes")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=None, help="default bench/out/...")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    args = parser.parse_args(argv)
    path = args.out if args.out is not None else default_path(args.size_mb)
    print(make_transcript(path, args.size_mb, args.seed, args.force))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
