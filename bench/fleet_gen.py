"""Write a benchmark config directory: many sessions of log-normal sizes, fixed seed.

`write_fleet(root)` fills `root` (a CLAUDE_CONFIG_DIR) the way Claude Code lays it out:
`projects/<project>/<session>.jsonl`, some sessions with `<session>/subagents/agent-*.jsonl`
(+ `.meta.json`) and `<session>/tool-results/<tool id>.txt` (outputs too large for the
transcript), and `history.jsonl` (one line per typed prompt). The lines are realistic tool
output (code reads, test logs, git, JSON, lockfiles, edits) from `scrubber.demo`, with fake
secrets planted at `findings_per_mb` (built at run time from the seeded generator, never
literals). Sizes are log-normal (a few KB to tens of MB, as real config dirs are), scaled so the
total is about `total_mb`. The same arguments give the same bytes.

    python bench/fleet_gen.py /tmp/scrub-bench/fleet                 # 300 sessions, 300 MB
    python bench/fleet_gen.py /tmp/fleet --sessions 50 --total-mb 20 --findings-per-mb 20

`write_dense_transcript` writes one session file at a chosen density (bench/make_transcript.py
--findings-per-mb uses it). MB is 10^6 bytes. The returned summary holds counts and paths, never
a value.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from scrubber.demo.content import NOUNS, test_log_text
from scrubber.demo.fakes import HEX, fake_uuid, pick
from scrubber.demo.large import _SECRET_ROTATION, _Pools, _Script
from scrubber.demo.records import DEFAULT_START, DEMO_HOME, SessionWriter, dump_line

MB = 1_000_000
FLEET_SEED = 20261201
# A secret turn shows its value about twice (the tool_result text and toolUseResult, or the
# prompt and its copies), so one turn stands for about this many findings (measured with
# `scrub audit` on generated files: see bench/README.md).
FINDINGS_PER_SECRET_TURN = 2.0
MIN_SESSION_BYTES = 3_000
LOG_NORMAL_SIGMA = 1.5  # median about a quarter of the mean: many small sessions, a few huge
SUBAGENT_SHARE = 0.25  # of sessions that ran subagents
SIDE_FILE_SHARE = 0.2  # of sessions with a persisted (tool-results) output
PROJECTS = 12


@dataclass(slots=True)
class _Density:
    """When the next secret turn is due, counted in bytes written across every file (side
    files too), so small sessions get their share on average."""

    rng: random.Random
    bytes_per_secret: float
    next_at: float
    written: int = 0

    @classmethod
    def of(cls, rng: random.Random, findings_per_mb: float) -> _Density:
        if findings_per_mb <= 0:
            return cls(rng, math.inf, math.inf)
        every = MB * FINDINGS_PER_SECRET_TURN / findings_per_mb
        return cls(rng, every, every * rng.uniform(0.2, 1.0))

    def due(self) -> bool:
        if self.written < self.next_at:
            return False
        self.next_at += self.bytes_per_secret * self.rng.uniform(0.5, 1.5)
        return True


def _fill(
    out: Any, script: _Script, target_bytes: int, density: _Density, counts: dict[str, int]
) -> int:
    """Append turns to `script`'s session until about `target_bytes` are written to `out`."""
    s = script.s
    written = 0
    while written < target_bytes:
        if density.due():
            kind, _ = script.secret_turn()
            counts[kind] = counts.get(kind, 0) + 1
        else:
            script.ordinary_turn()
        chunk = s.data()
        out.write(chunk)
        written += len(chunk)
        density.written += len(chunk)
        counts["lines"] = counts.get("lines", 0) + len(s.lines)
        s.lines.clear()
    return written


def write_dense_transcript(
    path: Path, target_bytes: int, *, seed: int = FLEET_SEED, findings_per_mb: float = 60
) -> dict[str, Any]:
    """One realistic transcript of about `target_bytes` with fake secrets at the given
    density; returns counts (lines, secret turns by kind), never a value."""
    rng = random.Random(seed)  # reproducible fake data, not cryptography
    pools = _Pools(rng)
    s = SessionWriter(rng, fake_uuid(rng), f"{DEMO_HOME}/work/monorepo", DEFAULT_START)
    script = _Script(rng, pools, s, first_turn=rng.randrange(len(_SECRET_ROTATION)))
    counts: dict[str, int] = {}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        s.prompt(pools.prompts[0])
        written = _fill(out, script, target_bytes, _Density.of(rng, findings_per_mb), counts)
    return {"path": str(path), "bytes": written, "session_id": s.id, "counts": counts}


def _session_sizes(rng: random.Random, sessions: int, total_bytes: int) -> list[int]:
    raw = [rng.lognormvariate(0.0, LOG_NORMAL_SIGMA) for _ in range(sessions)]
    scale = total_bytes / sum(raw)
    return [max(MIN_SESSION_BYTES, int(r * scale)) for r in raw]


class _Fleet:
    def __init__(self, root: Path, seed: int, findings_per_mb: float) -> None:
        self.root = root
        self.rng = random.Random(seed)  # reproducible fake data, not cryptography
        self.pools = _Pools(self.rng)
        self.density = _Density.of(self.rng, findings_per_mb)
        self.counts: dict[str, int] = {}
        self.files: list[str] = []
        self.bytes = 0
        self.history: list[bytes] = []
        self.projects = [
            f"{DEMO_HOME}/work/{self.rng.choice(NOUNS).replace('_', '-')}-{i}"
            for i in range(PROJECTS)
        ]

    def _open(self, relative: str) -> Any:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        self.files.append(relative)
        return path.open("wb")

    def session(self, index: int, size: int) -> None:
        rng = self.rng
        cwd = rng.choice(self.projects)
        project = cwd.replace("/", "-")
        start = DEFAULT_START + timedelta(hours=index * 7 + rng.uniform(0, 5))
        s = SessionWriter(rng, fake_uuid(rng), cwd, start)
        script = _Script(rng, self.pools, s, first_turn=rng.randrange(len(_SECRET_ROTATION)))
        base = f"projects/{project}/{s.id}"
        agents = rng.randint(1, 3) if rng.random() < SUBAGENT_SHARE else 0
        main_bytes = int(size * (0.75 if agents else 1.0))
        with self._open(base + ".jsonl") as out:
            s.prompt(self.pools.prompts[index % len(self.pools.prompts)])
            self._typed(s, self.pools.prompts[index % len(self.pools.prompts)])
            if rng.random() < SIDE_FILE_SHARE:
                self._persisted_output(s, base)
            self.bytes += _fill(out, script, main_bytes, self.density, self.counts)
            for _ in range(rng.randint(0, 3)):
                self._typed(s, rng.choice(self.pools.prompts))
            s.emit({"type": "ai-title", "aiTitle": f"Work on {project[-20:]}", "sessionId": s.id})
            chunk = s.data()
            out.write(chunk)
            self.bytes += len(chunk)
            self.density.written += len(chunk)
            s.lines.clear()
        for _ in range(agents):
            self._subagent(s, base, (size - main_bytes) // agents)
        self._touch(base + ".jsonl", s)

    def _typed(self, s: SessionWriter, text: str) -> None:
        entry = {
            "display": text,
            "pastedContents": {},
            "timestamp": int(s.clock.timestamp() * 1000),
            "project": s.cwd,
            "sessionId": s.id,
        }
        self.history.append(dump_line(entry))

    def _persisted_output(self, s: SessionWriter, base: str) -> None:
        rng = self.rng
        log = "\n".join(
            test_log_text(rng, rng.randint(40, 120), fail=True) for _ in range(rng.randint(4, 12))
        )
        s.bash_persisted("pytest -q tests/", log, f"{DEMO_HOME}/.claude/{base}")
        for tool_id, output in s.tool_results.items():
            with self._open(f"{base}/tool-results/{tool_id}.txt") as side:
                data = output.encode()
                side.write(data)
                self.bytes += len(data)
                self.density.written += len(data)
        s.tool_results.clear()

    def _subagent(self, parent: SessionWriter, base: str, size: int) -> None:
        rng = self.rng
        agent_id = pick(rng, HEX, 8)
        sub = SessionWriter(rng, parent.id, parent.cwd, parent.clock, sidechain=True,
                            agent_id=agent_id)  # fmt: skip
        script = _Script(rng, self.pools, sub, first_turn=rng.randrange(len(_SECRET_ROTATION)))
        folder = f"{base}/subagents"
        with self._open(f"{folder}/agent-{agent_id}.jsonl") as out:
            sub.user("Find every caller of the " + rng.choice(NOUNS) + " module and list them.")
            self.bytes += _fill(out, script, max(size, 2_000), self.density, self.counts)
        with self._open(f"{folder}/agent-{agent_id}.meta.json") as meta:
            meta.write(dump_line({"agentType": "Explore", "description": "Find callers"}))
        self._touch(f"{folder}/agent-{agent_id}.jsonl", sub)

    def _touch(self, relative: str, s: SessionWriter) -> None:
        stamp = s.clock.timestamp()
        os.utime(self.root / relative, (stamp, stamp))

    def finish(self) -> None:
        with self._open("history.jsonl") as out:
            for line in self.history:
                out.write(line + b"\n")
                self.bytes += len(line) + 1


def write_fleet(
    root: Path,
    *,
    sessions: int = 300,
    total_mb: float = 300,
    seed: int = FLEET_SEED,
    findings_per_mb: float = 60,
) -> dict[str, Any]:
    """Fill the config dir `root` with `sessions` sessions of about `total_mb` MB in all.

    Returns a summary: root, sessions, files (relative paths, in writing order), bytes, lines,
    secret turns by kind (no values), and the arguments; `root` should be empty or absent."""
    root.mkdir(parents=True, exist_ok=True)
    fleet = _Fleet(root, seed, findings_per_mb)
    for index, size in enumerate(_session_sizes(fleet.rng, sessions, int(total_mb * MB))):
        fleet.session(index, size)
    fleet.finish()
    counts = dict(fleet.counts)
    lines = counts.pop("lines", 0)
    return {
        "root": str(root),
        "sessions": sessions,
        "files": fleet.files,
        "bytes": fleet.bytes,
        "lines": lines,
        "secret_turns": counts,
        "seed": seed,
        "total_mb": total_mb,
        "findings_per_mb": findings_per_mb,
    }


def append_to_sessions(
    root: Path,
    *,
    sessions: int = 10,
    kb: float = 20,
    seed: int = FLEET_SEED + 1,
    findings_per_mb: float = 60,
) -> list[str]:
    """Append about `kb` KB of new turns (at the same density of fake secrets) to `sessions`
    transcripts of the fleet at `root`, picked by the seed, as Claude Code appends to a session
    that is resumed: new records chained to the last one. Returns their relative paths."""
    rng = random.Random(seed)  # reproducible fake data, not cryptography
    transcripts = sorted(p for p in (root / "projects").glob("*/*.jsonl"))
    picked = rng.sample(transcripts, min(sessions, len(transcripts)))
    pools = _Pools(rng)
    density = _Density.of(rng, findings_per_mb)
    for path in picked:
        last = json.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
        first = json.loads(path.open("rb").readline())
        cwd = first.get("cwd") or f"{DEMO_HOME}/work"
        s = SessionWriter(rng, str(first.get("sessionId") or path.stem), cwd, DEFAULT_START)
        s.last = last.get("uuid")
        script = _Script(rng, pools, s, first_turn=rng.randrange(len(_SECRET_ROTATION)))
        with path.open("ab") as out:
            _fill(out, script, int(kb * 1000), density, {})
    return [str(p.relative_to(root)) for p in picked]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the config dir to fill (empty or absent)")
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--total-mb", type=float, default=300)
    parser.add_argument("--seed", type=int, default=FLEET_SEED)
    parser.add_argument("--findings-per-mb", type=float, default=60)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    summary = write_fleet(
        args.root,
        sessions=args.sessions,
        total_mb=args.total_mb,
        seed=args.seed,
        findings_per_mb=args.findings_per_mb,
    )
    elapsed = time.perf_counter() - start
    brief = {k: v for k, v in summary.items() if k != "files"}
    brief["file_count"] = len(summary["files"])
    print(json.dumps(brief, indent=2))
    print(f"wrote {summary['bytes'] / MB:.1f} MB in {elapsed:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
