"""Write the benchmark transcript: a realistic Claude Code session of a given size, fixed seed.

The content comes from `scrubber.demo.write_large_transcript`: code reads, test logs, git
output, JSON payloads, lockfiles, edits, with about one planted fake secret per 200 lines
(built at run time from the seeded generator, never literals). The same size and seed give
the same bytes, so numbers from different runs and machines are about the same file.

    python bench/make_transcript.py                           # bench/out/transcript-100mb.jsonl
    python bench/make_transcript.py --size-mb 1000 --out /tmp/scrub-bench/transcript-1gb.jsonl
    python bench/make_transcript.py --findings-per-mb 60     # bench/out/transcript-100mb-d60.jsonl

--findings-per-mb sets the density of planted secrets instead (bench/fleet_gen.py's writer:
the same kinds of lines, a secret turn every 2 / density MB; our default file has about 2
findings per MB, real public transcripts had about 20, another generator's about 60).

MB here is 10^6 bytes. An existing file of the right size written from the same seed is
reused unless --force is given (the generator runs at about 50 MB/s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from fleet_gen import write_dense_transcript

from scrubber.demo import write_large_transcript

ROOT = Path(__file__).resolve().parents[1]
SEED = 20260101
MB = 1_000_000


def default_path(size_mb: int, findings_per_mb: float | None = None) -> Path:
    density = "" if findings_per_mb is None else f"-d{findings_per_mb:g}"
    return ROOT / "bench" / "out" / f"transcript-{size_mb}mb{density}.jsonl"


def make_transcript(
    path: Path,
    size_mb: int,
    seed: int = SEED,
    force: bool = False,
    findings_per_mb: float | None = None,
) -> Path:
    """Write (or reuse) the transcript at `path`; returns the path.

    A small sidecar `<path>.meta.json` records size, seed and density, so a file left over
    from other arguments is regenerated instead of silently reused."""
    meta_path = path.with_name(path.name + ".meta.json")
    wanted = {"size_mb": size_mb, "seed": seed, "findings_per_mb": findings_per_mb}
    if not force and path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            meta = {}
        if {k: meta.get(k) for k in wanted} == wanted and meta.get("bytes") == path.stat().st_size:
            return path
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if findings_per_mb is None:
        result = write_large_transcript(path, size_mb * MB, seed=seed)
        written, lines, planted = result.size, result.lines, len(result.secrets)
        session_id = result.session_id
    else:
        dense = write_dense_transcript(
            path, size_mb * MB, seed=seed, findings_per_mb=findings_per_mb
        )
        counts = dense["counts"]
        written, lines, session_id = dense["bytes"], counts.pop("lines", 0), dense["session_id"]
        planted = sum(counts.values())
    elapsed = time.perf_counter() - start
    meta = {
        **wanted,
        "bytes": written,
        "lines": lines,
        "planted_secrets": planted,
        "session_id": session_id,
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(
        f"wrote {path} ({written / MB:.1f} MB, {lines} lines, "
        f"{planted} planted fake secrets) in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100, help="target size in 10^6 bytes")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=None, help="default bench/out/...")
    parser.add_argument("--force", action="store_true", help="regenerate even if present")
    parser.add_argument(
        "--findings-per-mb", type=float, default=None, help="density of planted secrets"
    )
    args = parser.parse_args(argv)
    density = args.findings_per_mb
    path = args.out if args.out is not None else default_path(args.size_mb, density)
    print(make_transcript(path, args.size_mb, args.seed, args.force, density))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
