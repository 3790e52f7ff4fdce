"""Benchmark: `scrub audit` and `scrub redact` against the peer scanners, side by side, one run.

On the same realistic transcript (bench/make_transcript.py: 100 MB, fixed seed), each command
runs as a real process, round robin (so the machine's load weighs on every tool alike), --repeat
times; the best wall time and the best CPU time (user + sys of the child) are kept, and peak
memory is the child's ru_maxrss (os.wait4). Measured:

- ceiling: one Python process reading the file line by line and calling orjson.loads on each
  line (and, for reference, the bare line-by-line read);
- `scrub audit FILE --format json` (the default engine: the hyperscan prefilter when installed);
- the same with SCRUB_PREFILTER=python (the pure-Python prefilter: what hyperscan buys);
- `scrub redact FILE --output OUT`;
- `secretlint` with @secretlint/secretlint-rule-preset-recommend (npm, installed into
  bench/peers/node_modules at run time; skipped with a message when npm cannot install it);
- `detect-secrets scan FILE`, on the first --ds-slice-mb (default 10) MB of whole lines only: it
  runs at well under 1 MB/s, so its MB/s on the slice stands for the whole file (extrapolated,
  and marked so in the table).

Ratios are against the fastest peer and the ceiling of this run. Then, with --big-mb (default
1000; 0 skips), peak RSS of `scrub audit` on a transcript of that size generated in --big-dir
(default /tmp/scrub-bench; skipped when less than 5 GB is free there), against its peak on the
100 MB file: bounded memory means about the same peak. --profile writes a cProfile of
`scrub audit` on the benchmark file and prints the top 25 functions by own time.

    python bench/bench_scan.py                         # everything, best of 3
    python bench/bench_scan.py --repeat 2 --big-mb 0   # no 1 GB run
    python bench/bench_scan.py --only audit,ceiling --repeat 1
    python bench/bench_scan.py --profile-only          # just the profile

Results: a markdown table on stdout, everything as JSON in bench/out/bench_scan.json.
MB is 10^6 bytes, MiB 2^20.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.metadata
import io
import json
import os
import platform
import pstats
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fleet_scenario import ensure_fleet, fleet_markdown, run_fleet
from make_transcript import MB, SEED, default_path, make_transcript

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PEERS = BENCH / "peers"
OUT = BENCH / "out"
MIB = 1 << 20
MIN_FREE_FOR_BIG = 5 * 1024**3

CEILING_SOURCE = """
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        try:
            loads(line)
        except orjson.JSONDecodeError:
            pass
"""
READ_SOURCE = """
import sys
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        pass
"""


@dataclass(slots=True)
class Sample:
    wall: float
    cpu: float
    rss_kib: int
    exit_code: int


@dataclass(slots=True)
class Tool:
    """One command to time. `argv(input, scratch)` builds the command line for an input file;
    `scratch` is an empty temp dir the command may write into (emptied after each run)."""

    name: str
    kind: str  # "ceiling", "ours", "peer"
    argv: Callable[[Path, Path], list[str]]
    env: dict[str, str]
    cwd: Path | None = None
    ok_codes: tuple[int, ...] = (0, 1)
    slice_only: bool = False  # measured on the slice, extrapolated to the file
    samples: list[Sample] = field(default_factory=list)
    findings: int | None = None
    count: Callable[[Path], int] | None = None  # findings from the stdout file


GNU_TIME = Path("/usr/bin/time")


def measure(tool: Tool, source: Path, scratch: Path) -> Sample:
    """Run once: wall time around the child; CPU time (user + sys) and peak RSS of the child.

    Through GNU time when it is there: a child forked from this (larger) process would start
    with our RSS high-water mark and report it as its own peak; time is a few MB. Without it,
    os.wait4 on a direct child, whose peak is then at least this process's peak."""
    stdout_path = scratch / "stdout"
    stderr_path = scratch / "stderr"
    time_path = scratch / "time"
    argv = tool.argv(source, scratch)
    via_time = GNU_TIME.exists()
    if via_time:
        argv = [str(GNU_TIME), "-f", "%e %U %S %M", "-o", str(time_path), *argv]
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=tool.env, cwd=tool.cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if proc.returncode not in tool.ok_codes:
        # stderr of these tools never holds a secret's value (scrub never prints one; the
        # peers mask or hash what they find), but keep it short anyway.
        tail = stderr_path.read_bytes()[-800:].decode(errors="replace")
        raise SystemExit(f"{tool.name}: exit {proc.returncode}\n{tail}")
    if via_time:
        # The last line; time puts "Command exited with non-zero status" lines before it.
        fields = time_path.read_text().strip().splitlines()[-1].split()
        cpu, rss_kib = float(fields[1]) + float(fields[2]), int(fields[3])
    else:
        cpu, rss_kib = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    if tool.count is not None:
        tool.findings = tool.count(stdout_path)
    return Sample(wall, cpu, rss_kib, proc.returncode)


def clear(scratch: Path) -> None:
    for child in scratch.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def warm(path: Path) -> None:
    """Read the file once so every tool starts with it in the page cache."""
    with path.open("rb") as handle:
        while handle.read(8 * MIB):
            pass


def make_slice(source: Path, target: Path, size: int) -> Path:
    """The first `size` bytes of whole lines of `source`."""
    with source.open("rb") as src, target.open("wb") as dst:
        written = 0
        for line in src:
            if written + len(line) > size:
                break
            dst.write(line)
            written += len(line)
    target.chmod(0o600)
    return target


# --- the tools ------------------------------------------------------------------------------


def scrub_argv() -> list[str]:
    """The installed console script beside this interpreter (not a pyenv shim, whose start-up
    would be timed too); `python -m scrubber.cli` when there is none."""
    script = Path(sys.executable).parent / "scrub"
    return [str(script)] if script.exists() else [sys.executable, "-m", "scrubber.cli"]


def detect_secrets_argv() -> list[str]:
    script = Path(sys.executable).parent / "detect-secrets"
    return [str(script)] if script.exists() else [sys.executable, "-m", "detect_secrets.main"]


def ensure_secretlint() -> tuple[Path | None, str]:
    """bench/peers/node_modules/.bin/secretlint, installed with npm when missing."""
    binary = PEERS / "node_modules" / ".bin" / "secretlint"
    if binary.exists():
        return binary, "already installed"
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm not found: secretlint skipped"
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
        cwd=PEERS,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not binary.exists():
        return None, f"npm install failed (exit {done.returncode}): {done.stderr.strip()[-400:]}"
    return binary, "installed with npm"


def tool_version(
    argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, cwd=cwd, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else "?"


def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def count_scrub(stdout: Path) -> int:
    return int(json.loads(stdout.read_bytes())["totals"]["occurrences"])


def count_detect_secrets(stdout: Path) -> int:
    return sum(len(items) for items in json.loads(stdout.read_bytes())["results"].values())


def kingfisher_binary() -> str | None:
    """MongoDB's Kingfisher (`pip install kingfisher-bin`), beside this interpreter or on PATH."""
    beside = Path(sys.executable).parent / "kingfisher"
    return str(beside) if beside.exists() else shutil.which("kingfisher")


def count_kingfisher(stdout: Path) -> int:
    """Findings in Kingfisher's JSON report (its first JSON value: a summary may follow)."""
    text = stdout.read_text(errors="replace").strip()
    if not text:
        return 0
    report, _ = json.JSONDecoder().raw_decode(text)
    return len(report.get("findings", []))


_SECRETLINT_MESSAGE = re.compile(rb"^\s+\d+:\d+\s+(?:error|warning|info)\s", re.MULTILINE)


def count_secretlint(stdout: Path) -> int:
    """Messages in secretlint's default (stylish) report. Its JSON formatter is not used: it
    embeds the whole scanned file (`sourceContent`), which would time a 100 MB dump."""
    return len(_SECRETLINT_MESSAGE.findall(stdout.read_bytes()))


def build_tools(env: dict[str, str], only: set[str] | None) -> tuple[list[Tool], list[str]]:
    notes: list[str] = []
    scrub = scrub_argv()
    python_prefilter = {**env, "SCRUB_PREFILTER": "python"}
    tools = [
        Tool("read lines (no parse)", "ceiling", lambda f, s: [sys.executable, "-c", READ_SOURCE, str(f)], env),
        Tool("ceiling: read + orjson.loads per line", "ceiling", lambda f, s: [sys.executable, "-c", CEILING_SOURCE, str(f)], env),
        Tool("scrub audit --format json", "ours", lambda f, s: [*scrub, "audit", str(f), "--format", "json"], env, count=count_scrub),
        Tool("scrub audit, SCRUB_PREFILTER=python", "ours", lambda f, s: [*scrub, "audit", str(f), "--format", "json"], python_prefilter, count=count_scrub),
        Tool("scrub redact --output", "ours", lambda f, s: [*scrub, "redact", str(f), "--output", str(s / "redacted.jsonl")], env),
    ]  # fmt: skip
    if only is None or "secretlint" in only:
        binary, how = ensure_secretlint()
        notes.append(f"secretlint: {how}")
        if binary is not None:
            rc = PEERS / ".secretlintrc.json"
            tools.append(
                Tool(
                    "secretlint (preset-recommend)",
                    "peer",
                    lambda f, s: [str(binary), "--secretlintrc", str(rc), "--no-glob", "--no-gitignore", "--no-color", str(f)],
                    env,
                    cwd=PEERS,
                    count=count_secretlint,
                ),
            )  # fmt: skip
    kingfisher = kingfisher_binary() if only is None or "kingfisher" in only else None
    if kingfisher is not None:
        # Exit 200: findings (Kingfisher's own code). Its JSON holds the matched text: the
        # file stays in the scratch folder, which is emptied after each run.
        tools.append(
            Tool(
                "kingfisher scan --no-validate",
                "peer",
                lambda f, s: [kingfisher, "scan", "--no-validate", "--no-update-check", "--format", "json", str(f)],
                env,
                ok_codes=(0, 200, 205),
                count=count_kingfisher,
            )
        )  # fmt: skip
    elif only is None or "kingfisher" in only:
        notes.append("kingfisher: not installed (pip install kingfisher-bin): skipped")
    tools.append(
        Tool(
            "detect-secrets scan",
            "peer",
            lambda f, s: [*detect_secrets_argv(), "scan", str(f)],
            env,
            slice_only=True,
            ok_codes=(0,),
            count=count_detect_secrets,
        )
    )
    if only is not None:
        keys = {
            "ceiling": ("ceiling", "read lines"),
            "audit": ("scrub audit --format",),
            "python": ("SCRUB_PREFILTER",),
            "redact": ("scrub redact",),
            "secretlint": ("secretlint",),
            "kingfisher": ("kingfisher",),
            "detect-secrets": ("detect-secrets",),
        }
        wanted = tuple(prefix for key in only for prefix in keys.get(key, (key,)))
        tools = [t for t in tools if any(t.name.startswith(w) for w in wanted)]
    return tools, notes


# --- runs -----------------------------------------------------------------------------------


def isolated_env(home: Path) -> dict[str, str]:
    """Scrubber's state and Claude Code's config in temp dirs: never the user's real ones."""
    for name in ("home", "claude", "scrub"):
        (home / name).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        HOME=str(home / "home"),
        CLAUDE_CONFIG_DIR=str(home / "claude"),
        SCRUB_HOME=str(home / "scrub"),
        NO_COLOR="1",
    )
    env.pop("SCRUB_PREFILTER", None)
    env.pop("SCRUB_POLICY", None)
    return env


def run_side_by_side(
    tools: list[Tool], source: Path, slice_path: Path, repeat: int, scratch: Path
) -> None:
    for round_no in range(repeat):
        for tool in tools:
            target = slice_path if tool.slice_only else source
            sample = measure(tool, target, scratch)
            clear(scratch)
            tool.samples.append(sample)
            mb = target.stat().st_size / MB
            print(
                f"  round {round_no + 1}/{repeat}  {tool.name:<40} {sample.wall:8.2f} s wall "
                f"{mb / sample.wall:8.2f} MB/s  cpu {sample.cpu:7.2f} s  "
                f"rss {sample.rss_kib / 1024:7.1f} MiB",
                file=sys.stderr,
                flush=True,
            )


def summarise(tools: list[Tool], source: Path, slice_path: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for tool in tools:
        size = (slice_path if tool.slice_only else source).stat().st_size
        best_wall = min(s.wall for s in tool.samples)
        best_cpu = min(s.cpu for s in tool.samples)
        rows.append(
            {
                "name": tool.name,
                "kind": tool.kind,
                "input_mb": round(size / MB, 2),
                "extrapolated": tool.slice_only,
                "runs": len(tool.samples),
                "best_wall_s": round(best_wall, 3),
                "best_cpu_s": round(best_cpu, 3),
                "mbps_wall": round(size / MB / best_wall, 2),
                "mbps_cpu": round(size / MB / best_cpu, 2),
                "peak_rss_mib": round(max(s.rss_kib for s in tool.samples) / 1024, 1),
                "findings": tool.findings,
                "samples": [asdict(s) for s in tool.samples],
            }
        )
    peers = [r for r in rows if r["kind"] == "peer"]
    ceiling = next((r for r in rows if str(r["name"]).startswith("ceiling")), None)
    for basis in ("wall", "cpu"):
        key = f"mbps_{basis}"
        fastest = max((float(r[key]) for r in peers), default=None)  # type: ignore[arg-type]
        for r in rows:
            value = float(r[key])  # type: ignore[arg-type]
            r[f"vs_fastest_peer_{basis}"] = round(value / fastest, 2) if fastest else None
            r[f"vs_ceiling_{basis}"] = (
                round(value / float(ceiling[key]), 3) if ceiling else None  # type: ignore[arg-type]
            )
    return rows


def markdown(rows: list[dict[str, object]]) -> str:
    head = (
        "| tool | input | MB/s (wall) | MB/s (CPU) | x fastest peer (wall / CPU) "
        "| x ceiling (wall / CPU) | peak RSS | findings |\n"
        "|------|------:|------------:|-----------:|---------:|---------:|---------:|---------:|"
    )
    lines = [head]
    for r in rows:
        star = "*" if r["extrapolated"] else ""

        def ratio(a: object, b: object) -> str:
            return "-" if a is None or b is None else f"{a} / {b}"

        lines.append(
            f"| {r['name']} | {r['input_mb']} MB{star} | {r['mbps_wall']} | {r['mbps_cpu']} "
            f"| {ratio(r['vs_fastest_peer_wall'], r['vs_fastest_peer_cpu'])} "
            f"| {ratio(r['vs_ceiling_wall'], r['vs_ceiling_cpu'])} "
            f"| {r['peak_rss_mib']} MiB | {'-' if r['findings'] is None else r['findings']} |"
        )
    return "\n".join(lines)


def big_run(
    size_mb: int, big_dir: Path, env: dict[str, str], keep: bool, redact: bool
) -> dict[str, object]:
    """Peak RSS of `scrub audit` (and optionally `scrub redact`) on a big transcript."""
    big_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(big_dir).free
    needed = MIN_FREE_FOR_BIG + (size_mb * MB if redact else 0)
    if free < needed:
        message = (
            f"skipped: {free / 1024**3:.1f} GiB free in {big_dir}, want {needed / 1024**3:.1f}"
        )
        print(f"big run {message}", file=sys.stderr)
        return {"skipped": message}
    path = make_transcript(big_dir / f"transcript-{size_mb}mb.jsonl", size_mb)
    path.chmod(0o600)
    result: dict[str, object] = {"input_mb": round(path.stat().st_size / MB, 1), "path": str(path)}
    scrub = scrub_argv()
    jobs = [("audit", Tool("scrub audit (big)", "ours", lambda f, s: [*scrub, "audit", str(f), "--format", "json"], env, count=count_scrub))]  # fmt: skip
    if redact:
        jobs.append(("redact", Tool("scrub redact (big)", "ours", lambda f, s: [*scrub, "redact", str(f), "--output", str(s / "redacted.jsonl")], env)))  # fmt: skip
    try:
        warm(path)
        for name, tool in jobs:
            with tempfile.TemporaryDirectory(dir=big_dir) as scratch:
                sample = measure(tool, path, Path(scratch))
            mb = path.stat().st_size / MB
            result[name] = {
                "wall_s": round(sample.wall, 1),
                "cpu_s": round(sample.cpu, 1),
                "mbps_wall": round(mb / sample.wall, 2),
                "peak_rss_mib": round(sample.rss_kib / 1024, 1),
                "findings": tool.findings,
            }
            print(f"  big {name}: {result[name]}", file=sys.stderr, flush=True)
    finally:
        if not keep:
            path.unlink(missing_ok=True)
            path.with_name(path.name + ".meta.json").unlink(missing_ok=True)
    return result


def profile_audit(source: Path, env: dict[str, str], top: int = 25) -> str:
    """cProfile of `scrub audit SOURCE --format json` in a child with the same environment
    (so the same code: the snapshot when there is one); top functions by own time."""
    OUT.mkdir(parents=True, exist_ok=True)
    prof = OUT / "audit.prof"
    # `main`, not the console script's `run`: its quick exit (cli/quick_exit.py) ends the
    # process before cProfile could write its file.
    script = OUT / "profile_main.py"
    script.write_text(
        "import sys\nfrom scrubber.cli.app import main\n\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    )
    argv = [sys.executable, "-m", "cProfile", "-o", str(prof), str(script)]
    done = subprocess.run(
        [*argv, "audit", str(source), "--format", "json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"profile: exit {done.returncode}: {done.stderr.decode()[-800:]}")
    text = io.StringIO()
    pstats.Stats(str(prof), stream=text).sort_stats("tottime").print_stats(top)
    code = env.get("PYTHONPATH", str(ROOT))
    return text.getvalue().replace(code + "/", "").replace(str(ROOT) + "/", "")


def code_under_test(work: Path, working_tree: bool) -> tuple[dict[str, object], str | None]:
    """Which scrubber is measured. By default a snapshot of HEAD's scrubber/ (git archive) put
    first on PYTHONPATH: the working tree is shared and edited while a run takes half an hour,
    and every round must time the same code. Returns what to record and the PYTHONPATH."""
    git = shutil.which("git")
    info: dict[str, object] = {"mode": "working tree", "path": str(ROOT / "scrubber")}
    if git is None or not (ROOT / ".git").exists():
        return info, None
    head = subprocess.run(
        [git, "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(
        [git, "status", "--porcelain", "--", "scrubber"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    info.update(commit=head, uncommitted_changes_in_scrubber=bool(dirty))
    if working_tree:
        return info, None
    code = work / "code"
    code.mkdir()
    archive = subprocess.run(
        [git, "archive", "--format=tar", head, "scrubber"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(code, filter="data")
    # Byte-compiled, as `pip install` leaves an installed package: otherwise, where
    # PYTHONDONTWRITEBYTECODE is set (it is on the development VMs), every run of `scrub` would
    # compile the whole package from source first (about 0.1 s).
    compileall.compile_dir(str(code), quiet=1)
    info.update(mode=f"snapshot of {head[:10]} (git archive)", path=str(code / "scrubber"))
    return info, str(code)


def fleet_run(args: argparse.Namespace, env: dict[str, str], home: Path) -> dict[str, object]:
    """The config-directory scenario (bench/fleet_scenario.py), its table on stdout."""
    folder = args.fleet_dir / f"fleet-{args.fleet_sessions}-{args.fleet_mb:g}mb-d{args.density:g}"
    summary = ensure_fleet(folder, args.fleet_sessions, args.fleet_mb, args.density)
    secretlint, how = ensure_secretlint()
    print(
        f"secretlint: {how}; kingfisher: {kingfisher_binary() or 'not installed'}", file=sys.stderr
    )
    scratch = home / "fleet-scratch"
    (scratch / "m").mkdir(parents=True)

    def fleet_measure(
        argv: list[str], tool_env: dict[str, str], cwd: Path | None, out: Path
    ) -> tuple[float, float, int]:
        tool = Tool(
            "fleet", "ours", lambda f, s: argv, tool_env, cwd=cwd, ok_codes=(0, 1, 200, 205)
        )
        sample = measure(tool, out, scratch / "m")
        shutil.move(scratch / "m" / "stdout", out)
        clear(scratch / "m")
        return sample.wall, sample.cpu, sample.rss_kib

    for path in folder.rglob("*"):
        if path.is_file():
            warm(path)
    result = run_fleet(folder, args.repeat, env, scrub_argv(), secretlint, kingfisher_binary(),
                       fleet_measure, scratch)  # fmt: skip
    result["fleet"] = summary
    print(fleet_markdown(result))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ds-slice-mb", type=int, default=10, help="detect-secrets input size")
    parser.add_argument(
        "--only", help="comma list: ceiling,audit,python,redact,secretlint,detect-secrets"
    )
    parser.add_argument("--big-mb", type=int, default=1000, help="0 skips the big-file RSS run")
    parser.add_argument("--big-dir", type=Path, default=Path(tempfile.gettempdir()) / "scrub-bench")
    parser.add_argument("--big-redact", action="store_true", help="also redact the big file")
    parser.add_argument("--keep-big", action="store_true", help="keep the big transcript")
    parser.add_argument("--profile", action="store_true", help="also profile scrub audit")
    parser.add_argument("--profile-only", action="store_true")
    parser.add_argument(
        "--findings-per-mb", dest="density", type=float, default=None,
        help="planted secrets per MB of the single file (default: the generator's own, ~2)",
    )  # fmt: skip
    parser.add_argument("--fleet", action="store_true", help="also the config-dir scenario")
    parser.add_argument("--fleet-only", action="store_true", help="only the config-dir scenario")
    parser.add_argument("--fleet-sessions", type=int, default=300)
    parser.add_argument("--fleet-mb", type=float, default=300)
    parser.add_argument(
        "--fleet-dir", type=Path, default=Path(tempfile.gettempdir()) / "scrub-bench"
    )
    parser.add_argument(
        "--working-tree",
        action="store_true",
        help="time the working tree's scrubber/ instead of a snapshot of HEAD",
    )
    args = parser.parse_args(argv)
    density = args.density
    if args.fleet or args.fleet_only:
        args.density = 60.0 if density is None else density  # the fleet's own default
    path = default_path(args.size_mb, density)
    source = make_transcript(path, args.size_mb, findings_per_mb=density)
    source.chmod(0o600)  # as Claude Code writes them; also keeps audit's warning quiet
    report: dict[str, object] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or '?'}",
        "load_average_before": os.getloadavg(),
        "python": platform.python_version(),
        "transcript": {
            "path": str(source),
            "bytes": source.stat().st_size,
            "seed": SEED,
            "findings_per_mb": density,
        },
    }
    with tempfile.TemporaryDirectory(prefix="scrub-bench-") as tmp:
        home = Path(tmp)
        env = isolated_env(home / "env")
        code_info, code_path = code_under_test(home, args.working_tree)
        report["scrubber_code"] = code_info
        if code_path is not None:
            env["PYTHONPATH"] = code_path
        print(f"scrubber under test: {code_info}", file=sys.stderr)
        if args.profile_only:
            print(profile_audit(source, env))
            return 0
        if args.fleet_only:
            report["fleet"] = fleet_run(args, env, home)
            OUT.mkdir(parents=True, exist_ok=True)
            (OUT / "bench_fleet.json").write_text(json.dumps(report, indent=2) + "\n")
            return 0
        only = set(args.only.split(",")) if args.only else None
        tools, notes = build_tools(env, only)
        for note in notes:
            print(note, file=sys.stderr)
        versions = {
            "scrub": tool_version([*scrub_argv(), "--version"], env=env),
            **{name: package_version(name) for name in ("orjson", "hyperscan")},
            "detect-secrets": tool_version([*detect_secrets_argv(), "--version"]),
            "node": tool_version(["node", "--version"]),
        }
        if (PEERS / "node_modules" / ".bin" / "secretlint").exists():
            versions["secretlint"] = tool_version(
                [str(PEERS / "node_modules" / ".bin" / "secretlint"), "--version"], PEERS
            )
        report["versions"] = versions
        slice_path = make_slice(source, home / "slice.jsonl", args.ds_slice_mb * MB)
        for tool in tools:
            if tool.slice_only:
                # detect-secrets skips files outside the git repository it is started in
                # (git ls-files), even with --all-files: start it beside the slice.
                tool.cwd = slice_path.parent
        scratch = home / "scratch"
        scratch.mkdir()
        warm(source)
        run_side_by_side(tools, source, slice_path, args.repeat, scratch)
        rows = summarise(tools, source, slice_path)
        report["results"] = rows
        report["notes"] = notes
        print(markdown(rows))
        if any(r["extrapolated"] for r in rows):
            print(
                f"\n* measured on the first {slice_path.stat().st_size / MB:.1f} MB of whole lines; "
                "its MB/s stands for the whole file (extrapolated)."
            )
        if args.big_mb > 0:
            big = big_run(args.big_mb, args.big_dir, env, args.keep_big, args.big_redact)
            report["big"] = big
            print(f"\nbig transcript: {json.dumps(big)}")
        if args.fleet:
            report["fleet"] = fleet_run(args, env, home)
        if args.profile:
            profile = profile_audit(source, env)
            report["profile_top25"] = profile
            print(profile)
    report["load_average_after"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "bench_scan.json").write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"\nload average before {report['load_average_before']}, after {report['load_average_after']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
