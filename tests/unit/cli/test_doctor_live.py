"""`scrub doctor` shows whether the live hooks are registered."""

from __future__ import annotations

from pathlib import Path

from scrubber.cli.doctor_cmd import Level, check_live_hooks
from scrubber.install.report import InstallOptions
from scrubber.install.run import install, uninstall


def test_doctor_shows_the_live_hooks(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config), "SCRUB_HOME": str(config / "scrubber"),
           "HOME": str(tmp_path)}  # fmt: skip
    assert all(c.level is Level.INFO for c in check_live_hooks(config))
    install(InstallOptions(live=True), env, python="/usr/bin/python3")
    checks = check_live_hooks(config)
    assert [(c.name, c.level) for c in checks] == [
        ("live hook PostToolUse", Level.OK),
        ("live hook UserPromptSubmit", Level.OK),
    ]
    uninstall(env)
    assert all(c.level is Level.INFO for c in check_live_hooks(config))
