"""`scrub install --live` registers the PostToolUse and UserPromptSubmit hooks (merged,
idempotent), writes their launchers and the compiled live settings; `scrub uninstall` removes
exactly them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrubber.install.report import InstallOptions
from scrubber.install.run import install, uninstall
from scrubber.install.settings import event_hook_commands


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "config").mkdir()
    return {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "config"),
        "SCRUB_HOME": str(tmp_path / "config" / "scrubber"),
        "HOME": str(tmp_path),
    }


def settings(env: dict[str, str]) -> dict[str, object]:
    data = json.loads((Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    assert isinstance(data, dict)
    return data


def test_install_live_registers_both_hooks_once_and_uninstall_removes_them(
    env: dict[str, str],
) -> None:
    path = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    theirs = {"type": "command", "command": "their-linter"}
    path.write_text(
        json.dumps({"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [theirs]}]}})
    )
    install(InstallOptions(live=True), env, python="/usr/bin/python3")
    install(InstallOptions(live=True), env, python="/usr/bin/python3")
    data = settings(env)
    for event in ("PostToolUse", "UserPromptSubmit"):
        commands = event_hook_commands(data, event)
        assert len(commands) == 1, event
        launcher = Path(commands[0].split()[-1])
        assert launcher.is_file() and launcher.stat().st_mode & 0o777 == 0o700
    groups = data["hooks"]["PostToolUse"]  # type: ignore[index]
    assert groups[0] == {"matcher": "Edit", "hooks": [theirs]}
    assert "mcp__" in groups[1]["matcher"]
    live = Path(env["SCRUB_HOME"]) / "state" / "live.json"
    assert json.loads(live.read_text())["post_tool_use"] == "mask"
    uninstall(env)
    data = settings(env)
    assert data["hooks"] == {"PostToolUse": [{"matcher": "Edit", "hooks": [theirs]}]}
    assert not (Path(env["SCRUB_HOME"]) / "bin" / "scrubber-post-tool-use").exists()


def test_install_without_live_registers_no_live_hook(env: dict[str, str]) -> None:
    install(InstallOptions(), env, python="/usr/bin/python3")
    data = settings(env)
    assert event_hook_commands(data, "PostToolUse") == []
    assert event_hook_commands(data, "UserPromptSubmit") == []
