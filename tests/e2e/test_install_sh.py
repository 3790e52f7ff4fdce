"""`./install.sh --help` prints its own usage and does nothing else (issue 14, item 6)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--status-line", "--help"]])
def test_help_prints_usage_and_touches_nothing(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    marker = tmp_path / "python-was-run"
    python = tmp_path / "python3"
    python.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    python.chmod(0o755)
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHON": str(python),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "config"),
    }
    done = subprocess.run(
        ["/bin/sh", str(ROOT / "install.sh"), *args],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: ./install.sh")
    for name in ("SCRUB_VENV", "PYTHON", "XDG_DATA_HOME"):
        assert name in done.stdout
    assert done.stderr == ""
    assert not marker.exists()  # no interpreter run, so no environment built
    assert list(home.iterdir()) == []  # nothing linked into ~/.local/bin
    assert not (tmp_path / "data").exists() and not (tmp_path / "config").exists()
