"""The status line: incremental scanning, rewrites, budget, allowlist, wrapping, light imports."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import build_demo_config
from scrubber.detection.fingerprint import Fingerprinter, read_or_create_key
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.scan import SecretScanner
from scrubber.hooks import fastpath, status_line, status_scan, status_state
from scrubber.hooks.status_line import render
from scrubber.hooks.status_scan import IncrementalScan, ScanState
from scrubber.paths import fingerprint_key_file
from scrubber.policy.model import Allowlist, DetectionPolicy, Policy
from scrubber.usecases.audit import audit
from scrubber.usecases.audit_report import ScanTarget

ROOT = Path(__file__).resolve().parents[3]
FULL = "e3e70682-c209-4cac-a29f-6fbed82c07cd"  # the demo session with every kind of secret
PROJECT = "-home-demo-work-shop-api"
FORBIDDEN = ("detect_secrets", "typer", "click", "yaml", "cryptography")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_config(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def env(tmp_path: Path, demo: Path, warm_prefilter: Any) -> Iterator[dict[str, str]]:
    config = tmp_path / "config"
    (config / "projects" / PROJECT).mkdir(parents=True)
    # A home that has scanned before (its key and compiled prefilter databases): the status
    # line's scans are the subject here, not the first compile (see tests/conftest.py).
    warm_prefilter.seed(tmp_path / "home")
    yield {
        "CLAUDE_CONFIG_DIR": str(config),
        "SCRUB_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        # The detached scans a call starts leave once done, not five minutes after the suite
        # (the tests of lingering pass their own `linger`).
        status_scan.ENV_LINGER: "0",
    }
    warm_prefilter.keep(tmp_path / "home")


def transcript_in(env: dict[str, str], demo: Path, lines: int | None = None) -> Path:
    source = demo / "projects" / PROJECT / f"{FULL}.jsonl"
    target = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / f"{FULL}.jsonl"
    data = source.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(data if lines is None else data[:lines]))
    return target


def home(env: dict[str, str]) -> Path:
    return Path(env["SCRUB_HOME"])


def expected_kinds(
    path: Path, env: dict[str, str], allowlist: Allowlist | None = None
) -> dict[str, int]:
    """What `scrub audit` finds with our own rules (the status line runs no detect-secrets)."""
    key = read_or_create_key(fingerprint_key_file(home(env)))
    scanner = SecretScanner(ALL_RULES, Fingerprinter(key), allowlist, engine="python")
    report = audit([ScanTarget(path, True)], scanner)
    kinds: dict[str, set[str]] = {}
    for finding in report.findings:
        kinds.setdefault(finding.kind, set()).add(finding.fingerprint)
    return {kind: len(fps) for kind, fps in kinds.items()}


def kinds_of(state: ScanState) -> dict[str, int]:
    return {kind: len(fps) for kind, fps in state.findings.items() if fps}


def scan_all(path: Path, env: dict[str, str], state: ScanState | None = None) -> ScanState:
    state, _ = IncrementalScan(home(env)).step(path, state, budget=60.0)
    return state


def test_a_full_scan_finds_what_audit_finds(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    state = scan_all(path, env)
    assert kinds_of(state) == expected_kinds(path, env)
    assert {"dotenv-value", "github-token", "aws-access-key"} <= set(state.findings)
    assert state.offset == state.size == path.stat().st_size
    assert not state.behind and not state.partial


def test_scanning_in_pieces_equals_one_scan_and_remembers_tool_calls(
    env: dict[str, str], demo: Path
) -> None:
    full = transcript_in(env, demo)
    whole = kinds_of(scan_all(full, env))
    lines = full.read_bytes().splitlines(keepends=True)
    state = None
    for count in range(5, len(lines) + 1, 7):
        full.write_bytes(b"".join(lines[:count]))
        # A new IncrementalScan each time: each status-line call is a new process.
        state, changed = IncrementalScan(home(env)).step(full, state, budget=60.0)
        assert changed
    full.write_bytes(b"".join(lines))
    state, _ = IncrementalScan(home(env)).step(full, state, budget=60.0)
    assert kinds_of(state) == whole
    assert state.calls  # sensitive calls (the Read of .env, printenv) carried between steps
    assert all(len(call) == 4 for call in state.calls)


def test_nothing_new_is_not_a_change(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    state = scan_all(path, env)
    again, changed = IncrementalScan(home(env)).step(path, state, budget=60.0)
    assert not changed and again is state


def test_a_small_budget_catches_up_over_several_calls(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    state, calls = None, 0
    while state is None or state.behind:
        state, _ = IncrementalScan(home(env)).step(path, state, budget=0.0)
        calls += 1
        assert calls < 10_000
    assert calls > 5  # at least one line per call, so one call per line here
    assert kinds_of(state) == expected_kinds(path, env)


def test_truncation_and_rewrites_rescan_from_the_start(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    state = scan_all(path, env)
    assert state.total() > 0
    # Truncated to the first line (no secret there): counts start over.
    first = path.read_bytes().splitlines(keepends=True)[0]
    path.write_bytes(first)
    state = scan_all(path, env, state)
    assert state.total() == 0 and state.offset == len(first)
    # Rewritten in place, same inode and a longer file: the tail check notices.
    transcript_in(env, demo)
    state = scan_all(path, env, state)
    secret_state = kinds_of(state)
    assert secret_state == expected_kinds(path, env)
    # Same inode, same size, different bytes before the offset, then a line appended: the
    # keyed tail check notices, and the scan starts over (the old findings go).
    from scrubber.demo import demo_manifest

    data = path.read_bytes()
    for secret in demo_manifest().secrets:
        for needle in secret.needles():
            data = data.replace(needle.encode(), b"x" * len(needle.encode()))
    data = data[:-10] + b'"zzzzzzz}\n'
    with path.open("r+b") as handle:
        handle.write(data)
    with path.open("ab") as handle:
        handle.write(b'{"type":"user"}\n')
    rescanned = scan_all(path, env, state)
    assert kinds_of(rescanned) == expected_kinds(path, env)
    assert rescanned.total() < state.total()
    # Replaced by a new file (an in-place redaction renames one over it): a new inode.
    clean = path.with_name("clean.tmp")
    clean.write_bytes(first * 3)
    clean.replace(path)
    state = scan_all(path, env, rescanned)
    assert state.total() == 0 and state.line == 4


def test_an_unterminated_last_line_waits_for_its_newline(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    data = path.read_bytes()
    path.write_bytes(data[:-40])
    state = scan_all(path, env)
    assert state.partial and not state.behind
    assert state.offset == data[:-40].rindex(b"\n") + 1
    _, changed = IncrementalScan(home(env)).step(path, state, budget=60.0)
    assert not changed  # a torn line does not make every call rescan
    path.write_bytes(data)
    state = scan_all(path, env, state)
    assert not state.partial and state.offset == len(data)


def test_the_compiled_allowlist_silences_and_a_change_rescans(
    env: dict[str, str], demo: Path
) -> None:
    path = transcript_in(env, demo)
    before = scan_all(path, env)
    assert "github-token" in before.findings
    policy = Policy(detection=DetectionPolicy(allowlist=Allowlist(patterns=("gh[pousr]_.*",))))
    status_line.write_allowlist_state(policy, home(env))
    after = scan_all(path, env, before)
    assert "github-token" not in after.findings
    assert kinds_of(after) == expected_kinds(path, env, policy.detection.allowlist)


def test_writing_the_same_allowlist_keeps_its_stamp(tmp_path: Path) -> None:
    target = status_line.write_allowlist_state(Policy(), tmp_path)
    stamp = target.stat().st_mtime_ns
    status_line.write_allowlist_state(Policy(), tmp_path)
    assert target.stat().st_mtime_ns == stamp


def test_state_files_hold_fingerprints_and_kinds_never_values(
    env: dict[str, str], demo: Path
) -> None:
    from scrubber.demo import demo_manifest

    path = transcript_in(env, demo)
    status_line.status_segment(
        json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode(),
        env,
        inline=True,
        budget=60.0,
    )
    text = status_scan.state_file(home(env), FULL, path).read_text()
    for secret in demo_manifest().secrets:
        for needle in secret.needles():
            assert needle not in text


@pytest.mark.parametrize(
    ("findings", "offset", "size", "expected"),
    [
        ({}, 10, 10, ""),
        ({"aws-access-key": ["a"], "dotenv-value": ["b", "c"]}, 10, 10,
         "secrets: 3 (dotenv-value, aws-access-key)"),
        ({"a": ["1"], "b": ["2"], "c": ["3"], "d": ["4"]}, 10, 10, "secrets: 4 (a, b, c, +1)"),
        ({"x": ["1"], "y": ["1"]}, 10, 10, "secrets: 1 (x, y)"),  # one value, two kinds
        ({}, 0, 50 << 20, "scrub: catching up 0%"),
        ({"x": ["1"]}, 25 << 20, 50 << 20, "secrets: 1 (x) catching up 50%"),
        ({}, 100, 20_100, ""),  # a turn's worth behind: not worth a word
    ],
)  # fmt: skip
def test_render(findings: dict[str, list[str]], offset: int, size: int, expected: str) -> None:
    state = ScanState("/t.jsonl", size=size, offset=offset, findings=findings)
    assert render(state, color=False) == expected
    if expected.startswith("secrets"):
        assert render(state).startswith(status_state.RED)


def test_render_knows_when_the_caller_saw_more(env: dict[str, str]) -> None:
    state = ScanState("/t.jsonl", size=100, offset=100)
    assert render(state, size=100 + (8 << 20), color=False) == "scrub: catching up 0%"
    assert render(None, size=10, color=False) == ""


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"[]", b'{"transcript_path": 3}', b'{"transcript_path": "/etc/x.jsonl"}',
     b'{"transcript_path": "relative.jsonl"}'],
)  # fmt: skip
def test_unexpected_input_prints_nothing(env: dict[str, str], data: bytes) -> None:
    out = io.StringIO()
    assert status_line.main([], stdin=io.BytesIO(data), stdout=out, env=env) == 0
    assert out.getvalue() == ""


def test_a_missing_transcript_prints_nothing(env: dict[str, str]) -> None:
    path = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / "nope.jsonl"
    data = json.dumps({"session_id": "nope", "transcript_path": str(path)}).encode()
    out = io.StringIO()
    status_line.main(["--inline"], stdin=io.BytesIO(data), stdout=out, env=env)
    assert out.getvalue() == ""


def test_main_inline_prints_the_segment(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path), "model": {}}).encode()
    out = io.StringIO()
    status_line.main(
        ["--inline", "--budget-ms", "60000"], stdin=io.BytesIO(data), stdout=out, env=env
    )
    line = out.getvalue()
    assert line.startswith(status_state.RED + "secrets: ") and line.endswith("\n")
    assert line.count("\n") == 1


def test_the_default_mode_scans_in_the_background(
    env: dict[str, str], demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call itself prints what is known and starts the scan; the next call shows it."""
    path = transcript_in(env, demo)
    started: list[tuple[Path, str]] = []
    monkeypatch.setattr(
        status_line, "start_background_scan", lambda t, s, e: started.append((t, s)) or True
    )
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    assert status_line.status_segment(data, env, color=False) == ""
    assert started == [(path, FULL)]
    final = status_scan.run_background_scan(path, FULL, env, step_budget=0.001, linger=0)
    assert final is not None and not final.behind
    assert status_line.status_segment(data, env, color=False).startswith("secrets: ")
    assert len(started) == 1  # up to date: no new scan


def test_one_background_scan_per_transcript(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    where = status_scan.state_file(home(env), FULL, path)
    fd = status_scan._try_lock(status_scan._lock_path(where))
    assert fd is not None
    try:
        assert status_scan.run_background_scan(path, FULL, env) is None
        assert status_scan.start_background_scan(path, FULL, env) is False
    finally:
        os.close(fd)


def test_wrap_runs_the_previous_command_with_the_same_stdin_first(
    env: dict[str, str], demo: Path
) -> None:
    path = transcript_in(env, demo)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    out = io.StringIO()
    status_line.main(
        ["--wrap", "head -c 12; echo", "--inline", "--budget-ms", "60000"],
        stdin=io.BytesIO(data), stdout=out, env=env,
    )  # fmt: skip
    previous, ours = out.getvalue().rstrip("\n").split("  ", 1)
    assert previous == data[:12].decode()
    assert ours.startswith(status_state.RED + "secrets: ")


def test_a_failing_previous_command_still_shows_ours_and_a_clean_one_shows_theirs(
    env: dict[str, str], demo: Path
) -> None:
    path = transcript_in(env, demo, lines=1)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    out = io.StringIO()
    status_line.main(
        ["--wrap", "printf 'model | dir'"], stdin=io.BytesIO(data), stdout=out, env=env
    )
    assert out.getvalue() == "model | dir\n"
    out = io.StringIO()
    status_line.main(["--wrap", "exit 3"], stdin=io.BytesIO(data), stdout=out, env=env)
    assert out.getvalue() == ""


def test_compose() -> None:
    assert status_line.compose("", "") == ""
    assert status_line.compose("a\n", "") == "a"
    assert status_line.compose("", "s") == "s"
    assert status_line.compose("row1\nrow2\n", "s") == "row1\nrow2  s"


def test_prune_removes_old_state_files(tmp_path: Path) -> None:
    folder = status_scan.states_dir(tmp_path)
    folder.mkdir(parents=True)
    old, new = folder / "old.json", folder / "new.json"
    old.write_text("{}")
    new.write_text("{}")
    os.utime(old, (1_000, 1_000))
    assert status_line.prune_states(tmp_path, now=1_000 + 31 * 86400) == 1
    assert not old.exists() and new.exists()


def _modules_after(code: str, stdin: bytes, env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, env={**os.environ, **env},
        cwd=ROOT, check=True,
    )  # fmt: skip
    return set(json.loads(done.stdout.decode().strip().splitlines()[-1]))


def test_the_status_line_imports_nothing_heavy_even_when_scanning(
    env: dict[str, str], demo: Path
) -> None:
    path = transcript_in(env, demo)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    code = (
        "import io, json, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from scrubber.hooks import status_line\n"
        "out = io.StringIO()\n"
        "status_line.main(['--inline', '--budget-ms', '60000'], stdout=out)\n"
        "assert 'secrets' in out.getvalue(), out.getvalue()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    modules = _modules_after(code, data, env)
    assert "scrubber.detection.scan" in modules  # it did scan
    assert not {m for m in modules if m.split(".")[0] in FORBIDDEN}


def test_the_session_end_shim_imports_nothing_heavy(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    code = (
        "import json, runpy, sys\n"
        "sys.argv = ['session-end']\n"
        "try:\n"
        f"    runpy.run_path({str(ROOT / 'hooks' / 'session-end')!r}, run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    modules = _modules_after(code, data, {**env, "SCRUB_NO_WORKER": "1"})
    assert "scrubber.hooks.session_end" in modules
    assert not {m for m in modules if m.split(".")[0] in FORBIDDEN}
    assert not {m for m in modules if m.startswith(("scrubber.detection", "scrubber.policy"))}
    assert (home(env) / "spool" / f"{FULL}.json").exists()


def test_remembered_calls_keep_no_command_text(env: dict[str, str]) -> None:
    token = "gh" + "p_" + os.urandom(18).hex()[:36]
    lines = [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "Read",
             "input": {"file_path": f"/w/app{i}/.env"}}]}}
        for i in range(3)
    ] + [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "toolu_bash", "name": "Bash",
             "input": {"command": f"TOKEN={token} printenv"}}]}},
    ]  # fmt: skip
    path = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / "calls.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    state = scan_all(path, env)
    assert [call[0] for call in state.calls] == ["toolu_0", "toolu_1", "toolu_2", "toolu_bash"]
    assert state.calls[0][3] == ".env" and state.calls[-1][1:] == ["Bash", "dotenv", ""]
    assert token not in json.dumps(state.to_json())


def test_the_background_scan_lingers_and_absorbs_appends(env: dict[str, str], demo: Path) -> None:
    import threading

    path = transcript_in(env, demo, lines=5)
    rest = (demo / "projects" / PROJECT / f"{FULL}.jsonl").read_bytes()[path.stat().st_size :]
    where = status_scan.state_file(home(env), FULL, path)
    result: list[ScanState | None] = []
    thread = threading.Thread(
        target=lambda: result.append(status_scan.run_background_scan(path, FULL, env, linger=1.5))
    )
    thread.start()
    try:
        # Append only once the first pass is done and saved: the run is then lingering.
        first = path.stat().st_size
        started = time.monotonic()
        while (saved := status_scan.load_state(where)) is None or saved.offset != first:
            assert time.monotonic() - started < 20
            time.sleep(0.02)
        with path.open("ab") as handle:
            handle.write(rest)
        appended = time.monotonic()
        while status_scan.load_state(where) is None or (
            status_scan.load_state(where).offset != path.stat().st_size  # type: ignore[union-attr]
        ):
            assert time.monotonic() - appended < 20
            time.sleep(0.02)
        assert thread.is_alive()  # the same run absorbed the append
    finally:
        thread.join(timeout=30)
    assert not thread.is_alive()  # and left once the file was quiet for `linger` seconds
    [final] = result
    assert final is not None and kinds_of(final) == expected_kinds(path, env)


def _aws_key_id_with_digits() -> str:
    """An AWS access key id whose body holds digits outside base32 (0, 1, 8, 9): audit's
    detect-secrets plugin takes those, and our rule missed them (issue 14, item 5)."""
    import random

    rng = random.Random(5)
    body = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(14))
    return "AK" + "IA" + body + "18"


def _read_dotenv_lines(text: str) -> bytes:
    call = {
        "type": "assistant",
        "uuid": "a1",
        "sessionId": FULL,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/.env"}}
            ],
        },
    }
    result = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": "a1",
        "sessionId": FULL,
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "     1\t" + text}],
        },
        "toolUseResult": {"type": "text", "file": {"filePath": "/w/.env", "content": text}},
    }
    return b"".join(json.dumps(r).encode() + b"\n" for r in (call, result))  # fmt: skip


def test_the_status_line_and_audit_report_the_same_kind_for_an_aws_key(
    env: dict[str, str],
) -> None:
    from scrubber.detection.registry import full_detectors

    path = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / f"{FULL}.jsonl"
    path.write_bytes(_read_dotenv_lines(f"AWS_ACCESS_KEY_ID={_aws_key_id_with_digits()}\n"))
    key = read_or_create_key(fingerprint_key_file(home(env)))
    scanner = SecretScanner(full_detectors(), Fingerprinter(key), None, engine="python")
    audited = {f.kind for f in audit([ScanTarget(path, True)], scanner).findings}
    assert "aws-access-key" in audited
    assert set(kinds_of(scan_all(path, env))) == audited


def test_the_call_after_an_append_shows_what_the_lingering_scan_found(
    env: dict[str, str],
) -> None:
    """Claude reads a .env and answers at once: the call after the answer may be the last one
    for a while, so it waits (briefly) for the running scan instead of showing the old state."""
    import threading

    path = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / f"{FULL}.jsonl"
    path.write_bytes(b'{"type":"user","message":{"content":"hi"}}\n')
    where = status_scan.state_file(home(env), FULL, path)
    thread = threading.Thread(
        target=lambda: status_scan.run_background_scan(path, FULL, env, linger=3.0)
    )
    thread.start()
    try:
        started = time.monotonic()
        while (
            (saved := status_scan.load_state(where)) is None
            or saved.behind
            or (saved.offset != path.stat().st_size)
        ):
            assert time.monotonic() - started < 20
            time.sleep(0.02)
        data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
        assert fastpath.fast_segment(data, env) == ""  # clean so far
        with path.open("ab") as handle:
            handle.write(_read_dotenv_lines(f"AWS_ACCESS_KEY_ID={_aws_key_id_with_digits()}\n"))
        segment = fastpath.fast_segment(data, env)  # the very next call
        assert segment is not None and "secrets: 1 (aws-access-key)" in segment
        with path.open("ab") as handle:
            handle.write(_read_dotenv_lines("TOKEN=x\n"))
        line = status_line.status_segment(data, env, color=False)  # the --wrap path too
        assert line == "secrets: 1 (aws-access-key)"
    finally:
        # A transcript that is gone ends the lingering scan at its next look (a stat every
        # BACKGROUND_POLL), instead of after the 3 s of quiet this test had to wait out.
        path.unlink(missing_ok=True)
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_no_color_means_no_ansi_in_any_path(env: dict[str, str], demo: Path) -> None:
    """NO_COLOR=1: the state-file answer, the full path and the shim as a process print plain
    text (issue 14, item 20); an empty NO_COLOR does not count (no-color.org)."""
    path = transcript_in(env, demo)
    status_scan.run_background_scan(path, FULL, env, linger=0)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    plain = {**env, "NO_COLOR": "1"}
    segment = fastpath.fast_segment(data, plain)
    assert segment is not None and segment.startswith("secrets: ") and "\x1b" not in segment
    assert (fastpath.fast_segment(data, {**env, "NO_COLOR": ""}) or "").startswith("\x1b[31m")
    out = io.StringIO()
    status_line.main(["--inline"], stdin=io.BytesIO(data), stdout=out, env=plain)
    assert out.getvalue().startswith("secrets: ") and "\x1b" not in out.getvalue()
    shim = subprocess.run(
        [sys.executable, "-S", str(ROOT / "hooks" / "status-line")],
        input=data, capture_output=True, env={**os.environ, **plain}, check=True,
    )  # fmt: skip
    assert shim.stdout.startswith(b"secrets: ") and b"\x1b" not in shim.stdout


def test_the_lingering_scan_is_bounded_even_while_the_file_keeps_growing(
    env: dict[str, str],
) -> None:
    import threading

    path = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / f"{FULL}.jsonl"
    path.write_bytes(b'{"type":"user","message":{"content":"hi"}}\n')
    stop = threading.Event()

    def keep_appending() -> None:
        while not stop.wait(0.05):
            with path.open("ab") as handle:
                handle.write(b'{"type":"user","message":{"content":"more"}}\n')

    writer = threading.Thread(target=keep_appending)
    writer.start()
    try:
        started = time.monotonic()
        final = status_scan.run_background_scan(path, FULL, env, linger=60, max_seconds=1.0)
        took = time.monotonic() - started
    finally:
        stop.set()
        writer.join()
    assert final is not None and took < 10  # ended at max_seconds, not after the linger
    assert status_scan.BACKGROUND_MAX_SECONDS <= 6 * 3600


def test_linger_comes_from_the_environment() -> None:
    assert status_scan._linger({status_scan.ENV_LINGER: "2.5"}) == 2.5
    assert status_scan._linger({status_scan.ENV_LINGER: "x"}) == status_scan.BACKGROUND_LINGER
    assert status_scan._linger({}) == status_scan.BACKGROUND_LINGER
    assert status_scan._linger({status_scan.ENV_LINGER: "1e12"}) == status_scan.MAX_LINGER
    assert status_scan._linger({status_scan.ENV_LINGER: "inf"}) == status_scan.MAX_LINGER
    assert status_scan._linger({status_scan.ENV_LINGER: "nan"}) == status_scan.BACKGROUND_LINGER
    assert status_scan._linger({status_scan.ENV_LINGER: "-5"}) == 0.0


# -- the fast path ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"HOME": "/h"},
        {"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"},
        {"HOME": "/h", "CLAUDE_CONFIG_DIR": "", "SCRUB_HOME": "/s"},
        {"HOME": "/h", "CLAUDE_CONFIG_DIR": "~/cfg", "SCRUB_HOME": ""},
        {"HOME": "/h", "SCRUB_HOME": "~/sh"},
    ],
)
def test_fastpath_finds_the_same_folders_as_paths(env: dict[str, str]) -> None:
    from scrubber import paths

    assert status_state.config_dir(env) == str(paths.config_dir(env))
    assert status_state.scrub_home(env) == str(paths.scrub_home(env))


@pytest.mark.parametrize(
    "text",
    ['{"a": [1, 2.5, -3e2, true, false, null], "b": {"c": "\\u00e9\\ud83d\\ude00\\n"}}',
     "  [1]  \n", '"x"', "12345678901234567890123", '{"n": NaN, "i": -Infinity}', "{}"],
)  # fmt: skip
def test_fastpath_reads_json_as_json_does(text: str) -> None:
    got, want = status_state.loads(text.encode()), json.loads(text)
    assert json.dumps(got) == json.dumps(want)


@pytest.mark.parametrize("text", [b"", b"   ", b"{", b'{"a": 1} x', b"[1,]", b"\xff", b"nope"])
def test_fastpath_refuses_what_json_refuses(text: bytes) -> None:
    with pytest.raises(ValueError):
        status_state.loads(text)


def test_fastpath_answers_only_when_the_state_is_current(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    assert fastpath.fast_segment(data, env) is None  # no state yet
    status_scan.run_background_scan(path, FULL, env, linger=0)
    segment = fastpath.fast_segment(data, env)
    assert segment is not None and segment == status_line.status_segment(data, env)
    assert segment.startswith(status_state.RED + "secrets: ")
    with path.open("ab") as handle:
        handle.write(b'{"type":"user"}\n')
    assert fastpath.fast_segment(data, env) is None  # grew: the full path starts the scan
    where = status_scan.state_file(home(env), FULL, path)
    fd = status_scan._try_lock(status_scan._lock_path(where))  # a lingering scan is at it
    assert fd is not None
    try:
        assert status_state.scan_running(str(where))
        assert fastpath.fast_segment(data, env) == segment
    finally:
        os.close(fd)
    assert not status_state.scan_running(str(where))
    for bad in (b"", b"{", b"[]", b'{"transcript_path": "/etc/x.jsonl"}'):
        assert fastpath.fast_segment(bad, env) == ""


def test_a_current_status_line_call_imports_almost_nothing(env: dict[str, str], demo: Path) -> None:
    path = transcript_in(env, demo)
    status_scan.run_background_scan(path, FULL, env, linger=0)
    data = json.dumps({"session_id": FULL, "transcript_path": str(path)}).encode()
    code = (
        "import io, sys\n"
        "before = set(sys.modules)\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from scrubber.hooks import fastpath\n"
        "real, sys.stdout = sys.stdout, io.StringIO()\n"
        "fastpath.main([])\n"
        "out, sys.stdout = sys.stdout.getvalue(), real\n"
        "assert 'secrets' in out, out\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    # -S, as the launchers run it: nothing but what the call itself imports is measured.
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], input=data, capture_output=True,
        env={**os.environ, **env}, check=True,
    )  # fmt: skip
    import ast

    loaded = set(ast.literal_eval(done.stdout.decode().splitlines()[-1]))
    assert "scrubber.hooks.fastpath" in loaded
    heavy = ("json", "re", "pathlib", "dataclasses", "typing", "inspect", "subprocess")
    assert not {m for m in loaded if m.split(".")[0] in heavy}
    # status_state is the fast path's own light half; the full status line must stay unloaded.
    assert "scrubber.hooks.status_state" in loaded
    assert not {
        m for m in loaded if m.startswith(("scrubber.detection", "scrubber.hooks.status_line"))
    }


def test_a_state_file_nested_too_deep_or_too_large_is_no_state(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    assert status_state.read_json(str(deep)) is None  # not a RecursionError
    large = tmp_path / "large.json"
    large.write_bytes(b'"' + b"x" * (status_state.MAX_STATE_BYTES + 8) + b'"')
    assert status_state.read_json(str(large)) is None
    fine = tmp_path / "fine.json"
    fine.write_text('{"a": [1]}')
    assert status_state.read_json(str(fine)) == {"a": [1]}
