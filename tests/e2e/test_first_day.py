"""What a new user's first day turned up (issue 14, items 1 and 2): a hint never leads to
rewriting originals or reaching past the user's own selection, and a folder Claude Code never
used is not audited as a clean config dir."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import Sandbox


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hint(output: str) -> str | None:
    for line in output.splitlines():
        if line.startswith("Redacted copies: "):
            return line.removeprefix("Redacted copies: ").split("   ")[0]
    return None


def test_the_audit_hint_repeats_the_selection_and_following_it_leaves_originals(
    sandbox: Sandbox, demo_config: Path
) -> None:
    whole = sandbox.scrub("audit")
    assert whole.returncode == 1, whole.output
    assert _hint(whole.stdout) == "scrub redact --all"
    session = next(demo_config.glob("projects/*/*.jsonl")).stem
    one = sandbox.scrub("audit", "--session", session[:8])
    if one.returncode == 1:
        assert _hint(one.stdout) == f"scrub redact --session {session[:8]}"
    by_project = sandbox.scrub("audit", "--project", "work")
    assert "--all" not in (_hint(by_project.stdout) or "")

    # Following the whole audit's hint copies; it rewrites nothing of Claude Code's.
    originals = {
        p: _digest(p) for p in demo_config.rglob("*") if p.is_file() and "scrubber" not in p.parts
    }
    done = sandbox.scrub(*str(_hint(whole.stdout)).split()[1:])
    assert done.returncode == 0, done.output
    assert {p: _digest(p) for p in originals} == originals
    copied = sandbox.scrub_home / "redacted" / "history.jsonl"
    assert copied.is_file() and copied.stat().st_mode & 0o777 == 0o600


def test_the_demo_does_not_end_on_a_hint_to_redact_data_that_is_gone(sandbox: Sandbox) -> None:
    demo = sandbox.scrub("audit", "--demo")
    assert demo.returncode == 1, demo.output
    assert _hint(demo.stdout) is None
    assert "Details: scrub audit --format json" in demo.stdout


@pytest.mark.parametrize(
    "command",
    [
        ("audit",),
        ("redact", "--all"),
        ("sessions",),
        ("retention",),
        ("archive", "--all", "--redact"),
    ],
)
def test_a_folder_that_is_not_a_config_dir_is_an_error_and_gets_no_scrubber_folder(
    sandbox: Sandbox, command: tuple[str, ...]
) -> None:
    not_config = sandbox.root / "home-like"
    (not_config / "Documents").mkdir(parents=True)
    (not_config / "notes.txt").write_text("hello\n")
    env = {"CLAUDE_CONFIG_DIR": str(not_config), "SCRUB_HOME": ""}
    done = sandbox.scrub(*command, env=env)
    assert done.returncode == 2, done.output
    assert "is not a Claude Code config directory" in done.stderr
    assert "hint:" in done.stderr
    assert not (not_config / "scrubber").exists()
    missing = sandbox.root / "typo"
    gone = sandbox.scrub(*command, env={"CLAUDE_CONFIG_DIR": str(missing), "SCRUB_HOME": ""})
    assert gone.returncode == 2, gone.output
    assert "no such folder" in gone.stderr
    assert not missing.exists()
