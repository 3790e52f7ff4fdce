"""Benchmark: hook latency and status-line latency, against `python -c pass` in the same run.

Everything runs as Claude Code runs it: a fresh process per call, JSON on stdin, the commands
`scrub install` writes into settings.json (a `python -S` launcher in $SCRUB_HOME/bin), in a temp
CLAUDE_CONFIG_DIR. Reported: p50 and p95 wall time per call, in milliseconds.

1. Start-up floor: `python -c pass` and `python -S -c pass` (the interpreter the launchers use).
2. SessionEnd: the launcher (validate, write the job with fsync, fork the detached worker; the
   worker here is /bin/true so that 40 workers do not load the machine), the plugin's shim
   under `python3` with site-packages, and `scrub hook session-end` (typer) for comparison.
3. Status line on a --size-mb transcript (default 100 MB, scrubber.demo.write_large_transcript):
   the first catch-up (the detached scan, in one process), then per round --append-kb of
   realistic lines appended: the status-line call itself (prints what it knows; starts the
   detached scan when none is lingering), the time from the append until the lingering scan has
   absorbed it, and a call with nothing new (the common case between two messages); then,
   without a lingering scan, a cold scan process per append and `--inline` (the scan inside the
   call), for reference. `python -c pass` and `python -S -c pass` are timed in the same rounds.

    python bench/bench_hooks.py                       # 100 MB, 20 KB appends
    python bench/bench_hooks.py --size-mb 20 --rounds 10
    python bench/bench_hooks.py --only post-tool-use -n 30 --baseline-root /tmp/before
    python bench/bench_hooks.py --only post-tool-use --instructions --baseline-root /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from scrubber.demo import write_large_transcript
from scrubber.install.report import InstallOptions
from scrubber.install.run import install

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "-home-demo-work-monorepo"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(p95 * 1000, 1),
        "n": len(ordered),
    }


def timed(argv: list[str] | str, stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, input=stdin, shell=isinstance(argv, str), env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv!r} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def bench_hooks(world: Path, env: dict[str, str], n: int) -> dict[str, object]:
    config = Path(env["CLAUDE_CONFIG_DIR"])
    transcript = config / "projects" / PROJECT / "hook-bench.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text('{"type":"user"}\n')
    settings = json.loads((config / "settings.json").read_text())
    launcher_command = settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    # The same launcher with /bin/true as the worker: the fork and exec are real.
    launcher = Path(shlex.split(launcher_command)[-1])
    quiet = launcher.with_name("bench-session-end")
    quiet.write_text(
        launcher.read_text().replace(
            f"worker_python={sys.executable!r}", "worker_python='/bin/true'"
        )
    )
    quiet_command = launcher_command.replace(str(launcher), str(quiet))

    def payload(i: int) -> bytes:
        session = str(uuid.uuid4()) if i >= 0 else "warm-up"
        return json.dumps(
            {"session_id": session, "transcript_path": str(transcript), "reason": "other",
             "hook_event_name": "SessionEnd", "cwd": str(world)}
        ).encode()  # fmt: skip

    python = sys.executable
    no_worker = {**env, "SCRUB_NO_WORKER": "1"}
    variants: dict[str, tuple[list[str] | str, bool, dict[str, str]]] = {
        "python -c pass": ([python, "-c", "pass"], False, env),
        "python -S -c pass": ([python, "-S", "-c", "pass"], False, env),
        "session-end: installed launcher (python -S), worker forked": (quiet_command, True, env),
        "session-end: plugin shim (python with site), no worker": (
            [python, str(ROOT / "hooks" / "session-end")], True, no_worker,
        ),
        "session-end: `scrub hook session-end` (typer), no worker": (
            [python, "-m", "scrubber.cli", "hook", "session-end"], True, no_worker,
        ),
    }  # fmt: skip
    samples: dict[str, list[float]] = {name: [] for name in variants}
    # Round robin, so that the machine's load weighs on every variant alike.
    for i in range(-1, n):
        for name, (argv, hook, run_env) in variants.items():
            if "typer" in name and i % 4:
                continue  # slow; a quarter of the rounds is enough
            elapsed = timed(argv, payload(i) if hook else b"", run_env)
            if i >= 0:
                samples[name].append(elapsed)
    return {name: percentiles(values) for name, values in samples.items()}


def tool_output(size: int, rng_seed: int = 5) -> str:
    """About `size` bytes of what a Bash or Read output looks like: code, paths, logs, git SHAs
    and uuids (shapes that must not be masked)."""
    import hashlib
    import random

    rng = random.Random(rng_seed)
    lines: list[str] = []
    total = 0
    i = 0
    while total < size:
        sha = hashlib.sha1(str(i).encode()).hexdigest()  # noqa: S324 - a git-like id, not security
        line = rng.choice(
            (
                f"src/app/module_{i % 97}.py:{i % 400}: def handler_{i}(request): return "
                f"jsonify({{'id': '{uuid.UUID(int=rng.getrandbits(128))}', 'status': 'ok'}})",
                f"{sha} Merge pull request #{i} from team/feature-{i % 13}",
                f"2026-12-01T10:{i % 60:02d}:00Z INFO worker[{i % 8}] processed job {i} in {i % 977} ms",
                f"    assert response.status_code == 200, response.text  # line {i}",
            )
        )
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines)


def install_baseline(root: Path, env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """`scrub install --live` from another copy of the package (`--baseline-root`, e.g. an
    earlier commit: `git archive COMMIT scrubber | tar -x -C DIR`) into a config dir and
    SCRUB_HOME of its own; the PostToolUse command it registered. Run without `site` and with
    only this environment's site-packages after it, so that the editable install of this
    checkout cannot shadow it. Returns the command and the environment to run it in."""
    import site

    world = Path(env["HOME"]) / "baseline"
    config = world / ".claude"
    (config / "projects" / PROJECT).mkdir(parents=True)
    base_env = {**env, "CLAUDE_CONFIG_DIR": str(config), "SCRUB_HOME": str(config / "scrubber")}
    script = (
        "import sys\n"
        f"sys.path[:0] = [{str(root)!r}]\n"
        f"sys.path += {site.getsitepackages()!r}\n"
        "from scrubber.install.report import InstallOptions\n"
        "from scrubber.install.run import install\n"
        "import os\n"
        "install(InstallOptions(status_line=False, live=True), dict(os.environ))\n"
    )
    subprocess.run([sys.executable, "-S", "-c", script], env=base_env, check=True,
                   capture_output=True)  # fmt: skip
    settings = json.loads((config / "settings.json").read_text())
    return str(settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]), base_env


def instruction_counts(
    variants: dict[str, tuple[list[str] | str, bytes, dict[str, str]]],
) -> dict[str, object]:
    """Each variant once under callgrind: instructions executed (millions), which the load of
    a shared machine does not change (wall times here vary by 2x between runs), and each
    one's difference from `python -c pass`. Hash seed fixed, so that runs repeat exactly."""
    counts: dict[str, float] = {}
    for name, (argv, stdin, run_env) in variants.items():
        words = shlex.split(argv) if isinstance(argv, str) else argv
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *words],
            input=stdin, env={**run_env, "PYTHONHASHSEED": "0"}, capture_output=True,
            check=True,
        )  # fmt: skip
        collected = [line for line in done.stderr.decode().splitlines() if "Collected" in line]
        counts[name] = round(int(collected[-1].split(":")[-1]) / 1e6, 1)
    floor = counts["python -c pass"]
    return {
        "instructions (millions)": counts,
        "over python -c pass (millions)": {
            name: round(count - floor, 1)
            for name, count in counts.items()
            if name.startswith("post-tool-use")
        },
    }


def bench_post_tool_use(
    env: dict[str, str], n: int, baseline: Path | None = None, instructions: bool = False
) -> dict[str, object]:
    """The PostToolUse launcher (`scrub install --live`) on Bash outputs of 100 KB and 1 MB,
    without and with one secret in them, against `python -c pass` in the same rounds (and
    the same launcher installed from `baseline`, when given, in the same rounds too)."""
    import random

    from scrubber.demo.fakes import fake_github_token

    config = Path(env["CLAUDE_CONFIG_DIR"])
    settings = json.loads((config / "settings.json").read_text())
    commands = {"launcher": (settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"], env)}
    if baseline is not None:
        commands["baseline"] = install_baseline(baseline, env)
    secret = fake_github_token(random.Random(9))

    def payload(size: int, with_secret: bool) -> bytes:
        text = tool_output(size)
        if with_secret:
            middle = len(text) // 2
            text = text[:middle] + f"\nGITHUB_TOKEN={secret}\n" + text[middle:]
        return json.dumps(
            {"session_id": "bench", "transcript_path": str(config / "projects" / PROJECT / "b.jsonl"),
             "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_b",
             "tool_input": {"command": "cat big.log"},
             "tool_response": {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}}
        ).encode()  # fmt: skip

    python = sys.executable
    inputs = {size: (payload(size, False), payload(size, True)) for size in (100_000, 1_000_000)}
    variants: dict[str, tuple[list[str] | str, bytes, dict[str, str]]] = {
        "python -c pass": ([python, "-c", "pass"], b"", env),
        "python -S -c pass": ([python, "-S", "-c", "pass"], b"", env),
    }
    for size, (clean, dirty) in inputs.items():
        label = f"{size // 1000} KB" if size < 1_000_000 else "1 MB"
        for which, (command, run_env) in commands.items():
            variants[f"post-tool-use: {which}, {label} Bash output, no secret"] = (
                command, clean, run_env,
            )  # fmt: skip
            variants[f"post-tool-use: {which}, {label} Bash output, 1 secret"] = (
                command, dirty, run_env,
            )  # fmt: skip
    if instructions:
        return instruction_counts(variants)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(-1, n):
        for name, (argv, stdin, run_env) in variants.items():
            elapsed = timed(argv, stdin, run_env)
            if i >= 0:
                samples[name].append(elapsed)
    results: dict[str, object] = {name: percentiles(values) for name, values in samples.items()}
    floor = percentiles(samples["python -c pass"])["p95_ms"]
    results["p95 over python -c pass (ms)"] = {
        name: round(percentiles(values)["p95_ms"] - floor, 1)
        for name, values in samples.items()
        if name.startswith("post-tool-use")
    }
    return results


def append_chunk(source: Path, size: int) -> bytes:
    """About `size` bytes of whole lines from the middle of the transcript."""
    with source.open("rb") as handle:
        handle.seek(source.stat().st_size // 2)
        handle.readline()
        data = handle.read(size * 4)
    lines = data.split(b"\n")[:-1]
    chunk = b""
    for line in lines:
        if len(chunk) >= size:
            break
        chunk += line + b"\n"
    return chunk


def bench_status_line(
    env: dict[str, str], size_mb: int, append_kb: int, rounds: int
) -> dict[str, object]:
    config = Path(env["CLAUDE_CONFIG_DIR"])
    transcript = config / "projects" / PROJECT / f"{uuid.uuid4()}.jsonl"
    started = time.perf_counter()
    big = write_large_transcript(transcript, size_mb * 1_000_000, seed=7)
    generated = time.perf_counter() - started
    settings = json.loads((config / "settings.json").read_text())
    command = settings["statusLine"]["command"]
    stdin = json.dumps(
        {"session_id": big.session_id, "transcript_path": str(transcript), "model": {"id": "m"}}
    ).encode()
    scan = [sys.executable, "-m", "scrubber.hooks.status_line", "--scan", str(transcript),
            "--session", big.session_id]  # fmt: skip
    cold_env = {**env, "PYTHONPATH": str(ROOT), "SCRUB_STATUS_LINE_LINGER": "0"}
    first_catch_up = timed(scan, b"", cold_env)
    chunk = append_chunk(transcript, append_kb * 1000)
    state = Path(env["SCRUB_HOME"]) / "state" / "status-line" / f"{big.session_id}.json"

    def absorbed() -> bool:
        return bool(json.loads(state.read_text())["offset"] == transcript.stat().st_size)

    samples: dict[str, list[float]] = {
        name: []
        for name in ("bare", "bare_s", "call", "lag", "idle", "cold", "inline")
    }  # fmt: skip
    inline_command = command + " --inline"
    warm_env = {**env, "SCRUB_STATUS_LINE_LINGER": "60"}
    for index in range(rounds + 1):
        round_samples: dict[str, float] = {}
        round_samples["bare"] = timed([sys.executable, "-c", "pass"], b"", env)
        round_samples["bare_s"] = timed([sys.executable, "-S", "-c", "pass"], b"", env)
        # What a user gets: append, the status-line call (which starts the detached scan
        # the first time; later rounds find it lingering), then the time until the append
        # is absorbed, counted from the append.
        with transcript.open("ab") as handle:
            handle.write(chunk)
        appended = time.perf_counter()
        round_samples["call"] = timed(command, stdin, warm_env)
        while not absorbed():
            if time.perf_counter() - appended > 60:
                raise SystemExit("the detached scan did not catch up")
            time.sleep(0.005)
        round_samples["lag"] = time.perf_counter() - appended
        round_samples["idle"] = timed(command, stdin, warm_env)
        if index == 0:
            time.sleep(1)  # the first round started the lingering scan: not a sample
            continue
        for name, value in round_samples.items():
            samples[name].append(value)
    # Without a lingering scan: a cold process per append, and the scan inside the call.
    time.sleep(61)  # let the lingering scan leave
    for _ in range(rounds):
        with transcript.open("ab") as handle:
            handle.write(chunk)
        samples["cold"].append(timed(scan, b"", cold_env))
        with transcript.open("ab") as handle:
            handle.write(chunk)
        samples["inline"].append(timed(inline_command, stdin, cold_env))
    output = subprocess.run(  # noqa: S602 - the command as settings.json holds it
        command, shell=True, input=stdin, env=env, capture_output=True, check=True
    )
    return {
        "transcript_mb": round(big.size / 1e6, 1),
        "generated_s": round(generated, 1),
        "append_bytes": len(chunk),
        "first catch-up (detached scan of the whole file), s": round(first_catch_up, 2),
        "first catch-up MB/s": round(big.size / 1e6 / first_catch_up, 1),
        "python -c pass (same rounds)": percentiles(samples["bare"]),
        "python -S -c pass (same rounds)": percentiles(samples["bare_s"]),
        "status-line call after an append": percentiles(samples["call"]),
        "status-line call with nothing new": percentiles(samples["idle"]),
        "append absorbed by the lingering detached scan (lag from the append)": percentiles(
            samples["lag"]
        ),
        "cold detached scan absorbing an append (its own process)": percentiles(samples["cold"]),
        "status-line --inline call (scan inside the call, cold)": percentiles(samples["inline"]),
        "segment": output.stdout.decode().strip().replace("\x1b", "ESC"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--append-kb", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("-n", type=int, default=40, help="calls per hook measurement")
    parser.add_argument(
        "--baseline-root", type=Path, default=None,
        help="also time the PostToolUse launcher installed from this copy of the package "
        "(a folder holding scrubber/), in the same rounds",
    )  # fmt: skip
    parser.add_argument(
        "--instructions", action="store_true",
        help="post-tool-use: count instructions under valgrind's callgrind, once per variant, "
        "instead of timing",
    )  # fmt: skip
    parser.add_argument(
        "--only", choices=("hooks", "post-tool-use", "status-line"), default=None,
        help="run one part only",
    )  # fmt: skip
    args = parser.parse_args()
    # The hooks run from bytecode, as after `pip install` (which compiles it): without this,
    # PYTHONDONTWRITEBYTECODE (set on the dev VMs) makes every call compile every module it
    # imports from source, and the import times measured are the compiler's.
    import compileall

    for root in (ROOT, *([args.baseline_root] if args.baseline_root else [])):
        compileall.compile_dir(str(root / "scrubber"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        world = Path(tmp)
        config = world / ".claude"
        (config / "projects" / PROJECT).mkdir(parents=True)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "SCRUB_"))},
            "CLAUDE_CONFIG_DIR": str(config),
            "SCRUB_HOME": str(config / "scrubber"),
            "HOME": str(world),
        }
        install(InstallOptions(status_line=True, live=True), env)
        report: dict[str, object] = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.python_implementation()} {platform.python_version()}",
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
        if args.only in (None, "hooks"):
            report["hooks"] = bench_hooks(world, env, args.n)
        if args.only in (None, "post-tool-use"):
            report["post_tool_use"] = bench_post_tool_use(
                env, args.n, args.baseline_root, args.instructions
            )
        if args.only in (None, "status-line"):
            report["status_line"] = bench_status_line(
                env, args.size_mb, args.append_kb, args.rounds
            )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
