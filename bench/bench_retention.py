"""Benchmark: retention planning over a config dir with 20,000 sessions.

Writes --sessions small transcripts in Claude Code's format (a few records each, real
envelopes and timestamps) spread over --projects project folders and 120 days, with mtimes
backdated to their last record; a tenth get a side folder and file-history, a third a custom
title, a twentieth a tag. Then times, best of --repeat:

- discovery: `discover(config)` with metadata (every transcript opened and read);
- plan: `plan_retention` on what discovery found (pure, the subject of the issue's "plans in
  seconds"), with pins by id, name, tag and project glob;
- forecast: what `scrub sessions` computes;
- the whole command, once each, as a real process: `scrub retention --format json` (a dry run:
  discovery, Claude Code's settings, the plan, title redaction, rendering) and `scrub sessions
  --format json`.

    python bench/bench_retention.py                      # 20,000 sessions
    python bench/bench_retention.py --sessions 2000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scrubber.policy.model import Pins
from scrubber.retention.forecast import forecast
from scrubber.retention.plan import Periods, RetentionRules, plan_retention
from scrubber.transcript.sessions import discover

SEED = 20261101
NOW = datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def generate(config: Path, sessions: int, projects: int) -> None:
    rng = random.Random(SEED)
    folders = []
    for index in range(projects):
        cwd = f"/home/dev/project-{index:03d}"
        folder = config / "projects" / "".join(c if c.isalnum() else "-" for c in cwd)
        folder.mkdir(parents=True, exist_ok=True)
        folders.append((cwd, folder))
    for index in range(sessions):
        cwd, folder = folders[index % projects]
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        last = NOW - timedelta(seconds=rng.uniform(0, 120 * 86400))
        envelope = (
            f'"isSidechain":false,"userType":"external","cwd":"{cwd}",'
            f'"sessionId":"{session_id}","version":"2.1.332","gitBranch":"main"'
        )
        first, second = str(uuid.uuid4()), str(uuid.uuid4())
        lines = [
            f'{{"parentUuid":null,{envelope},"type":"user","message":{{"role":"user",'
            f'"content":"fix the tests"}},"uuid":"{first}","timestamp":"{_iso(last - timedelta(minutes=3))}"}}',
            f'{{"parentUuid":"{first}",{envelope},"type":"assistant","message":{{"role":'
            f'"assistant","content":[{{"type":"text","text":"done"}}]}},"uuid":"{second}",'
            f'"timestamp":"{_iso(last)}"}}',
        ]
        if index % 3 == 0:
            lines.append(
                f'{{"type":"custom-title","customTitle":"task {index}","sessionId":"{session_id}"}}'
            )
        if index % 20 == 0:
            lines.append(f'{{"type":"tag","tag":"keep","sessionId":"{session_id}"}}')
        transcript = folder / f"{session_id}.jsonl"
        transcript.write_text("\n".join(lines) + "\n")
        stamp = last.timestamp()
        if index % 10 == 0:
            side = folder / session_id / "tool-results"
            side.mkdir(parents=True)
            (side / "toolu_1.txt").write_text("output\n")
            history = config / "file-history" / session_id
            history.mkdir(parents=True)
            (history / "abc@v1").write_text("before\n")
        os.utime(transcript, (stamp, stamp))


def best(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    fastest, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest, result


def command(config: Path, home: Path, *args: str) -> float:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(config.parent),
        "CLAUDE_CONFIG_DIR": str(config),
        "SCRUB_HOME": str(home),
        "SCRUB_CLAUDE_MANAGED_SETTINGS": str(config.parent / "no-managed-settings.json"),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from scrubber.cli.app import main; main()", *args],
        env=env,
        capture_output=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"scrub {' '.join(args)} failed: {done.stderr.decode()[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="scrub-bench-retention-") as tmp:
        config = Path(tmp) / "claude"
        started = time.perf_counter()
        generate(config, options.sessions, options.projects)
        generated = time.perf_counter() - started

        discovery_s, found = best(options.repeat, lambda: discover(config))
        sessions = found.sessions  # type: ignore[attr-defined]
        pins = Pins(
            sessions=tuple(s.id for s in sessions[:50]),
            names=("task 3", "task 300"),
            tags=("keep",),
            projects=("-home-dev-project-00*",),
        )
        rules = RetentionRules(periods=Periods(30), pins=pins, max_deletions=50)
        plan_s, plan = best(options.repeat, lambda: plan_retention(sessions, rules, NOW))
        forecast_s, _ = best(options.repeat, lambda: forecast(sessions, rules, NOW, Periods(30)))
        home = Path(tmp) / "scrub-home"
        retention_s = command(config, home, "retention", "--format", "json")
        sessions_s = command(config, home, "sessions", "--format", "json")

        result = {
            "sessions": len(sessions),
            "projects": options.projects,
            "generate_s": round(generated, 2),
            "discover_s": round(discovery_s, 3),
            "plan_s": round(plan_s, 3),
            "forecast_s": round(forecast_s, 3),
            "to_remove": len(plan.removals),  # type: ignore[attr-defined]
            "due_but_capped": len(plan.warnings),  # type: ignore[attr-defined]
            "scrub_retention_dry_run_s": round(retention_s, 2),
            "scrub_sessions_s": round(sessions_s, 2),
        }
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
