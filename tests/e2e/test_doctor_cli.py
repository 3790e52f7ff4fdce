"""`scrub doctor` as a real process after a real `scrub install` (issue 14, items 9, 15, 16):
a fresh install is clean, touching the policy is not staleness, the fix it prints clears what
it warns about, and the plugin's hook without scrubber installed is described as it is."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import warm_home

ROOT = Path(__file__).resolve().parents[2]
SESSION = "0b6f8e4e-5d1c-4f5a-9a53-2b1f3c4d5e6f"


def make_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "PATH": os.environ.get("PATH", ""),
        "SCRUB_NO_WORKER": "1",
    }
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(extra)
    return env


def scrub(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    home = Path(env["SCRUB_HOME"]) if "SCRUB_HOME" in env else None
    if home is not None:
        warm_home.seed(home, env)
    done = subprocess.run(
        [sys.executable, "-m", "scrubber.cli", *args],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if home is not None:
        warm_home.keep(home)
    return done


def doctor(env: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    done = scrub(env, "doctor", "--format", "json")
    return done.returncode, json.loads(done.stdout)["checks"]


def problems(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if c["level"] in ("warn", "fail")]


def test_a_fresh_install_is_private_and_doctor_is_clean(tmp_path: Path) -> None:
    env = make_env(tmp_path)  # no ~/.claude yet: `scrub install` creates it
    installed = scrub(env, "install", "--status-line")
    assert installed.returncode == 0, installed.stderr
    config = tmp_path / "home" / ".claude"
    for folder in (config, config / "scrubber", config / "scrubber" / "state"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    code, checks = doctor(env)
    assert problems(checks) == [] and code == 0
    assert not any("open to group" in c["message"] for c in checks)


def test_touching_the_policy_is_not_stale_and_the_printed_fix_clears_it(tmp_path: Path) -> None:
    env = make_env(tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path / "config"))
    assert scrub(env, "install").returncode == 0
    policy = tmp_path / "config" / "scrubber" / "policy.yaml"
    later = policy.stat().st_mtime + 60
    os.utime(policy, (later, later))  # `touch policy.yaml`: same content
    code, checks = doctor(env)
    assert problems(checks) == [] and code == 0, problems(checks)

    policy.write_text(policy.read_text().replace("patterns: []", "patterns: ['demo-.*']", 1))
    code, checks = doctor(env)
    [stale] = [c for c in checks if c["name"] == "status-line allowlist"]
    assert code == 1 and stale["level"] == "warn"
    command = re.search(r"`(scrub [^`]+)`", stale["fix"])
    assert command is not None
    done = scrub(env, *shlex.split(command.group(1))[1:])  # the printed fix, as printed
    assert done.returncode == 0, done.stderr
    code, checks = doctor(env)
    assert problems(checks) == [] and code == 0, problems(checks)


def _end_a_session_with_the_plugins_hook(env: dict[str, str], config: Path) -> None:
    """The plugin's shim under an interpreter without scrubber's libraries (-S: no
    site-packages), as Claude Code runs it when scrubber is not installed."""
    project = config / "projects" / "-work-app"
    project.mkdir(parents=True)
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text('{"type":"user","message":{"content":"hi"}}\n')
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "reason": "other"}
    hook_env = {k: v for k, v in env.items() if k != "SCRUB_NO_WORKER"}
    subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "session-end")],
        input=json.dumps(payload).encode(), env=hook_env, timeout=60, check=True,
    )  # fmt: skip


def test_the_plugins_hook_without_scrub_installed_is_described_as_it_is(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    (config / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"scrubber@scrubber": True}})
    )
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").write_text("#!/bin/sh\nexit 1\n")  # a python3 without the libraries
    (bare / "python3").chmod(0o755)
    env = make_env(tmp_path, CLAUDE_CONFIG_DIR=str(config), PATH=str(bare))
    _end_a_session_with_the_plugins_hook(env, config)
    assert list((config / "scrubber" / "spool").glob("*.json"))  # queued, no worker
    code, checks = doctor(env)
    by_name = {c["name"]: c for c in checks}
    assert by_name["SessionEnd hook"]["level"] == "ok"
    assert "registered by the scrubber plugin" in by_name["SessionEnd hook"]["message"]
    spool = [c for c in checks if c["name"] == "spool"]
    assert any("waiting for an install" in c["message"] for c in spool), spool
    assert not any("draining" in c["message"] for c in spool)
    assert by_name["worker"]["level"] == "warn" and "install.sh" in by_name["worker"]["fix"]
    assert code == 1

    # Loaded with --plugin-dir (nothing in settings): its hook ran, so it is registered.
    (config / "settings.json").write_text("{}")
    code, checks = doctor(env)
    [hook] = [c for c in checks if c["name"] == "SessionEnd hook"]
    assert hook["level"] == "ok" and "not registered" not in hook["message"]
