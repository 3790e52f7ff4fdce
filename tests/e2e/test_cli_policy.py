"""`scrub policy init` and `scrub policy show` (issue 14, item 22), through the real entry point
in process, on files in a sandbox."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scrubber.policy.load import read_template
from tests.conftest import CliResult, Sandbox

Scrub = Callable[..., CliResult]
INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_init_writes_the_template_privately_and_never_overwrites_silently(
    sandbox: Sandbox, scrub_cli: Scrub
) -> None:
    (sandbox.config / "projects").mkdir(parents=True)
    policy = sandbox.scrub_home / "policy.yaml"
    done = scrub_cli("policy", "init")
    assert done.returncode == 0, done.stderr
    assert policy.read_text() == read_template("default")
    assert (_mode(policy), _mode(sandbox.scrub_home)) == (0o600, 0o700)
    policy.write_text(policy.read_text() + "# my own note\n")
    mine = policy.read_text()
    again = scrub_cli("policy", "init", "--template", "strict")
    assert again.returncode == 2
    assert "already exists" in again.stderr and "--force" in again.stderr
    assert policy.read_text() == mine
    forced = scrub_cli("policy", "init", "--template", "strict", "--force")
    assert forced.returncode == 0, forced.stderr
    assert policy.read_text() == read_template("strict")
    (backup,) = sandbox.scrub_home.glob("policy.yaml.*.bak")
    assert backup.read_text() == mine and _mode(backup) == 0o600
    assert str(backup) in forced.stdout
    logged = [json.loads(line) for line in (sandbox.scrub_home / "log" / "activity.jsonl").open()]
    assert [r["action"] for r in logged] == ["policy-init", "policy-init"]
    assert logged[-1]["backup"] == str(backup)


def test_init_of_the_vps_template_says_what_it_still_needs(
    sandbox: Sandbox, scrub_cli: Scrub
) -> None:
    (sandbox.config / "projects").mkdir(parents=True)
    done = scrub_cli("policy", "init", "--template", "vps")
    assert done.returncode == 0
    assert "does not load yet" in done.stderr and "archive.recipients" in done.stderr
    assert (sandbox.scrub_home / "policy.yaml").read_text() == read_template("vps")


def test_init_refuses_outside_a_claude_code_config_dir(sandbox: Sandbox, scrub_cli: Scrub) -> None:
    done = scrub_cli("policy", "init")
    assert done.returncode == 2
    assert "not a Claude Code config directory" in done.stderr
    assert not sandbox.scrub_home.exists()
    assert scrub_cli("policy", "show").returncode == 2


def test_force_replaces_a_planted_link_without_following_it(
    sandbox: Sandbox, scrub_cli: Scrub
) -> None:
    (sandbox.config / "projects").mkdir(parents=True)
    sandbox.scrub_home.mkdir(mode=0o700)
    elsewhere = sandbox.root / "someone-elses.yaml"
    elsewhere.write_text("version: 1\n")
    (sandbox.scrub_home / "policy.yaml").symlink_to(elsewhere)
    refused = scrub_cli("policy", "init")
    assert refused.returncode == 2  # a link is "something there" too
    done = scrub_cli("policy", "init", "--force")
    assert done.returncode == 0, done.stderr
    policy = sandbox.scrub_home / "policy.yaml"
    assert not policy.is_symlink() and policy.read_text() == read_template("default")
    assert elsewhere.read_text() == "version: 1\n"
    (backup,) = sandbox.scrub_home.glob("policy.yaml.*.bak")
    assert backup.is_symlink() and backup.readlink() == elsewhere


def _settings(result: CliResult) -> dict[str, dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    return {s["key"]: s for s in json.loads(result.stdout)["settings"]}


def test_show_says_where_each_value_came_from(
    demo_config: Path, sandbox: Sandbox, scrub_cli: Scrub
) -> None:
    token = "".join(["hc", "tok", "9f3a77c1d2e4"])  # a credential-shaped path, built here
    sandbox.scrub_home.mkdir(mode=0o700)
    policy = sandbox.scrub_home / "policy.yaml"
    policy.write_text(
        "version: 1\n"
        "detection:\n"
        "  disabled_detectors: [jwt]\n"
        "retention:\n"
        "  trash_days: 3\n"
        f"  healthcheck_url: https://hc.example.org/ping/{token}\n"
        "pins:\n"
        f"  sessions: [{INFRA}]\n"
    )
    assert scrub_cli("pin", SHOP[:8]).returncode == 0
    (demo_config / "settings.json").write_text('{"cleanupPeriodDays": 12}\n')
    shown = scrub_cli("policy", "show", "--format", "json")
    settings = _settings(shown)
    assert token not in shown.stdout
    file_origin = {"kind": "policy file", "path": str(policy), "note": None}
    assert settings["version"]["origin"] == {**file_origin, "line": 1}
    assert settings["detection.disabled_detectors"] == {
        "key": "detection.disabled_detectors",
        "value": ["jwt"],
        "origin": {**file_origin, "line": 3},
    }
    assert settings["retention.trash_days"]["value"] == 3
    assert settings["retention.trash_days"]["origin"]["line"] == 5
    assert settings["retention.healthcheck_url"]["origin"]["line"] == 6
    assert settings["detection.scan_side_files"]["origin"]["kind"] == "default"
    assert settings["retention.days"]["value"] == 12
    assert settings["retention.days"]["origin"]["kind"] == "Claude Code settings"
    assert settings["retention.days"]["origin"]["path"] == str(demo_config / "settings.json")
    pins = settings["pins.sessions"]
    assert pins["value"] == [INFRA, SHOP]
    assert [item["origin"]["kind"] for item in pins["items"]] == ["policy file", "scrub pin"]
    assert pins["items"][1]["origin"]["path"] == str(sandbox.scrub_home / "state" / "pins.json")
    text = scrub_cli("policy", "show")
    assert text.returncode == 0 and token not in text.output
    lines = text.stdout.splitlines()
    assert lines[0] == f"# the policy in force: {policy} (from $SCRUB_HOME/policy.yaml)"
    assert any(line.startswith("  trash_days: 3 ") and line.endswith("# line 5") for line in lines)
    assert any(f'- "{SHOP}"' in line and "# scrub pin (" in line for line in lines)
    assert any("days: 12" in line and "cleanupPeriodDays in" in line for line in lines)


def test_show_of_the_defaults_and_of_a_flag_policy(
    demo_config: Path, sandbox: Sandbox, scrub_cli: Scrub
) -> None:
    settings = _settings(scrub_cli("policy", "show", "--format", "json", "-q"))
    assert {s["origin"]["kind"] for k, s in settings.items() if k != "retention.days"} == {
        "default"
    }
    assert settings["retention.days"]["value"] == 30  # Claude Code's own default
    assert settings["retention.days"]["origin"]["path"] is None
    assert settings["archive.destination"]["value"] == str(sandbox.scrub_home / "archives")
    other = sandbox.root / "other.yaml"
    other.write_text("version: 1\nretention:\n  days: 9\n")
    flagged = _settings(scrub_cli("policy", "show", "--policy", other, "--format", "json"))
    assert flagged["retention.days"]["value"] == 9
    assert flagged["retention.days"]["origin"] == {
        "kind": "policy file", "path": str(other), "line": 3, "note": None,
    }  # fmt: skip
    broken = sandbox.root / "broken.yaml"
    broken.write_text("version: 1\nretention:\n  dayz: 9\n")
    refused = scrub_cli("policy", "show", "--policy", broken)
    assert refused.returncode == 2 and "dayz" in refused.stderr
