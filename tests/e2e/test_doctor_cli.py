"""`scrub doctor` as a real process after a real `scrub install` (issue 14, items 9, 15, 16):
a fresh install is clean, touching the policy is not staleness, the fix it prints clears what
it warns about, and the plugin's hook without scrubber installed is described as it is."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any



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
    return subprocess.run(
        [sys.executable, "-m", "scrubber.cli", *args],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


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
