"""`scrub search` against `grep -r` on a generated config directory: time for a literal (a
ratio, same run, interleaved rounds) and recall of phrases holding quotes and line breaks.

    python bench/bench_search.py                      # the 300-session scenario (fleet_gen.py)
    python bench/bench_search.py --fleet-gen PATH     # another checkout's fleet_gen.py
    python bench/bench_search.py --demo --large 0     # quick: 300 small demo sessions only

The config directory: the 300-session, 300 MB scenario of `bench/fleet_gen.py` (`write_fleet`,
its default seed) when that file is there (or named with --fleet-gen); else, or with --demo,
`scrubber.demo.build_demo_config(sessions=300)` plus `--large` transcripts of `--large-mb` MB
each from `write_large_transcript` (seeded), so that the bytes searched are a heavy user's. Planted: `--phrases` prompts holding a quote
(`he said "ship it"`) and as many holding a line break, each in its own session, and a rare
marker word in 3 sessions. Both tools are run as real processes, best wall time of `--rounds`:

- a rare literal (the marker): `scrub search MARKER --format json --limit 0` vs
  `grep -rF MARKER projects/`;
- a common literal (`password`, in most sessions): the same two commands;
- recall: per planted phrase, whether `scrub search PHRASE` names its session, and whether grep
  lists its file (`grep -rlF PHRASE` for the quoted ones; `grep -rlzP` with the phrase's line
  break as `\\n`, the most a grep user can do, for the others).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scrubber.demo import build_demo_config, write_large_transcript

ROOT = Path(__file__).resolve().parents[1]
MARKER = "zephyr-ledger-" + "7741"
WORDS = ("deploy", "cache", "ledger", "invoice", "shard", "ticket", "cursor", "bundle", "quota")


def _phrases(count: int, rng: random.Random) -> tuple[list[str], list[str]]:
    quoted = [f'he said "ship {rng.choice(WORDS)} {i}" twice' for i in range(count)]
    broken = [f"first {rng.choice(WORDS)} line {i}\nsecond line {i}" for i in range(count)]
    return quoted, broken


def _prompt_line(session_id: str, text: str, stamp: str) -> bytes:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"00000000-0000-4000-8000-{abs(hash((session_id, text))) % 10**12:012d}",
        "timestamp": stamp,
        "sessionId": session_id,
        "cwd": "/home/demo/work/bench",
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _fleet_writer(path: Path) -> Any:
    """`write_fleet` from a fleet_gen.py file, or None when there is none."""
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("fleet_gen", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fleet_gen"] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module.write_fleet


def build(root: Path, args: argparse.Namespace) -> tuple[Path, dict[str, str], str]:
    """The config dir, the session id holding each planted phrase, and what made the dir."""
    write_fleet = None if args.demo else _fleet_writer(args.fleet_gen)
    if write_fleet is not None:
        config = root / ".claude"
        write_fleet(config)
        made = f"write_fleet() of {args.fleet_gen.name} (300 sessions, 300 MB, its seed)"
    else:
        config = build_demo_config(root, sessions=300, seed=18)
        folder = config / "projects" / "-home-demo-work-bench"
        folder.mkdir(exist_ok=True)
        for i in range(args.large):
            target = folder / f"1a26e000-0000-4000-8000-{i:012d}.jsonl"
            write_large_transcript(target, args.large_mb * 10**6, seed=i)
        made = f"demo: 300 sessions + {args.large} x {args.large_mb} MB transcripts"
    transcripts = sorted((config / "projects").glob("*/*.jsonl"))
    rng = random.Random(18)
    quoted, broken = _phrases(args.phrases, rng)
    where: dict[str, str] = {}
    chosen = rng.sample(transcripts, len(quoted) + len(broken) + 3)
    for phrase, path in zip([*quoted, *broken], chosen, strict=False):
        with path.open("ab") as out:
            out.write(_prompt_line(path.stem, phrase, "2026-03-20T10:00:00.000Z"))
        where[phrase] = path.stem
    for path in chosen[-3:]:
        with path.open("ab") as out:
            out.write(
                _prompt_line(path.stem, f"look at {MARKER} first", "2026-03-21T10:00:00.000Z")
            )
    return config, where, made


def _env(config: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "SCRUB_"))}
    env.update(CLAUDE_CONFIG_DIR=str(config), SCRUB_HOME=str(home), HOME=str(home.parent))
    return env


def _timed(
    command: list[str], env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    return time.perf_counter() - start, done


def _scrub(*args: str) -> list[str]:
    return [sys.executable, "-m", "scrubber.cli", "search", *args]


def compare(config: Path, env: dict[str, str], literal: str, rounds: int) -> dict[str, float]:
    """Best wall times of `scrub search` (default processes, then one), and `grep -rF`."""
    best = {"scrub": float("inf"), "scrub_one": float("inf"), "grep": float("inf")}
    hits = 0
    for _ in range(rounds):
        for name, extra in (("scrub", {}), ("scrub_one", {"SCRUB_JOBS": "1"})):
            took, done = _timed(
                _scrub(literal, "--format", "json", "--limit", "0"), {**env, **extra}
            )
            assert done.returncode == 0, done.stderr.decode(errors="replace")
            best[name] = min(best[name], took)
            hits = json.loads(done.stdout)["total_hits"]
        took, done = _timed(["grep", "-rF", "--", literal, str(config / "projects")], env)
        best["grep"] = min(best["grep"], took)
    return {**best, "ratio": best["scrub"] / best["grep"], "scrub_hits": hits}


def recall(config: Path, env: dict[str, str], where: dict[str, str]) -> dict[str, str]:
    found = {"quotes": [0, 0, 0], "newlines": [0, 0, 0]}  # planted, scrub, grep
    for phrase, session in where.items():
        group = found["newlines" if "\n" in phrase else "quotes"]
        group[0] += 1
        done = subprocess.run(
            _scrub(phrase, "--format", "json", "--limit", "0"),
            env=env,
            capture_output=True,
            check=False,
        )
        sessions = {hit["session_id"] for hit in json.loads(done.stdout)["hits"]}
        group[1] += session in sessions
        if "\n" in phrase:
            pattern = phrase.replace("\n", "\\n")
            grep = ["grep", "-rlzP", "--", pattern, str(config / "projects")]
        else:
            grep = ["grep", "-rlF", "--", phrase, str(config / "projects")]
        listed = subprocess.run(grep, capture_output=True, text=True, check=False).stdout
        group[2] += f"{session}.jsonl" in listed
    return {k: f"scrub {v[1]}/{v[0]}, grep {v[2]}/{v[0]}" for k, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fleet-gen", type=Path, default=ROOT / "bench" / "fleet_gen.py")
    parser.add_argument("--demo", action="store_true", help="the demo generator, not fleet_gen")
    parser.add_argument("--large", type=int, default=30, help="demo: large transcripts to add")
    parser.add_argument("--large-mb", type=int, default=10)
    parser.add_argument("--phrases", type=int, default=10, help="phrases of each kind")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scrub-bench-search-"))
    try:
        config, where, made = build(work, args)
        size = sum(p.stat().st_size for p in (config / "projects").rglob("*") if p.is_file())
        sessions = len(list((config / "projects").glob("*/*.jsonl")))
        env = _env(config, work / "home")
        subprocess.run(
            _scrub("warm-up-the-prefilter-cache"), env=env, capture_output=True, check=False
        )
        print(f"config dir ({made}): {sessions} transcripts, {size / 1e6:.1f} MB under projects/")
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        for name, literal in (("rare literal", MARKER), ("common literal", "password")):
            result = compare(config, env, literal, args.rounds)
            print(
                f"{name}: scrub search {result['scrub']:.2f} s ({result['scrub_hits']} hits; "
                f"SCRUB_JOBS=1 {result['scrub_one']:.2f} s), grep -rF {result['grep']:.2f} s, "
                f"ratio {result['ratio']:.1f}x"
            )
        for kind, line in recall(config, env, where).items():
            print(f"recall, phrases with {kind}: {line}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
