"""Faults during `scrub redact --in-place`, with real processes on a multi-MB transcript.

- kill -9 at random moments: the file is always the exact old bytes or the complete redacted
  version, never a mix, and the next run still works (the lock died with the process);
- another process appends lines (open, append, close, as Claude Code does) while the rewrite
  runs: every appended line is there afterwards, in order, and redacted when it was written
  before the rewrite finished;
- a full disk (RLIMIT_FSIZE) while writing a copy or rewriting in place: a clear error, the
  original untouched, no partial file left.
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import fake_github_token, write_large_transcript

pytestmark = pytest.mark.slow  # about 15 real processes

SIZE = 3_000_000
ROUNDS = 10


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Big:
    """A large transcript, its redacted version (from one uninterrupted run) and how long that
    run took."""

    def __init__(self, world: Any, original: bytes, redacted: bytes, seconds: float) -> None:
        self.world = world
        self.original = original
        self.redacted = redacted
        self.seconds = seconds
        self.path = world.root / "live" / "session.jsonl"

    def reset(self, *, keep_leftovers: bool = False) -> Path:
        self.path.parent.mkdir(exist_ok=True)
        for leftover in self.path.parent.iterdir():
            if not keep_leftovers or leftover == self.path:
                leftover.unlink()
        self.path.write_bytes(self.original)
        self.path.chmod(0o600)
        return self.path


@pytest.fixture(scope="module")
def big(sandbox_factory: Callable[[str], Any]) -> Big:
    world = sandbox_factory("redact-faults")
    source = world.root / "source.jsonl"
    made = write_large_transcript(source, SIZE, seed=5)
    assert made.secrets
    original = source.read_bytes()
    reference = world.root / "reference" / "session.jsonl"
    reference.parent.mkdir()
    shutil.copy(source, reference)
    started = time.monotonic()
    done = world.scrub("redact", reference, "--in-place")
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    redacted = reference.read_bytes()
    assert redacted != original
    assert not any(n.encode() in redacted for s in made.secrets for n in s.needles())
    return Big(world, original, redacted, seconds)


def test_kill_9_leaves_the_old_file_or_the_new_one(big: Big) -> None:
    rng = random.Random(99)  # fake timing, not cryptography
    seen = {"old": 0, "new": 0}
    leftovers = 0
    for _ in range(ROUNDS):
        path = big.reset(keep_leftovers=True)
        process = big.world.popen(
            "redact", path, "--in-place", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # Process start takes a good part of a run: aim the kills at the whole of it.
        time.sleep(rng.uniform(0.25, 1.0) * big.seconds)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        data = path.read_bytes()
        state = "old" if data == big.original else "new" if data == big.redacted else "mixed"
        assert state != "mixed", f"{len(data)} bytes: neither the old nor the new file"
        seen[state] += 1
        leftovers = max(leftovers, sum(1 for p in path.parent.iterdir() if p != path))
    # The file is usable afterwards: a new run finishes the job (the lock died with the process)
    # and clears the temp files killed runs left (hidden copies of the transcript).
    path = big.reset(keep_leftovers=True)
    done = big.world.scrub("redact", path, "--in-place")
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == big.redacted
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert seen["old"] + seen["new"] == ROUNDS
    print(f"kill -9 rounds: {seen}, at most {leftovers} temp files left by killed runs")


_APPENDER = r"""
import json, sys, time
from pathlib import Path

path = Path(sys.argv[1])
token = sys.stdin.read().strip()
folder = path.parent
deadline = time.monotonic() + 60

def rewriting():
    return any(p.name.endswith(".scrub-tmp") for p in folder.iterdir())

while not rewriting():  # wait for the rewrite to start
    if time.monotonic() > deadline:
        print(json.dumps({"error": "the rewrite never started"}))
        sys.exit(1)
    time.sleep(0.0005)
log = []
for seq in range(100000):
    content = f"line {seq}" + (f" key {token}" if seq % 3 == 0 else "")
    record = {"type": "user", "seq": seq, "message": {"role": "user", "content": content}}
    with path.open("ab") as out:  # open, append, close: as Claude Code writes
        out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    during = rewriting()
    log.append([seq, during])
    if not during:
        break
    time.sleep(0.001)
print(json.dumps({"log": log}))
"""


@pytest.mark.parametrize("round_", [1, 2])
def test_lines_appended_during_the_rewrite_are_kept_in_order(big: Big, round_: int) -> None:
    path = big.reset()
    token = fake_github_token(random.Random(round_))
    appender = subprocess.Popen(
        [sys.executable, "-c", _APPENDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert appender.stdin is not None
    appender.stdin.write(token)
    appender.stdin.close()
    done = big.world.scrub("redact", path, "--in-place", "--format", "json")
    assert appender.stdout is not None
    out = appender.stdout.read()
    assert appender.wait(timeout=60) == 0, out
    assert done.returncode == 0, done.stderr
    log = json.loads(out)["log"]
    assert sum(1 for _, during in log if during) >= 3  # lines really arrived mid-rewrite
    data = path.read_bytes()
    assert data.startswith(big.redacted)
    tail = data[len(big.redacted) :].split(b"\n")
    assert tail[-1] == b""
    records = [json.loads(line) for line in tail[:-1]]
    got = [r["seq"] for r in records]
    # All there, once each, in order: the lines written while the rewrite ran keep their order
    # exactly. The appender's last line is written after the rename, straight to the new file;
    # if the line before it reached the old file in the moment between the rewrite's last look
    # and its rename, the rewrite copies that one over right after the rename, and a writer
    # this fast (a line every millisecond) may get its next line in first (scrubber/usecases/redact_in_place.py).
    last = log[-1][0]
    assert sorted(got) == [seq for seq, _ in log], f"lines missing or doubled: {log[-8:]}"
    assert [seq for seq in got if seq != last] == [seq for seq, _ in log[:-1]], (
        f"appended lines out of order; (seq, written mid-rewrite): {log[-8:]}, got {got[-5:]}"
    )
    by_seq = {r["seq"]: r for r in records}
    for seq, during in log:
        if during:  # written before the rename: the rewrite must have redacted it
            assert token not in by_seq[seq]["message"]["content"], seq
    (report,) = json.loads(done.stdout)["files"]
    assert report["folded_tail_bytes"] > 0


def _limited(fsize: int) -> Callable[[], None]:
    def limit() -> None:
        # A full disk, for real: writes past `fsize` fail with EFBIG (SIGXFSZ ignored).
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return limit


@pytest.mark.parametrize("mode", ["copy", "in-place"])
def test_a_full_disk_leaves_no_partial_file(big: Big, mode: str) -> None:
    path = big.reset()
    out_dir = big.world.root / "full"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir()
    args = ["--output", str(out_dir / "copy.jsonl")] if mode == "copy" else ["--in-place"]
    done = subprocess.run(
        [sys.executable, "-m", "scrubber.cli", "redact", str(path), *args],
        env=big.world.environ(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited(SIZE // 3),
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("scrub: error: ")]
    assert f"{path if mode == 'in-place' else out_dir}" in error and "nothing" in error
    assert "File too large" in done.stderr or "space" in done.stderr
    assert path.read_bytes() == big.original
    assert list(out_dir.iterdir()) == []
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
