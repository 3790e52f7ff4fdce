"""`SCRUB_HOME=/x scrub install` pins /x (and a non-default config dir) in whatever it writes
that runs scrub later: the launchers (so the hook commands, the status line and the worker),
and the schedule. Claude Code runs them without the shell's SCRUB_HOME: they must still use
the home install wrote the policy to. A default install pins nothing. `--dry-run` lists exactly
the files a real run writes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from scrubber.hooks.spool import Spool
from scrubber.install.launchers import (
    LIVE_LAUNCHERS,
    Launchers,
    live_launcher,
    pinned_environment,
    pinned_in,
)
from scrubber.install.report import InstallOptions
from scrubber.install.run import install
from scrubber.install.scheduling import schedule_preview
from scrubber.install.settings import event_hook_commands, has_session_end_hook
from tests.conftest import Sandbox

# A folder name a shell or a Python literal would trip over, were it pasted in unquoted.
HOSTILE = "my 'scrub' \"home\" $(touch PWNED) ; `id` \\ é"


def _env(sandbox: Sandbox, **values: str) -> dict[str, str]:
    env = {"HOME": str(sandbox.home), "PATH": os.environ.get("PATH", "")}
    env.update(values)
    return env


def _launchers(home: Path) -> list[Path]:
    found = Launchers.for_home(home)
    return [
        found.session_end,
        found.status_line,
        *(live_launcher(home, event) for event in LIVE_LAUNCHERS),
    ]


def _run_as_claude(command: str, payload: str, env: dict[str, str], cwd: Path) -> None:
    """Run a registered command as Claude Code does: through a shell, with Claude Code's
    environment (here: no SCRUB_HOME, no SCRUB_POLICY, no CLAUDE_CONFIG_DIR)."""
    clean = {k: v for k, v in env.items() if not k.startswith(("SCRUB_", "CLAUDE_"))}
    done = subprocess.run(  # noqa: S602 - Claude Code runs hook commands through a shell
        command,
        shell=True,
        input=payload,
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**clean, "SCRUB_NO_WORKER": "1"},
    )
    assert (done.returncode, done.stderr) == (0, ""), done


def _transcript(config: Path, session: str) -> tuple[Path, str]:
    transcript = config / "projects" / "-w" / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"type": "user"}\n')
    payload = {"session_id": session, "transcript_path": str(transcript), "reason": "other"}
    return transcript, json.dumps(payload)


def test_a_custom_home_is_used_by_the_session_end_hook_without_scrub_home(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """QA's case: the default config dir, SCRUB_HOME set for the install command only."""
    home = tmp_path / HOSTILE
    env = _env(sandbox, SCRUB_HOME=str(home))
    config = sandbox.home / ".claude"
    config.mkdir()
    install(InstallOptions(status_line=True, live=True), env)
    _, payload = _transcript(config, "s1")
    [command] = has_session_end_hook(json.loads((config / "settings.json").read_text()))
    _run_as_claude(command, payload, env, tmp_path)
    assert [s.job.session_id for s in Spool(home).jobs()] == ["s1"]
    assert "session s1" in (home / "log" / "hook.log").read_text()
    assert not (config / "scrubber").exists()  # no second, empty home
    assert not list(tmp_path.rglob("PWNED"))
    assert all(pinned_in(path) == {"SCRUB_HOME": str(home)} for path in _launchers(home))


def test_a_custom_config_dir_and_home_reach_every_hook(sandbox: Sandbox, tmp_path: Path) -> None:
    config, home = tmp_path / "cfg dir", tmp_path / "scrub's home"
    config.mkdir()
    env = _env(sandbox, CLAUDE_CONFIG_DIR=str(config), SCRUB_HOME=str(home))
    install(InstallOptions(status_line=True, live=True), env)
    _, payload = _transcript(config, "s2")
    data = json.loads((config / "settings.json").read_text())
    [command] = has_session_end_hook(data)
    _run_as_claude(command, payload, env, tmp_path)
    assert [s.job.session_id for s in Spool(home).jobs()] == ["s2"]
    # The status line keeps its per-session state in the pinned home too.
    _run_as_claude(data["statusLine"]["command"] + " --inline", payload, env, tmp_path)
    assert (home / "state" / "status-line").is_dir()
    for event in LIVE_LAUNCHERS:
        [live] = event_hook_commands(data, event)
        _run_as_claude(live, "{}", env, tmp_path)  # exits 0 on a payload it does not know
    assert not (sandbox.home / ".claude").exists() and not (config / "scrubber").exists()
    pins = {"CLAUDE_CONFIG_DIR": str(config), "SCRUB_HOME": str(home)}
    assert all(pinned_in(path) == pins for path in _launchers(home))


def test_the_default_home_pins_nothing(sandbox: Sandbox) -> None:
    env = _env(sandbox)
    assert pinned_environment(env) == {}
    default = sandbox.home / ".claude"
    assert pinned_environment({**env, "SCRUB_HOME": str(default / "scrubber")}) == {}
    assert pinned_environment({**env, "CLAUDE_CONFIG_DIR": str(default)}) == {}
    default.mkdir()
    install(InstallOptions(live=True), env)
    assert all(pinned_in(path) == {} for path in _launchers(default / "scrubber"))
    text = (default / "scrubber" / "bin" / "scrubber-session-end").read_text()
    assert "os.environ" not in text


def test_pins_are_absolute_and_follow_the_config_dir_and_policy(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = _env(sandbox, SCRUB_HOME="rel/home", SCRUB_POLICY="p.yaml")
    assert pinned_environment(env) == {
        "SCRUB_HOME": str(tmp_path / "rel" / "home"),
        "SCRUB_POLICY": str(tmp_path / "p.yaml"),
    }
    # A config dir of its own: its home is pinned too, so no stray SCRUB_HOME can move it.
    assert pinned_environment(_env(sandbox, CLAUDE_CONFIG_DIR="cfg")) == {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"),
        "SCRUB_HOME": str(tmp_path / "cfg" / "scrubber"),
    }


def test_schedules_run_with_the_same_home(sandbox: Sandbox, tmp_path: Path) -> None:
    config = tmp_path / "cfg"
    env = _env(sandbox, CLAUDE_CONFIG_DIR=str(config), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    home = config / "scrubber"
    _, unit = schedule_preview("systemd", env, home)
    assert f"Environment=SCRUB_HOME={home}" in unit
    assert f"Environment=CLAUDE_CONFIG_DIR={config}" in unit
    _, line = schedule_preview("cron", {**env, "SCRUB_HOME": str(tmp_path / "x y")}, home)
    assert f"SCRUB_HOME='{tmp_path / 'x y'}'" in line


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def _said(steps: list[str], path: Path) -> bool:
    return any(str(path) in step for step in steps)


@pytest.mark.parametrize("live", [False, True])
def test_a_dry_run_lists_exactly_what_a_real_run_writes(
    sandbox: Sandbox, tmp_path: Path, live: bool
) -> None:
    config, home = tmp_path / "cfg", tmp_path / "home"
    config.mkdir()
    (config / "settings.json").write_text('{"model": "opus"}\n')
    env = _env(sandbox, CLAUDE_CONFIG_DIR=str(config), SCRUB_HOME=str(home))
    options = InstallOptions(live=live, status_line=True)
    dry = install(InstallOptions(live=live, status_line=True, dry_run=True), env)
    assert not home.exists()
    install(options, env)
    written = _files(home) | {config / "settings.json"}
    for path in written:
        where = path.parent if path.parent.name == "backups" else path  # named by the time
        assert _said(dry.done, where), (path, dry.done)
    for step in dry.done:
        if step.startswith("would write"):
            named = [p for p in written if str(p) in step]
            assert named, step  # nothing listed that the real run does not write
    live_launchers = [live_launcher(home, event) for event in LIVE_LAUNCHERS]
    assert all(_said(dry.done, p) == live for p in live_launchers)
    assert _said(dry.done, home / "state" / "live.json")
