"""scrubber.install: settings merges that lose nothing, twice = once, exact uninstall, refusals."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scrubber.archive.keys import generate_identity
from scrubber.errors import ConfigError, KeyMaterialError, UsageError
from scrubber.hooks.spool import Spool
from scrubber.install.launchers import Launchers, wrapped_command
from scrubber.install.record import read_record
from scrubber.install.report import InstallOptions
from scrubber.install.run import _set_policy_days, install, uninstall
from scrubber.install.settings import (
    STATUS_LINE_REFRESH_SECONDS,
    TAKE_OVER_DAYS,
    add_session_end_hook,
    has_session_end_hook,
    install_status_line,
    remove_session_end_hook,
    remove_status_line,
    restore_cleanup_days,
    set_cleanup_days,
)

OURS = "/venv/bin/python -S /home/u/.claude/scrubber/bin/scrubber-session-end"
OUR_STATUS = "/venv/bin/python -S /home/u/.claude/scrubber/bin/scrubber-status-line"


# -- pure merges ------------------------------------------------------------------------------


def user_settings() -> dict[str, Any]:
    return {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "notify-send bye"}]}],
        },
        "env": {"FOO": "1"},
    }


def test_adding_keeps_every_key_and_the_user_hooks() -> None:
    before = user_settings()
    after = add_session_end_hook(before, OURS)
    assert before == user_settings()  # not mutated
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        k: v for k, v in before.items() if k != "hooks"
    }
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert after["hooks"]["SessionEnd"] == [
        *before["hooks"]["SessionEnd"],
        {"hooks": [{"type": "command", "command": OURS}]},
    ]
    assert list(after) == list(before)  # key order kept


def test_adding_twice_is_adding_once_and_updates_in_place() -> None:
    once = add_session_end_hook(user_settings(), OURS)
    assert add_session_end_hook(once, OURS) == once
    timed = add_session_end_hook(once, OURS, timeout=20)
    assert timed["hooks"]["SessionEnd"][1]["hooks"][0]["timeout"] == 20
    assert len(timed["hooks"]["SessionEnd"]) == 2
    untimed = add_session_end_hook(timed, OURS)
    assert untimed == once


def test_duplicate_handlers_of_ours_collapse_to_one() -> None:
    settings = {
        "hooks": {
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": OURS}]},
                {"hooks": [{"type": "command", "command": "x"}, {"type": "command", "command": OURS + " "}]},
                {"hooks": []},  # the user's own empty group is left alone
            ]
        }
    }  # fmt: skip
    result = add_session_end_hook(settings, OURS)
    assert has_session_end_hook(result) == [OURS]
    assert result["hooks"]["SessionEnd"][1:] == [
        {"hooks": [{"type": "command", "command": "x"}]},
        {"hooks": []},
    ]


def test_removing_takes_only_ours_and_what_we_created() -> None:
    added = add_session_end_hook(user_settings(), OURS)
    assert remove_session_end_hook(added) == user_settings()
    fresh = add_session_end_hook({"model": "x"}, OURS)
    assert remove_session_end_hook(fresh) == {"model": "x"}
    kept = remove_session_end_hook(
        add_session_end_hook({"hooks": {}}, OURS), drop_empty_hooks=False
    )
    assert kept == {"hooks": {}}


@pytest.mark.parametrize(
    "settings",
    [{"hooks": []}, {"hooks": {"SessionEnd": {"a": 1}}}],
)
def test_shapes_we_do_not_know_are_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="scrubber does not change it"):
        add_session_end_hook(settings, OURS)


def make_status(previous: str | None) -> str:
    return OUR_STATUS + (f" --wrap '{previous}'" if previous else "")


def test_status_line_sets_a_refresh_interval_and_keeps_the_users_own() -> None:
    """Claude Code runs the status line only on events unless refreshInterval is set: without
    it a secret read just before an answer showed only at the next event (issue 14, item 5)."""
    fresh, _ = install_status_line({}, make_status)
    assert fresh["statusLine"]["refreshInterval"] == STATUS_LINE_REFRESH_SECONDS
    theirs, _ = install_status_line(
        {"statusLine": {"type": "command", "command": "~/sl.sh", "refreshInterval": 30}},
        make_status,
    )
    assert theirs["statusLine"]["refreshInterval"] == 30
    # An install from before this setting: reinstalling adds it, once.
    older = {"statusLine": {"type": "command", "command": OUR_STATUS, "padding": 0}}
    upgraded, none = install_status_line(older, make_status)
    assert none is None
    assert upgraded["statusLine"]["refreshInterval"] == STATUS_LINE_REFRESH_SECONDS
    assert install_status_line(upgraded, make_status)[0] == upgraded
    kept, _ = install_status_line(
        {"statusLine": {**older["statusLine"], "refreshInterval": 2}}, make_status
    )
    assert kept["statusLine"]["refreshInterval"] == 2


def test_status_line_wraps_the_existing_one_and_keeps_its_options() -> None:
    settings = {
        "statusLine": {"type": "command", "command": "~/sl.sh", "padding": 2, "refreshInterval": 5}
    }
    result, previous = install_status_line(settings, make_status)
    assert previous == settings["statusLine"]
    assert result["statusLine"] == {
        "type": "command", "command": make_status("~/sl.sh"), "padding": 2, "refreshInterval": 5,
    }  # fmt: skip
    again, none = install_status_line(result, make_status)
    assert again == result and none is None  # ours already: nothing wrapped twice
    assert remove_status_line(result, previous) == settings
    assert remove_status_line(result, None, known=False) == settings  # record lost


def test_status_line_without_one_and_user_replacements() -> None:
    result, previous = install_status_line({}, make_status)
    assert previous is None
    assert result == {
        "statusLine": {
            "type": "command", "command": OUR_STATUS, "padding": 0,
            "refreshInterval": STATUS_LINE_REFRESH_SECONDS,
        }
    }  # fmt: skip
    assert remove_status_line(result, None) == {}
    theirs = {"statusLine": {"type": "command", "command": "mine"}}
    assert remove_status_line(theirs, None) == theirs  # replaced since: kept
    with pytest.raises(ConfigError, match="statusLine"):
        install_status_line({"statusLine": "echo x"}, make_status)


def test_wrapped_command_round_trips_any_quoting() -> None:
    for previous in ["bash -c 'echo \"a b\"; printf %s $HOME'", "x'y", "~/bin/sl --flag=1"]:
        words = Launchers("/py", "/root", Path("/h/se"), Path("/h/scrubber-status-line"))
        assert wrapped_command(words.status_line_command(previous)) == previous


def test_cleanup_days_restore_only_when_still_ours() -> None:
    raised = set_cleanup_days({"cleanupPeriodDays": 45}, 99999)
    record = {"had_key": True, "previous": 45, "set": 99999}
    assert restore_cleanup_days(raised, record) == {"cleanupPeriodDays": 45}
    assert restore_cleanup_days({"cleanupPeriodDays": 10}, record) == {"cleanupPeriodDays": 10}
    assert restore_cleanup_days(raised, {"had_key": False, "set": 99999}) == {}


def test_policy_days_fill_the_template_line_only() -> None:
    from scrubber.policy.load import read_template

    text = read_template("default")
    filled = _set_policy_days(text, 45)
    assert filled is not None and "\n  days: 45\n" in filled
    assert filled.count("\n") == text.count("\n")
    assert _set_policy_days("version: 1\n", 45) is None


# -- install and uninstall on files -----------------------------------------------------------


class Env(dict[str, str]):
    @property
    def config(self) -> Path:
        return Path(self["CLAUDE_CONFIG_DIR"])

    @property
    def home(self) -> Path:
        return Path(self["SCRUB_HOME"])

    @property
    def settings(self) -> Path:
        return self.config / "settings.json"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    (tmp_path / "config").mkdir()
    return Env(
        CLAUDE_CONFIG_DIR=str(tmp_path / "config"),
        SCRUB_HOME=str(tmp_path / "config" / "scrubber"),
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        PATH=os.environ.get("PATH", ""),
    )


ODD = (
    '{"model":"opus","statusLine":{"type":"command","command":"echo \\u00e9t\\u00e9","padding":1},'
    '\n\n    "hooks" : {"SessionEnd":[{"hooks":[{"type":"command","command":"say bye"}]}],'
    '"Stop":[]},   "zzz": [1,2.50,true,null] }'
)


def test_install_twice_is_once_and_uninstall_restores_the_exact_bytes(env: Env) -> None:
    env.settings.write_text(ODD)
    env.settings.chmod(0o640)
    first = install(InstallOptions(status_line=True), env)
    assert first.backup is not None and first.backup.read_text() == ODD
    written = env.settings.read_text()
    data = json.loads(written)
    assert data["model"] == "opus" and data["zzz"] == [1, 2.5, True, None]
    assert data["hooks"]["Stop"] == []
    assert len(has_session_end_hook(data)) == 1
    assert wrapped_command(data["statusLine"]["command"]) == "echo été"
    assert data["statusLine"]["padding"] == 1
    assert stat.S_IMODE(env.settings.stat().st_mode) == 0o640
    second = install(InstallOptions(status_line=True), env)
    assert second.backup is None
    assert env.settings.read_text() == written  # twice = once, not even rewritten
    uninstall(env)
    assert env.settings.read_text() == ODD
    assert not (env.home / "bin").exists()
    assert first.backup.exists()  # the backup is kept


def test_uninstall_keeps_what_the_user_added_since(env: Env) -> None:
    env.settings.write_text(json.dumps(user_settings()))
    install(InstallOptions(status_line=True), env)
    data = json.loads(env.settings.read_text())
    data["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "later"}]})
    data["theme"] = "dark"
    env.settings.write_text(json.dumps(data, indent=4))
    uninstall(env)
    after = json.loads(env.settings.read_text())
    expected = user_settings()
    expected["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "later"}]})
    expected["theme"] = "dark"
    assert after == expected  # no statusLine: there was none before


def test_no_settings_file_is_created_and_removed_again(env: Env) -> None:
    report = install(InstallOptions(), env)
    assert report.backup is None
    assert has_session_end_hook(json.loads(env.settings.read_text()))
    uninstall(env)
    assert not env.settings.exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"model": "opus", "feedbackSurveyRate": 1e999}', "cannot be written back"),
        ('{"rate": NaN}', "cannot be written back"),
        ('{"deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep"),
        ('{"n": ' + "9" * 5000 + "}", "a number too long"),
    ],
)
def test_settings_json_cannot_write_back_is_refused_untouched(
    env: Env, text: str, said: str
) -> None:
    # Written back, 1e999 would become `Infinity`, which Claude Code's JSON.parse rejects.
    env.settings.write_text(text)
    with pytest.raises(ConfigError) as caught:
        install(InstallOptions(), env)
    assert said in caught.value.message
    assert env.settings.read_text() == text


def test_a_malformed_settings_file_is_refused_and_nothing_is_written(env: Env) -> None:
    broken = '{"model": "opus",\n  "hooks": {]\n}'
    env.settings.write_text(broken)
    with pytest.raises(ConfigError) as caught:
        install(InstallOptions(status_line=True), env)
    assert "line 2 column" in caught.value.message and "not valid JSON" in caught.value.message
    assert "never rewrites" in (caught.value.hint or "")
    assert env.settings.read_text() == broken
    assert not env.home.exists()
    with pytest.raises(ConfigError):
        uninstall(env)
    assert env.settings.read_text() == broken


@pytest.mark.parametrize("text", ["[1, 2]", '"x"', "\ufeff{}"])
def test_other_unreadable_settings_are_refused(env: Env, text: str) -> None:
    env.settings.write_text(text)
    with pytest.raises(ConfigError, match=r"settings\.json"):
        install(InstallOptions(), env)
    assert env.settings.read_text() == text


def test_dry_run_shows_the_diff_and_writes_nothing(env: Env) -> None:
    env.settings.write_text('{"model": "opus"}\n')
    report = install(InstallOptions(status_line=True, dry_run=True, schedule="systemd"), env)
    assert "+" in report.diff and "scrubber-session-end" in report.diff
    assert '"model": "opus"' in report.diff
    assert any("systemd" in title for title, _ in report.previews)
    assert env.settings.read_text() == '{"model": "opus"}\n'
    assert not env.home.exists()
    assert not (Path(env["XDG_CONFIG_HOME"]) / "systemd").exists()


def test_a_symlinked_settings_file_is_written_through(env: Env, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}')
    env.settings.symlink_to(dotfiles)
    install(InstallOptions(), env)
    assert env.settings.is_symlink()
    assert has_session_end_hook(json.loads(dotfiles.read_text()))


def test_session_end_timeout_is_bounded(env: Env) -> None:
    with pytest.raises(UsageError, match="1 to 60"):
        install(InstallOptions(session_end_timeout=61), env)
    install(InstallOptions(session_end_timeout=30), env)
    [group] = json.loads(env.settings.read_text())["hooks"]["SessionEnd"]
    assert group["hooks"][0]["timeout"] == 30


def test_the_policy_is_written_from_the_template_with_the_choices(env: Env) -> None:
    recipient = generate_identity().recipient().encode()
    install(InstallOptions(recipients=(recipient,), on_session_end=("archive", "redact-copy")), env)
    policy_text = (env.home / "policy.yaml").read_text()
    assert recipient in policy_text and "on_session_end: [archive, redact-copy]" in policy_text
    assert "# scrubber policy" in policy_text  # the commented template, not a YAML dump
    assert stat.S_IMODE((env.home / "policy.yaml").stat().st_mode) == 0o600
    assert json.loads((env.home / "state" / "allowlist.json").read_text())["format"] == 1
    report = install(InstallOptions(recipients=(recipient,)), env)
    assert any("was not changed" in note for note in report.notes)


def test_bad_choices_are_refused_before_anything_is_written(env: Env) -> None:
    with pytest.raises(KeyMaterialError):
        install(InstallOptions(recipients=("AGE-SECRET-KEY-1" + "Q" * 58,)), env)
    with pytest.raises(ConfigError, match="recipients"):
        install(InstallOptions(on_session_end=("archive",)), env)
    with pytest.raises(UsageError, match="unknown on-session-end"):
        install(InstallOptions(on_session_end=("shred",)), env)
    assert not env.settings.exists() and not env.home.exists()


def test_take_over_cleanup_copies_the_period_then_raises_it_and_uninstall_restores(
    env: Env,
) -> None:
    env.settings.write_text('{"cleanupPeriodDays": 45}')
    report = install(InstallOptions(take_over_cleanup=True), env)
    assert json.loads(env.settings.read_text())["cleanupPeriodDays"] == TAKE_OVER_DAYS
    assert "\n  days: 45\n" in (env.home / "policy.yaml").read_text()
    assert any("raised from 45" in note for note in report.notes)
    uninstall(env)
    assert env.settings.read_text() == '{"cleanupPeriodDays": 45}'


def test_schedules_are_installed_and_removed(env: Env) -> None:
    calls: list[list[str]] = []
    crontab = {"text": "MAILTO=me\n"}

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        if argv == ["crontab", "-l"]:
            return subprocess.CompletedProcess(argv, 0, crontab["text"], "")
        if argv == ["crontab", "-"]:
            crontab["text"] = kwargs["input"]
            return subprocess.CompletedProcess(argv, 0, "", "")
        return subprocess.CompletedProcess(argv, 0, "", "")

    install(InstallOptions(schedule="systemd"), env, run=run)
    unit_dir = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"
    assert (unit_dir / "scrub-retention.timer").exists()
    assert "retention --apply" in (unit_dir / "scrub-retention.service").read_text()
    uninstall(env, run=run)
    assert not (unit_dir / "scrub-retention.timer").exists()

    bin_dir = Path(env["HOME"]) / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "crontab").write_text("#!/bin/sh\n")
    (bin_dir / "crontab").chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    install(InstallOptions(schedule="cron"), env, run=run)
    assert crontab["text"].startswith("MAILTO=me\n") and "# scrubber-retention" in crontab["text"]
    uninstall(env, run=run)
    assert crontab["text"] == "MAILTO=me\n"


def test_cron_without_crontab_is_refused_up_front(env: Env) -> None:
    env["PATH"] = "/nonexistent"
    with pytest.raises(UsageError, match="crontab"):
        install(InstallOptions(schedule="cron"), env)
    assert not env.settings.exists()


def test_the_launchers_run_the_hook_fast_and_queue_the_job(env: Env) -> None:
    install(InstallOptions(status_line=True), env)
    transcript = env.config / "projects" / "p" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"type": "user"}\n')
    [command] = has_session_end_hook(json.loads(env.settings.read_text()))
    payload = json.dumps({"session_id": "s1", "transcript_path": str(transcript)})

    def run_as_claude(command: str, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S602 - Claude Code runs hook commands through a shell
            command,
            shell=True,
            input=payload,
            capture_output=True,
            text=True,
            check=False,
            env={**env, **extra},
        )

    done = run_as_claude(command, {"SCRUB_NO_WORKER": "1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert [s.job.session_id for s in Spool(env.home).jobs()] == ["s1"]
    status = json.loads(env.settings.read_text())["statusLine"]["command"]
    done = run_as_claude(status + " --inline", {})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")  # clean transcript
    record = read_record(env.home)
    assert record["python"] == sys.executable


def test_settings_written_under_umask_002_make_0700_folders(tmp_path: Path) -> None:
    from scrubber.install.settings_file import write_settings

    target = tmp_path / "home" / ".claude" / "settings.json"
    previous = os.umask(0o002)
    try:
        write_settings(target, "{}\n")
    finally:
        os.umask(previous)
    assert target.read_text() == "{}\n"
    for folder in (tmp_path / "home", tmp_path / "home" / ".claude"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
