"""`scrub doctor` notices hooks that run scrub with another home than the one it checks: a
launcher pinned to a SCRUB_HOME the doctor's environment does not name, and a launcher from
before homes were pinned, written for a home that is not the default."""

from __future__ import annotations

from pathlib import Path

from scrubber.cli.doctor_launchers import check_launcher_homes
from scrubber.cli.doctor_model import Level
from scrubber.install.launchers import Launchers
from scrubber.install.report import InstallOptions
from scrubber.install.run import install
from tests.conftest import Sandbox


def test_doctor_without_scrub_home_sees_the_hooks_use_another_home(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    config, home = tmp_path / "cfg", tmp_path / "installed home"
    config.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config), "SCRUB_HOME": str(home), "HOME": str(sandbox.home)}
    install(InstallOptions(status_line=True, live=True), env)
    assert check_launcher_homes(config, home) == []  # the home the hooks use: nothing to say
    [check] = check_launcher_homes(config, config / "scrubber")  # one for all four launchers
    assert check.level is Level.WARN and str(home) in check.message
    assert "built-in policy" not in check.message
    assert check.fix is not None and f"SCRUB_HOME='{home}' scrub doctor" in check.fix
    (home / "policy.yaml").unlink()
    [check] = check_launcher_homes(config, config / "scrubber")
    assert "built-in policy" in check.message


def test_doctor_sees_a_launcher_that_does_not_record_its_home(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    config, home = tmp_path / "cfg", tmp_path / "x"
    config.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config), "SCRUB_HOME": str(home), "HOME": str(sandbox.home)}
    install(InstallOptions(), env)
    launchers = Launchers.for_home(home)  # as installs before the fix wrote them: no pins
    launchers.session_end.write_text(launchers.session_end_text())
    [check] = check_launcher_homes(config, config / "scrubber")
    assert check.level is Level.WARN and "do not record" in check.message
    assert check.fix is not None and f"SCRUB_HOME={home} scrub install" in check.fix
