"""Issue 14, item 17: `--session` and `--project` repeat and every one counts (audit, redact,
archive, sessions); a single-value option given twice and an empty value are usage errors
(exit 2) naming the option, never "the last one" or "every session". And --quiet (item 22):
errors, warnings, exit codes and JSON stay; the rest goes.

Through the real entry point, in process, on the demo config dir: sessions INFRA (project
infra) and SHOP, SHOP_TOO (project shop-api)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scrubber.demo import build_demo_config
from tests.conftest import CliResult, Sandbox

INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
SHOP_TOO = "896642b1-70e3-48bd-a4a9-8afd111475f2"

Scrub = Callable[..., CliResult]


def _audited(result: CliResult) -> set[str]:
    return {s["session_id"] for s in json.loads(result.stdout)["sessions"]}


def test_audit_honours_every_session_and_project(demo_config: Path, scrub_cli: Scrub) -> None:
    two = scrub_cli("audit", "--session", INFRA[:8], "--session", SHOP[:8], "--format", "json")
    assert two.returncode == 1  # the demo plants secrets in both
    assert _audited(two) == {INFRA, SHOP}
    projects = scrub_cli("audit", "--project", "infra", "--project", "shop-api", "--format", "json")
    assert _audited(projects) == {INFRA, SHOP, SHOP_TOO}
    # Both kinds of selection at once: the named sessions that are in one of the projects;
    # the hint repeats the whole selection, never `--all`.
    both = scrub_cli("audit", "--session", INFRA[:8], "--session", SHOP[:8], "--project", "infra")
    assert (
        f"(session {INFRA[:8]}" in both.stdout and SHOP[:8] not in both.stdout.split("Redacted")[0]
    )
    assert f"scrub redact --session {INFRA[:8]} --session {SHOP[:8]}" in both.stdout


def test_a_project_that_matches_nothing_is_an_error_not_ignored(
    demo_config: Path, scrub_cli: Scrub
) -> None:
    for command in (("audit",), ("sessions",), ("archive", "--redact")):
        done = scrub_cli(*command, "--project", "infra", "--project", "no-such-project")
        assert done.returncode == 2, command
        assert "no session matches --project no-such-project" in done.stderr, command


def test_redact_copies_every_session_named(
    demo_config: Path, sandbox: Sandbox, scrub_cli: Scrub
) -> None:
    done = scrub_cli(
        "redact", "--session", INFRA[:8], "--session", SHOP_TOO[:8], "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    sources = {Path(f["source"]).stem for f in json.loads(done.stdout)["files"]}
    assert {INFRA, SHOP_TOO} <= sources and SHOP not in sources
    copies = sandbox.scrub_home / "redacted" / "projects"
    sessions = {p.stem for p in copies.glob("*/*.jsonl") if not p.name.startswith("agent-")}
    assert sessions == {INFRA, SHOP_TOO}


def test_archive_and_sessions_take_several_projects(
    demo_config: Path, scrub_cli: Scrub, sandbox: Sandbox
) -> None:
    listed = scrub_cli(
        "sessions", "--project", "infra", "--project", "shop-api", "--format", "json"
    )
    assert {s["session_id"] for s in json.loads(listed.stdout)["sessions"]} == {
        INFRA, SHOP, SHOP_TOO,
    }  # fmt: skip
    listed = scrub_cli("sessions", "--project", "infra", "--format", "json")
    assert {s["session_id"] for s in json.loads(listed.stdout)["sessions"]} == {INFRA}
    done = scrub_cli(
        "archive", "--redact", "--project", "infra", "--project", "shop", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    archives = json.loads(done.stdout)["archives"]
    assert {a["session_id"] for a in archives} == {INFRA, SHOP, SHOP_TOO}
    assert all(Path(a["path"]).is_file() and a["redacted"] for a in archives)
    assert all(Path(a["path"]).is_relative_to(sandbox.scrub_home) for a in archives)
    listed = scrub_cli(
        "archives", "list", "--session", INFRA[:8], "--session", SHOP[:8], "--format", "json"
    )
    assert {a["session_id"] for a in json.loads(listed.stdout)["archives"]} == {INFRA, SHOP}


@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--format", "json", "--format", "sarif"),
        ("audit", "--since", "7d", "--since", "70d"),
        ("retention", "--days", "7", "--days", "70"),
        ("sessions", "--sort", "size", "--sort", "recent"),
        ("redact", "--all", "--all"),
        ("archive", "--older-than", "7d", "--older-than", "1d", "--redact"),
    ],
)
def test_a_single_value_option_given_twice_is_refused(
    demo_config: Path, sandbox: Sandbox, scrub_cli: Scrub, args: tuple[str, ...]
) -> None:
    done = scrub_cli(*args)
    assert done.returncode == 2
    assert f"{args[1]} was given 2 times" in done.stderr
    assert done.stdout == ""
    assert not sandbox.scrub_home.exists()  # refused before anything ran


@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--session", ""),
        ("audit", "--project", ""),
        ("redact", "--session", ""),
        ("archive", "--redact", "--project", ""),
        ("archive", "--redact", ""),
        ("sessions", "--project", " "),
        ("pin", ""),
        ("audit", ""),
    ],
)
def test_an_empty_value_never_means_every_session(
    demo_config: Path, sandbox: Sandbox, scrub_cli: Scrub, args: tuple[str, ...]
) -> None:
    done = scrub_cli(*args)
    assert done.returncode == 2, done.output
    assert "was given an empty value" in done.stderr
    assert not sandbox.scrub_home.exists()


def test_quiet_keeps_errors_exit_codes_and_json_only(demo_config: Path, scrub_cli: Scrub) -> None:
    for spelling in (("audit", "-q"), ("-q", "audit")):
        quiet = scrub_cli(*spelling)
        assert quiet.returncode == 1, spelling  # the findings still say so
        assert quiet.stdout == "", spelling
    as_json = scrub_cli("audit", "--quiet", "--format", "json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["findings"]
    failed = scrub_cli("audit", "-q", "--session", "ffffffff")
    assert failed.returncode == 2
    assert "no session" in failed.stderr and "scrub: error:" in failed.stderr
    listed = scrub_cli("sessions", "-q")
    assert (listed.returncode, listed.stdout) == (0, "")
    assert scrub_cli("sessions").stdout.startswith("CLAUDE SWEEP")


def test_quiet_keeps_what_a_command_is_for(sandbox: Sandbox, scrub_cli: Scrub) -> None:
    key = scrub_cli("keygen", "-q")
    assert key.returncode == 0
    assert key.stdout.startswith("# created:") and "AGE-SECRET-KEY-1" in key.stdout
    script = scrub_cli("completion", "bash", "--quiet")
    assert "complete -o default -F" in script.stdout
    # Warnings stay: a transcript others can read is worth a line even under --quiet.
    build_demo_config(sandbox.config.parent)
    next(sandbox.config.glob("projects/*/*.jsonl")).chmod(0o644)
    warned = scrub_cli("audit", "-q")
    assert warned.returncode == 1
    assert warned.stdout == "" and "warning:" in warned.stderr and "chmod 600" in warned.stderr
    demo = scrub_cli("audit", "--demo", "-q")
    assert demo.returncode == 1
    assert "synthetic sessions" not in demo.stderr  # the informational line went
    assert demo.stdout == "" and demo.stderr == ""
