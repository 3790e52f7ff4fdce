"""Benchmark: archive a large session (about 100 MB of realistic transcript) in bounded memory.

A config dir is made in a temp folder with one session whose transcript is written by
`scrubber.demo.write_large_transcript` (code reads, test logs, git output, JSON, edits, planted
fake secrets), plus a small side folder and file-history. Then, each in a fresh process so that
its peak RSS is its own (VmHWM, reset on exec):

- archive: `scrubber.usecases.archive.archive_sessions` (hashing pass, gzip tar streamed into the age
  writer, fsync, read-back hash, sidecar), as `scrub archive` runs it after discovery (whose
  own peak is reported apart: the peak is reset between the two phases);
- verify: a full `verify_archive` with the identity (decrypt, gunzip, every file hashed);
- restore: `restore_archive` into a fresh config dir.

Each is run at a tenth of the size and at the full size: memory is bounded when the peak does
not grow with the size. Reports seconds, MB/s of transcript (1 MB = 10^6 bytes), the archive's
size, and RSS before the work and at its peak (MiB).

    python bench/bench_archive.py                 # 100 MB
    python bench/bench_archive.py --size-mb 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

MB = 1_000_000
PROJECT = "-home-bench-work-big"


def _reset_peak() -> None:
    # Linux: writing 5 to clear_refs resets VmHWM to the current RSS, so a peak can be
    # measured for one phase of a process (here: after discovery, for the archive itself).
    Path("/proc/self/clear_refs").write_text("5")


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"{field} not in /proc/self/status")


def make_config(root: Path, size_mb: int) -> dict[str, object]:
    from scrubber.archive.keys import generate_identity, write_identity_file
    from scrubber.demo import write_large_transcript

    config = root / "claude"
    project = config / "projects" / PROJECT
    project.mkdir(parents=True)
    big = write_large_transcript(project / "placeholder.jsonl", size_mb * MB, seed=7)
    transcript = project / f"{big.session_id}.jsonl"
    big.path.rename(transcript)
    side = project / big.session_id / "tool-results"
    side.mkdir(parents=True)
    (side / "toolu_bench.txt").write_text("tool output\n" * 4000)
    history = config / "file-history" / big.session_id
    history.mkdir(parents=True)
    (history / "0123456789abcdef@v1").write_text("print('hello')\n" * 100)
    identity = generate_identity()
    key = root / "key.txt"
    write_identity_file(key, identity, datetime.now(UTC))
    return {
        "config": str(config),
        "key": str(key),
        "recipient": identity.recipient().encode(),
        "session_id": big.session_id,
        "transcript_bytes": transcript.stat().st_size,
    }


def child(step: str, setup: dict[str, object], home: Path) -> dict[str, float]:
    from scrubber.archive.keys import read_identities_file
    from scrubber.archive.layout import list_archives
    from scrubber.archive.restore import restore_archive
    from scrubber.archive.verify import verify_archive
    from scrubber.policy.model import Policy
    from scrubber.transcript.sessions import discover
    from scrubber.usecases.archive import Encryption, archive_sessions

    config = Path(str(setup["config"]))
    identities = read_identities_file(Path(str(setup["key"])))
    result: dict[str, float] = {}
    if step == "archive":
        sessions = list(discover(config).sessions)
        result["discovery_peak_rss_mib"] = _status_mib("VmHWM")
        _reset_peak()
        before = _status_mib("VmRSS")
        start = time.perf_counter()
        (outcome,) = archive_sessions(
            sessions,
            policy=Policy.default(),
            home=home,
            encryption=Encryption((identities[0].recipient(),), "flags"),
            now=datetime.now(UTC),
        )
        seconds = time.perf_counter() - start
        if outcome.written is None:
            raise RuntimeError(str(outcome.error))
        result["archive_bytes"] = outcome.written.entry.path.stat().st_size
    else:
        (entry,) = list_archives(home / "archives")
        _reset_peak()
        before = _status_mib("VmRSS")
        start = time.perf_counter()
        if step == "verify":
            report = verify_archive(entry.path, identities)
            if not report.full:
                raise RuntimeError("not a full verification")
        else:
            with tempfile.TemporaryDirectory(dir=home) as target:
                restore_archive(entry.path, identities, Path(target) / "claude")
        seconds = time.perf_counter() - start
    result.update(
        seconds=seconds,
        rss_before_mib=before,
        peak_rss_mib=_status_mib("VmHWM"),
    )
    return result


def run_size(size_mb: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-archive-") as tmp:
        root = Path(tmp)
        setup = make_config(root, size_mb)
        home = root / "scrub-home"
        home.mkdir()
        steps: dict[str, object] = {"size_mb": size_mb, **setup}
        for step in ("archive", "verify", "restore"):
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    step,
                    "--setup",
                    json.dumps(setup),
                    "--home",
                    str(home),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            steps[step] = json.loads(done.stdout)
        return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--setup", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, json.loads(args.setup), Path(args.home))))
        return 0
    runs = [run_size(size) for size in (max(1, args.size_mb // 10), args.size_mb)]
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    for run in runs:
        mb = int(run["transcript_bytes"]) / MB  # type: ignore[call-overload]
        archive = run["archive"]
        assert isinstance(archive, dict)
        print(
            f"session of {mb:.1f} MB -> archive {archive['archive_bytes'] / MB:.1f} MB "
            f"({archive['archive_bytes'] / (mb * MB):.0%})"
        )
        print(
            f"  discovery (scrubber.transcript.sessions) peak RSS "
            f"{archive['discovery_peak_rss_mib']:5.1f} MiB"
        )
        for step in ("archive", "verify", "restore"):
            m = run[step]
            assert isinstance(m, dict)
            print(
                f"  {step:<8} {m['seconds']:6.2f} s  {mb / m['seconds']:6.1f} MB/s   "
                f"RSS {m['rss_before_mib']:5.1f} MiB before, peak {m['peak_rss_mib']:5.1f} MiB "
                f"({m['peak_rss_mib'] - m['rss_before_mib']:+.1f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
