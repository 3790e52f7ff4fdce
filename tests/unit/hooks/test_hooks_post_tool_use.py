"""The PostToolUse hook: masks secrets in tool output with the same shape, rewrites persisted
side files, passes bad input through, logs kinds and fingerprints only, imports nothing heavy."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo.fakes import fake_aws_access_key, fake_github_token
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.hooks import post_tool_use
from scrubber.hooks.live_common import write_live_settings
from scrubber.policy.model import LiveMode, LiveOnError, LivePolicy, Policy
from scrubber.redaction.structure import same_structure

ROOT = Path(__file__).resolve().parents[3]
PROJECT = "-work-app"
SESSION = "0b0c9a52-7a4e-4a57-9b55-2f3d1f6a0d11"
FORBIDDEN = ("detect_secrets", "typer", "click", "yaml", "cryptography")


@pytest.fixture(params=["full", "fast"])
def env(
    tmp_path: Path, request: pytest.FixtureRequest, warm_prefilter: Any
) -> Iterator[dict[str, str]]:
    """Each test twice: without state/live.json (the full path), and with it compiled (the
    fast path: the prescan, and the light scanner of its candidates). The home has scanned
    before (a key and compiled prefilter databases, tests/conftest.py): the hook is the
    subject, not the first compile."""
    warm_prefilter.seed(tmp_path / "home")
    if request.param == "fast":
        write_live_settings(Policy(), tmp_path / "home")
    yield make_env(tmp_path)
    warm_prefilter.keep(tmp_path / "home")


@pytest.fixture
def compiled_env(tmp_path: Path, warm_prefilter: Any) -> Iterator[dict[str, str]]:
    """With state/live.json compiled from the default policy (in a home as `env`'s)."""
    warm_prefilter.seed(tmp_path / "home")
    write_live_settings(Policy(), tmp_path / "home")
    yield make_env(tmp_path)
    warm_prefilter.keep(tmp_path / "home")


def make_env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    (config / "projects" / PROJECT / SESSION / "tool-results").mkdir(parents=True)
    return {
        "CLAUDE_CONFIG_DIR": str(config),
        "SCRUB_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
    }


def secrets() -> tuple[str, str]:
    rng = random.Random(7)
    return fake_github_token(rng), fake_aws_access_key(rng)


def transcript(env: dict[str, str]) -> str:
    return str(Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / f"{SESSION}.jsonl")


def payload(env: dict[str, str], tool: str, response: Any, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": transcript(env),
        "cwd": "/work/app",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": {"command": "printenv"},
        "tool_response": response,
        "tool_use_id": "toolu_01",
        **extra,
    }


def run_hook(env: dict[str, str], data: bytes) -> str:
    out = io.StringIO()
    assert post_tool_use.main([], stdin=io.BytesIO(data), stdout=out, env=env) == 0
    return out.getvalue()


def answer(env: dict[str, str], value: dict[str, Any]) -> Any:
    printed = run_hook(env, json.dumps(value).encode())
    if not printed:
        return None
    data = json.loads(printed)
    assert data["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    return data["hookSpecificOutput"]["updatedToolOutput"]


def test_bash_output_is_masked_with_the_same_shape(env: dict[str, str]) -> None:
    token, aws = secrets()
    response = {
        "stdout": f"GITHUB_TOKEN={token}\nAWS_ACCESS_KEY_ID={aws}\nPATH=/usr/bin",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }
    new = answer(env, payload(env, "Bash", response))
    assert new is not None and same_structure(response, new)
    assert token not in json.dumps(new) and aws not in json.dumps(new)
    assert new["stdout"].endswith("\nPATH=/usr/bin")
    assert len(PLACEHOLDER_RE.findall(new["stdout"])) == 2
    assert {k: v for k, v in new.items() if k != "stdout"} == {
        k: v for k, v in response.items() if k != "stdout"
    }


@pytest.mark.parametrize(
    ("tool", "shape"),
    [
        ("Read", lambda s: {"type": "text", "file": {"filePath": "/a/.env", "content": s,
                                                     "numLines": 2, "startLine": 1, "totalLines": 2}}),
        ("Grep", lambda s: {"mode": "content", "numFiles": 1, "filenames": ["a"], "content": s}),
        ("Glob", lambda s: {"filenames": [s], "numFiles": 1, "truncated": False}),
        ("WebFetch", lambda s: {"url": "https://x", "result": s, "code": 200}),
        ("mcp__db__query", lambda s: [{"type": "text", "text": s}]),
        ("mcp__db__raw", lambda s: s),
    ],
)  # fmt: skip
def test_text_tools_are_masked(env: dict[str, str], tool: str, shape: Any) -> None:
    token, _ = secrets()
    response = shape(f"token: {token} end")
    new = answer(env, payload(env, tool, response))
    assert new is not None and same_structure(response, new)
    assert token not in json.dumps(new)
    assert "[REDACTED:github-token:" in json.dumps(new)


def test_nothing_found_prints_nothing(env: dict[str, str]) -> None:
    response = {"stdout": "commit 3f9a1c2e0b7d5a4c6e8f9a1b2c3d4e5f6a7b8c9d\n", "stderr": ""}
    assert answer(env, payload(env, "Bash", response)) is None


def test_image_data_is_left_alone(env: dict[str, str]) -> None:
    token, _ = secrets()
    response = {"type": "image", "file": {"base64": token, "type": "image/png"}}
    assert answer(env, payload(env, "Read", response)) is None


@pytest.mark.parametrize(
    "data",
    [b"", b"garbage", b"[1,2]", b"{" * 100_000, json.dumps({"tool_name": "Bash"}).encode()],
)
def test_bad_input_exits_0_prints_nothing_and_logs(env: dict[str, str], data: bytes) -> None:
    assert run_hook(env, data) == ""
    log = (Path(env["SCRUB_HOME"]) / "log" / "live.log").read_text()
    assert "post-tool-use" in log


def test_huge_input_is_passed_through(env: dict[str, str]) -> None:
    assert run_hook(env, b" " * (17 << 20)) == ""
    assert "larger" in (Path(env["SCRUB_HOME"]) / "log" / "live.log").read_text()


def test_unknown_tool_is_passed_through(env: dict[str, str]) -> None:
    token, _ = secrets()
    assert answer(env, payload(env, "TodoWrite", {"todos": [token]})) is None


def test_persisted_side_file_is_rewritten(env: dict[str, str]) -> None:
    token, _ = secrets()
    side = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / SESSION / "tool-results"
    side = side / "toolu_01.txt"
    side.write_text("x" * 40_000 + f"\nTOKEN={token}\n")
    side.chmod(0o644)
    response = {"stdout": "x" * 30_000, "stderr": "", "persistedOutputPath": str(side),
                "persistedOutputSize": 40_100}  # fmt: skip
    assert answer(env, payload(env, "Bash", response)) is None  # the preview holds no secret
    text = side.read_text()
    assert token not in text and "[REDACTED:github-token:" in text
    assert text.startswith("x" * 40_000)
    assert side.stat().st_mode & 0o777 == 0o600


def test_side_file_outside_the_session_folder_is_not_touched(
    env: dict[str, str], tmp_path: Path
) -> None:
    token, _ = secrets()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(f"TOKEN={token}\n")
    response = {"stdout": f"TOKEN={token}", "stderr": "", "persistedOutputPath": str(elsewhere)}
    new = answer(env, payload(env, "Bash", response))
    assert new is not None and token not in json.dumps(new)
    assert new["persistedOutputPath"] == str(elsewhere)
    assert elsewhere.read_text() == f"TOKEN={token}\n"


def test_missing_side_file_is_logged(env: dict[str, str]) -> None:
    gone = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / SESSION / "tool-results" / "no"
    response = {"stdout": "ok", "stderr": "", "persistedOutputPath": str(gone)}
    assert answer(env, payload(env, "Bash", response)) is None
    assert "missing file" in (Path(env["SCRUB_HOME"]) / "log" / "live.log").read_text()


def test_every_masking_is_an_activity_line_without_the_value(env: dict[str, str]) -> None:
    token, aws = secrets()
    answer(env, payload(env, "Bash", {"stdout": f"{token} {aws}", "stderr": ""}))
    log = Path(env["SCRUB_HOME"]) / "log"
    lines = [json.loads(x) for x in (log / "activity.jsonl").read_text().splitlines()]
    assert {(x["kind"], x["tool"], x["event"]) for x in lines} == {
        ("github-token", "Bash", "masked"),
        ("aws-access-key", "Bash", "masked"),
    }
    assert all(len(x["fingerprint"]) == 8 for x in lines)
    for path in log.iterdir():
        assert token not in path.read_text() and aws not in path.read_text()


def test_policy_warn_and_off(env: dict[str, str]) -> None:
    token, _ = secrets()
    home = Path(env["SCRUB_HOME"])
    for mode in (LiveMode.WARN, LiveMode.OFF):
        write_live_settings(Policy(live=LivePolicy(post_tool_use=mode)), home)
        assert answer(env, payload(env, "Bash", {"stdout": token, "stderr": ""})) is None
    activity = (home / "log" / "activity.jsonl").read_text()
    assert activity.count('"event":"seen"') == 1


def test_policy_detectors_narrow_the_set(env: dict[str, str]) -> None:
    token, aws = secrets()
    write_live_settings(
        Policy(live=LivePolicy(detectors=("aws-access-key-id",))), Path(env["SCRUB_HOME"])
    )
    new = answer(env, payload(env, "Bash", {"stdout": f"{token} {aws}", "stderr": ""}))
    assert token in new["stdout"] and aws not in new["stdout"]


def test_on_error_block_withholds_the_output(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    token, _ = secrets()

    def broken(*_: object) -> None:
        raise RuntimeError(token)  # an error whose text holds a value must not be logged

    monkeypatch.setattr(post_tool_use, "mask_tool_output", broken)
    value = payload(env, "Bash", {"stdout": token, "stderr": "", "interrupted": False})
    assert answer(env, value) is None  # on_error: pass (the default)
    write_live_settings(
        Policy(live=LivePolicy(on_error=LiveOnError.BLOCK)), Path(env["SCRUB_HOME"])
    )
    new = answer(env, value)
    assert new is not None and token not in json.dumps(new) and new["interrupted"] is False
    assert token not in (Path(env["SCRUB_HOME"]) / "log" / "live.log").read_text()


def test_the_shim_runs_the_hook_and_imports_nothing_heavy(env: dict[str, str]) -> None:
    token, _ = secrets()
    data = json.dumps(payload(env, "Bash", {"stdout": token, "stderr": ""})).encode()
    shim = str(ROOT / "hooks" / "post-tool-use")
    probe = (
        "import runpy, sys; sys.argv = ['post-tool-use']\n"
        f"try:\n    runpy.run_path({shim!r}, run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"sys.stderr.write(repr(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=data,
        capture_output=True,
        env={**os.environ, **env},
        check=True,
    )
    assert done.stderr.decode().strip() == "[]"
    out = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]
    assert token not in json.dumps(out) and "[REDACTED:github-token:" in out["stdout"]


HEAVY = ("scrubber.detection.scan", "scrubber.detection.rules.catalog", "scrubber.policy.model",
         "scrubber.detection.gate_index", "pathlib")  # fmt: skip


def launch(env: dict[str, str], data: bytes) -> tuple[str, list[str]]:
    """The hook as the installed launcher runs it (`python -S`, the package put on sys.path):
    what it printed, and which of HEAVY it imported."""
    probe = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from scrubber.hooks import post_tool_use\n"
        "post_tool_use.main()\n"
        f"sys.stderr.write(repr(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        input=data,
        capture_output=True,
        env={**os.environ, **env},
        check=True,
    )
    return done.stdout.decode(), eval(done.stderr.decode())  # noqa: S307 - our own repr


def test_the_fast_path_imports_no_scanner_and_no_policy(compiled_env: dict[str, str]) -> None:
    env = compiled_env
    token, _ = secrets()
    clean = payload(env, "Bash", {"stdout": "4b1d acca eaaa " * 50 + "plain", "stderr": ""})
    assert launch(env, json.dumps(clean).encode()) == ("", [])
    dirty = payload(env, "Bash", {"stdout": f"x {token} y", "stderr": ""})
    printed, heavy = launch(env, json.dumps(dirty).encode())
    out = json.loads(printed)["hookSpecificOutput"]["updatedToolOutput"]
    assert token not in printed and "[REDACTED:github-token:" in out["stdout"]
    assert not {"scrubber.detection.scan", "scrubber.detection.rules.catalog"} & set(heavy)
    assert "scrubber.policy.model" not in heavy


def test_a_stale_prescan_falls_back_to_the_full_scan(compiled_env: dict[str, str]) -> None:
    env = compiled_env
    home = Path(env["SCRUB_HOME"])
    live = home / "state" / "live.json"
    data = json.loads(live.read_text())
    data["prescan"]["stamp"] = []  # compiled from other detection code
    data["prescan"]["detectors"] = [data["prescan"]["detectors"][0]]  # which misses most
    live.write_text(json.dumps(data))
    token, _ = secrets()
    printed, heavy = launch(env, json.dumps(payload(env, "Bash", {"stdout": token})).encode())
    assert token not in printed and "[REDACTED:github-token:" in printed
    assert "scrubber.detection.scan" in heavy


def test_a_clean_side_file_is_left_as_it_is(compiled_env: dict[str, str]) -> None:
    env = compiled_env
    side = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / PROJECT / SESSION / "tool-results"
    side = side / "toolu_02.txt"
    side.write_text("4b1d " * 10_000)
    before = side.stat()
    response = {"stdout": "4b1d " * 6000, "stderr": "", "persistedOutputPath": str(side)}
    assert answer(env, payload(env, "Bash", response)) is None
    after = side.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_live_json_others_can_write_is_not_trusted(compiled_env: dict[str, str]) -> None:
    """A prescan planted by someone else (here: a file others may write, cut down to one
    detector, so that it would let a GitHub token by) never decides what is skipped."""
    env = compiled_env
    live = Path(env["SCRUB_HOME"]) / "state" / "live.json"
    data = json.loads(live.read_text())
    data["prescan"]["detectors"] = [data["prescan"]["detectors"][0]]
    live.write_text(json.dumps(data))
    live.chmod(0o666)
    token, _ = secrets()
    printed, heavy = launch(env, json.dumps(payload(env, "Bash", {"stdout": token})).encode())
    assert token not in printed and "[REDACTED:github-token:" in printed
    assert "scrubber.detection.scan" in heavy  # the full path, with the whole live set
