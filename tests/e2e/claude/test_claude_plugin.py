"""The repository as a Claude Code plugin: `claude plugin validate` accepts its manifests, and a
session with `--plugin-dir` runs the plugin's SessionEnd shim, which queues the session."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scrubber.hooks.spool import Spool

from .conftest import ROOT, Box, clean_environ
from .fake_api import text_turn

pytestmark = pytest.mark.claude


def validate(claude_bin: Path, target: Path, tmp_path: Path) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        [str(claude_bin), "plugin", "validate", str(target), "--json", "--strict"],
        env={**clean_environ(), "HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "c")},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-2000:])
    report = json.loads(done.stdout)
    assert isinstance(report, dict)
    return report


# The plugin's hooks (hooks/hooks.json): event -> shim.
SHIMS = {
    "SessionEnd": "session-end",
    "PostToolUse": "post-tool-use",
    "UserPromptSubmit": "user-prompt-submit",
}


def test_plugin_validate_passes_on_the_repository(claude_bin: Path, tmp_path: Path) -> None:
    # `.` holds both manifests: the validator reads the marketplace there.
    marketplace = validate(claude_bin, ROOT, tmp_path)
    assert marketplace["success"] is True
    assert marketplace["manifest"]["type"] == "marketplace"
    plugin = validate(claude_bin, ROOT / ".claude-plugin" / "plugin.json", tmp_path)
    assert plugin["success"] is True
    assert plugin["manifest"]["type"] == "plugin"
    for report in (marketplace, plugin):
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
        hooks = {hook["event"]: hook for hook in report["provides"]["hooks"]}
        assert set(hooks) == set(SHIMS)
        for event, name in SHIMS.items():
            assert hooks[event]["type"] == "command"
            assert f"${{CLAUDE_PLUGIN_ROOT}}/hooks/{name}" in hooks[event]["command"]
    for name in SHIMS.values():
        shim = ROOT / "hooks" / name
        assert shim.is_file() and os.access(shim, os.X_OK)


def test_a_session_with_plugin_dir_runs_the_plugins_session_end_hook(box: Box) -> None:
    run = box.claude(
        "Hello.",
        "--plugin-dir",
        str(ROOT),
        script=[text_turn("Hi.")],
        # Queue only: the worker's part is covered in test_claude_hooks.
        env={"SCRUB_NO_WORKER": "1"},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "SessionEnd hook" not in run.stderr, run.stderr[-2000:]
    session = run.session_id
    hook_log = box.scrub_home / "log" / "hook.log"
    box.wait_for(hook_log.exists, timeout=10, what="the plugin hook's log")
    assert f"session {session} queued (reason other" in hook_log.read_text()
    [spooled] = Spool(box.scrub_home).jobs()
    assert spooled.job.session_id == session
    # Fields of Claude Code's real payload made it into the job.
    assert spooled.job.reason == "other"  # what `-p` sends
    assert spooled.job.cwd == str(box.project)
    assert Path(spooled.job.transcript_path) == box.transcript(session)
    assert spooled.job.transcript_size == box.transcript(session).stat().st_size
