"""A demo config dir (Claude Code's layout) with its own CLAUDE_CONFIG_DIR, HOME and SCRUB_HOME
under tmp_path, and `scrub` run on it as a real process, in a new session without a controlling
terminal (as a hook or a cron job runs it). Shared by the archive and restore CLI tests."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.keys import generate_identity, write_identity_file
from scrubber.demo import build_demo_config, demo_manifest
from tests import warm_home
from tests.skips import INSTALL_AGE

AGE = shutil.which("age")
needs_age = pytest.mark.skipif(AGE is None, reason=INSTALL_AGE)
FULL = "e3e70682-c209-4cac-a29f-6fbed82c07cd"  # the demo session with every kind of side file
PROJECT = "-home-demo-work-shop-api"
SECRETS = tuple(s.value for s in demo_manifest().secrets)


@dataclass
class World:
    root: Path
    config: Path
    home: Path  # SCRUB_HOME

    @property
    def archives(self) -> Path:
        return self.home / "archives"

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_", "SCRUB_", "XDG_")) and k != "HOME"
        }
        env.update(
            CLAUDE_CONFIG_DIR=str(self.config),
            SCRUB_HOME=str(self.home),
            HOME=str(self.root / "home"),
            XDG_CONFIG_HOME=str(self.root / "xdg"),
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def run(
        self, *args: str, env: dict[str, str] | None = None, fsize: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        def limits() -> None:
            if fsize is not None:
                # A full disk, for real: writes past `fsize` fail with EFBIG (SIGXFSZ ignored).
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        environ = env or self.env()
        home = Path(environ.get("SCRUB_HOME", self.home))
        warm_home.seed(home, environ)
        done = subprocess.run(
            [sys.executable, "-m", "scrubber.cli", *args],
            env=environ,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened
            preexec_fn=limits if fsize is not None else None,
        )
        warm_home.keep(home)
        return done

    def run_many(self, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
        """Independent runs side by side (start-up dominates each one)."""
        with ThreadPoolExecutor(max_workers=4) as pool:
            return list(pool.map(lambda args: self.run(*args), commands))


@pytest.fixture
def world(tmp_path: Path) -> World:
    config = build_demo_config(tmp_path / "home")
    return World(root=tmp_path, config=config, home=tmp_path / "scrub-home")


def keygen(world: World, name: str = "key.txt") -> tuple[Path, str]:
    """A key pair made in-process (the keygen command has its own test): each process costs
    about half a second of start-up."""
    key = world.root / name
    identity = generate_identity()
    write_identity_file(key, identity, datetime.now(UTC))
    return key, identity.recipient().encode()


def archive_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def one_archive(world: World, session: str = FULL) -> Path:
    (found,) = (world.archives / PROJECT / session).glob("*.tar.gz.age")
    return found


def one_line_error(done: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("scrub: error:")]
    assert len(errors) == 1 and text in errors[0], done.stderr
    assert "Traceback" not in done.stderr
