"""The config-directory scenario of bench/bench_scan.py (`--fleet`): `scrub audit` of a whole
config dir (bench/fleet_gen.py: 300 sessions, about 300 MB, log-normal sizes, subagents,
tool-results, history; 60 findings per MB by default) cold, warm, and warm after 20 KB were
appended to ten sessions, interleaved in each round with secretlint and Kingfisher over the
same files and the orjson parse ceiling (every line of every file).

Per round: ceiling, secretlint, Kingfisher, `scrub audit --no-cache` (cold: every file scanned,
the scan cache written afresh), `scrub audit` (warm: nothing changed), then the append and
`scrub audit` again (warm after appends); the appended bytes are cut off again after the round
(so every round times the same files). In the first round the warm-after-append report is
compared with a full scan of the same files (`--no-cache`, untimed): same findings, same order.
Medians over the rounds; ratios from the same run. Peak RSS is the child's (GNU time)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from fleet_gen import append_to_sessions, write_fleet

MB = 1_000_000

FLEET_CEILING = """
import sys, os, orjson
loads = orjson.loads
for root, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d != "scrubber"]
    for name in files:
        with open(os.path.join(root, name), "rb") as handle:
            for line in handle:
                try:
                    loads(line)
                except orjson.JSONDecodeError:
                    pass
"""


def ensure_fleet(folder: Path, sessions: int, total_mb: float, density: float) -> dict[str, object]:
    """The fleet in `folder`, written unless a summary of the same arguments is there."""
    meta = folder.with_name(folder.name + ".meta.json")
    wanted = {"sessions": sessions, "total_mb": total_mb, "findings_per_mb": density}
    if meta.exists() and folder.exists():
        summary = json.loads(meta.read_text())
        if {k: summary.get(k) for k in wanted} == wanted:
            return dict(summary)
    shutil.rmtree(folder, ignore_errors=True)
    summary = write_fleet(folder, sessions=sessions, total_mb=total_mb, findings_per_mb=density)
    for path in folder.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)  # as Claude Code's umask 077 leaves them
    folder.chmod(0o700)
    brief = {k: v for k, v in summary.items() if k != "files"}
    meta.write_text(json.dumps(brief, indent=2) + "\n")
    return brief


def fleet_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and "scrubber" not in p.relative_to(folder).parts
    )


def _findings(report: Path) -> tuple[int, list[object]]:
    data = json.loads(report.read_bytes())
    return int(data["totals"]["occurrences"]), data["findings"]


def run_fleet(
    folder: Path,
    rounds: int,
    env: dict[str, str],
    scrub: list[str],
    secretlint: Path | None,
    kingfisher: str | None,
    measure: Callable[[list[str], dict[str, str], Path | None, Path], tuple[float, float, int]],
    scratch: Path,
) -> dict[str, object]:
    """Time every contender `rounds` times, interleaved; returns medians and ratios."""
    files = fleet_files(folder)
    size = sum(p.stat().st_size for p in files)
    fleet_env = {**env, "CLAUDE_CONFIG_DIR": str(folder), "SCRUB_HOME": str(scratch / "scrub-home")}
    contenders: list[tuple[str, list[str], Path | None]] = [
        (
            "ceiling: orjson.loads per line",
            [sys.executable, "-c", FLEET_CEILING, str(folder)],
            None,
        ),
    ]
    if secretlint is not None:
        rc = secretlint.parents[2] / ".secretlintrc.json"
        argv = [str(secretlint), "--secretlintrc", str(rc), "--no-glob", "--no-gitignore",
                "--no-color", *map(str, files)]  # fmt: skip
        contenders.append(("secretlint (preset-recommend)", argv, secretlint.parents[2]))
    if kingfisher is not None:
        argv = [kingfisher, "scan", "--no-validate", "--no-update-check", "--format", "json",
                str(folder)]  # fmt: skip
        contenders.append(("kingfisher scan --no-validate", argv, None))
    samples: dict[str, list[tuple[float, float, int]]] = {}
    checked: dict[str, object] = {}
    for round_no in range(rounds):
        for name, argv, cwd in contenders:
            samples.setdefault(name, []).append(measure(argv, fleet_env, cwd, scratch / "out"))
            _say(round_no, rounds, name, samples[name][-1], size)
        for name, extra in (("scrub audit, cold (--no-cache)", ["--no-cache"]),
                            ("scrub audit, warm", [])):  # fmt: skip
            argv = [*scrub, "audit", "--format", "json", *extra]
            samples.setdefault(name, []).append(measure(argv, fleet_env, None, scratch / "out"))
            _say(round_no, rounds, name, samples[name][-1], size)
        before = {p: p.stat().st_size for p in files}
        appended = append_to_sessions(folder, sessions=10, kb=20, seed=7 + round_no)
        name = "scrub audit, warm after appends"
        argv = [*scrub, "audit", "--format", "json"]
        samples.setdefault(name, []).append(measure(argv, fleet_env, None, scratch / "out"))
        _say(round_no, rounds, name, samples[name][-1], size)
        if round_no == 0:
            warm_report = scratch / "warm-after-appends.json"
            shutil.copy(scratch / "out", warm_report)
            measure([*scrub, "audit", "--format", "json", "--no-cache"], fleet_env, None,
                    scratch / "out")  # fmt: skip
            warm_total, warm_findings = _findings(warm_report)
            full_total, full_findings = _findings(scratch / "out")
            checked = {"appended_sessions": len(appended), "warm_after_appends_findings": warm_total,
                       "full_scan_findings": full_total,
                       "same_findings_same_order": warm_findings == full_findings}  # fmt: skip
            print(f"  check: {checked}", file=sys.stderr, flush=True)
        for path, length in before.items():
            if path.stat().st_size != length:
                os.truncate(path, length)
    return _summary(samples, size, len(files), checked)


def _say(
    round_no: int, rounds: int, name: str, sample: tuple[float, float, int], size: int
) -> None:
    wall, cpu, rss = sample
    print(
        f"  fleet round {round_no + 1}/{rounds}  {name:<36} {wall:7.2f} s wall "
        f"{size / MB / wall:7.1f} MB/s  cpu {cpu:6.2f} s  rss {rss / 1024:7.1f} MiB",
        file=sys.stderr,
        flush=True,
    )


def _summary(
    samples: dict[str, list[tuple[float, float, int]]],
    size: int,
    files: int,
    checked: dict[str, object],
) -> dict[str, object]:
    rows = {}
    for name, runs in samples.items():
        wall = statistics.median(r[0] for r in runs)
        rows[name] = {
            "median_wall_s": round(wall, 3),
            "median_cpu_s": round(statistics.median(r[1] for r in runs), 3),
            "mbps_wall": round(size / MB / wall, 1),
            "peak_rss_mib": round(max(r[2] for r in runs) / 1024, 1),
            "walls": [round(r[0], 3) for r in runs],
        }
    cold = rows.get("scrub audit, cold (--no-cache)")
    for peer in ("secretlint (preset-recommend)", "kingfisher scan --no-validate",
                 "ceiling: orjson.loads per line"):  # fmt: skip
        if cold and peer in rows:
            ratio = float(rows[peer]["median_wall_s"]) / float(cold["median_wall_s"])
            cold[f"x {peer.split(' ')[0].rstrip(':')}"] = round(ratio, 2)
    return {"bytes": size, "files": files, "rows": rows, "check": checked}


def fleet_markdown(result: dict[str, object]) -> str:
    rows = result["rows"]
    assert isinstance(rows, dict)
    lines = [
        f"config dir: {result['files']} files, {int(result['bytes']) / MB:.1f} MB",  # type: ignore[call-overload]
        "",
        "| contender | median wall | MB/s | median CPU | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['median_wall_s']} s | {row['mbps_wall']} | {row['median_cpu_s']} s "
            f"| {row['peak_rss_mib']} MiB |"
        )
    cold = rows.get("scrub audit, cold (--no-cache)", {})
    ratios = {k: v for k, v in cold.items() if k.startswith("x ")}
    lines += ["", f"cold audit speed as a multiple of each (wall, same run): {ratios}"]
    lines.append(f"check: {result['check']}")
    return "\n".join(lines)
