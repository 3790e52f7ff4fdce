"""A config dir's side folder that can be read but not entered (mode 0644): its names list, but
nothing in it can be looked at. `scrub audit` must scan the sessions as before and say nothing
of it (it once failed with "Permission denied" there). Root enters any folder, so the CLI runs
as another user, in a user namespace of its own (`unshare -U`), over real files."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from scrubber.demo import fake_github_token
from tests.skips import INSTALL_UNSHARE, NO_USER_NAMESPACES

REPO = Path(__file__).resolve().parents[2]
SESSION = "11111111-2222-4333-8444-555555555555"


def _as_another_user(unshare: str) -> list[str]:
    return [unshare, "-U", "--map-user=1000", "--map-group=1000"]


def test_a_side_folder_that_can_be_read_but_not_entered_is_no_error() -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip(INSTALL_UNSHARE)
    if subprocess.run([*_as_another_user(unshare), "true"], capture_output=True).returncode:
        pytest.skip(NO_USER_NAMESPACES)
    # Under /tmp, open to the other user all the way down (pytest's own folders are 0700).
    root = Path(tempfile.mkdtemp(prefix="scrub-perm-"))
    try:
        config = root / "claude"
        project = config / "projects" / "-home-u-app"
        project.mkdir(parents=True)
        token = fake_github_token(random.Random(9))
        record = {
            "type": "user",
            "sessionId": SESSION,
            "uuid": "u-1",
            "message": {"role": "user", "content": f"use {token} for the deploy"},
        }
        (project / f"{SESSION}.jsonl").write_text(json.dumps(record) + "\n")
        (config / "session-env" / SESSION).mkdir(parents=True)
        for folder, _, files in os.walk(root):
            Path(folder).chmod(0o755)
            for name in files:
                (Path(folder) / name).chmod(0o644)
        (root / "home").mkdir(mode=0o777)
        (root / "home").chmod(0o777)
        (config / "session-env").chmod(0o644)  # read, not entered
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(REPO),
            "CLAUDE_CONFIG_DIR": str(config),
            "SCRUB_HOME": str(root / "home" / "scrub"),
            "HOME": str(root / "home"),
        }
        as_other = [*_as_another_user(unshare), sys.executable]
        probe = subprocess.run(
            [*as_other, "-c", "import scrubber.cli"], env=env, capture_output=True
        )
        if probe.returncode:
            pytest.skip("this Python or this checkout cannot be read by another user here")
        done = subprocess.run(
            [*as_other, "-m", "scrubber.cli", "audit", "--format", "json"],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr.decode(errors="replace")[-400:]
        report = json.loads(done.stdout)
        assert report["files_scanned"] == 1
        assert [f["kind"] for f in report["findings"]] == ["github-token"]
        assert token.encode() not in done.stdout + done.stderr
    finally:
        (root / "claude" / "session-env").chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)
