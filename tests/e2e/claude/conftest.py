"""Fixtures for end-to-end tests with the real Claude Code CLI, offline.

`claude` is found at `$SCRUB_CLAUDE_BIN` (what `.ci/install-claude.sh` prints) or on PATH; when
it is absent every test here skips, so a clone without Node passes. Each test gets a `Box`: temp
`CLAUDE_CONFIG_DIR`, `HOME`, `SCRUB_HOME`, `XDG_*` and project folder, a fake Messages API
(`fake_api.py`) the CLI talks to through `ANTHROPIC_BASE_URL`, and helpers to run `claude -p`
and `scrub` as real processes with that environment. Nothing here reads or writes a real
`~/.claude`, and no variable of the caller's that could point Claude Code elsewhere (another
provider, a proxy, a real key) reaches the child.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import warm_home

from .fake_api import FakeApi, Turn

ROOT = Path(__file__).resolve().parents[3]
ALLOWED_TOOLS = "Read Bash Write Edit Grep Glob"
CLAUDE_TIMEOUT = 90.0
# The fake API key: any string works offline. Not shaped like a real key, and built rather than
# written out, so the repository passes its own audit.
FAKE_API_KEY = "-".join(("offline", "test", "key", "0" * 20))
# Variables of the caller that must not reach Claude Code or scrub: they could select another
# provider or account, route 127.0.0.1 through a proxy, or point at a real config dir.
_DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "SCRUB_", "XDG_", "AWS_", "GOOGLE_", "VERTEX_")
_DROPPED = {
    "HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "PYTHONSTARTUP",
}


def install_claude_hint() -> str:
    """What to do when no `claude` is found: the version .ci/install-claude.sh pins."""
    script = ROOT / ".ci" / "install-claude.sh"
    text = script.read_text(encoding="utf-8") if script.is_file() else ""
    pinned = re.search(r"CLAUDE_CODE_VERSION:-([0-9][0-9.]*)", text)
    version = f" {pinned.group(1)}" if pinned else ""
    return (
        f"set SCRUB_CLAUDE_BIN to the Claude Code{version} CLI (see .ci/install-claude.sh) "
        "or put claude on PATH"
    )


def find_claude() -> tuple[Path | None, str]:
    """The `claude` binary to test, or None and why not."""
    configured = os.environ.get("SCRUB_CLAUDE_BIN", "")
    if configured:
        path = Path(configured).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            return None, f"SCRUB_CLAUDE_BIN={configured} is not an executable file"
        return path, ""
    found = shutil.which("claude")
    if found is None:
        return None, install_claude_hint()
    return Path(found), ""


@pytest.fixture(scope="session")
def claude_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, why = find_claude()
    if path is None:
        pytest.skip(why)
    # `--version` in a throwaway home: proves the binary starts (a launcher without its native
    # binary, a Node too old) without touching anyone's config.
    home = tmp_path_factory.mktemp("claude-version")
    try:
        done = subprocess.run(
            [str(path), "--version"],
            env={**clean_environ(), "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "c")},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"{path} does not start ({type(error).__name__})")
    if done.returncode != 0 or "Claude Code" not in done.stdout:
        pytest.skip(f"{path} --version failed (exit {done.returncode})")
    return path


def clean_environ() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in _DROPPED and not k.startswith(_DROPPED_PREFIXES)
    }
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@dataclass
class Run:
    """One finished `claude` run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def result(self) -> dict[str, Any]:
        """The `--output-format json` result object."""
        value = json.loads(self.stdout)
        assert isinstance(value, dict)
        return value

    @property
    def session_id(self) -> str:
        return str(self.result()["session_id"])


@dataclass
class Box:
    """A sealed-off world for one test: config dir, home, scrubber's home, a project folder."""

    root: Path
    claude_bin: Path
    api: FakeApi
    scrub_home_inside: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for folder in (self.config, self.home, self.project, self.root / "xdg"):
            folder.mkdir(parents=True, exist_ok=True)

    # -- places ---------------------------------------------------------------------------

    @property
    def config(self) -> Path:
        return self.root / "claude-config"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def scrub_home(self) -> Path:
        # Inside the config dir is scrubber's default, and the place Claude Code's sweep must
        # leave alone; outside proves SCRUB_HOME reaches the hook through Claude Code.
        if self.scrub_home_inside:
            return self.config / "scrubber"
        return self.root / "scrub-home"

    @property
    def project(self) -> Path:
        return self.root / "work" / "shop-api"

    def transcripts(self, config: Path | None = None) -> list[Path]:
        return sorted((config or self.config).glob("projects/*/*.jsonl"))

    def transcript(self, session_id: str, config: Path | None = None) -> Path:
        found = sorted((config or self.config).glob(f"projects/*/{session_id}.jsonl"))
        assert len(found) == 1, f"transcript of {session_id}: {found}"
        return found[0]

    # -- processes ------------------------------------------------------------------------

    def env(self, config: Path | None = None, **extra: str) -> dict[str, str]:
        env = clean_environ()
        env.update(
            CLAUDE_CONFIG_DIR=str(config or self.config),
            HOME=str(self.home),
            SCRUB_HOME=str(self.scrub_home),
            XDG_CONFIG_HOME=str(self.root / "xdg" / "config"),
            XDG_DATA_HOME=str(self.root / "xdg" / "data"),
            XDG_STATE_HOME=str(self.root / "xdg" / "state"),
            XDG_CACHE_HOME=str(self.root / "xdg" / "cache"),
            # scrubber reads Claude Code's managed settings; never this machine's.
            SCRUB_CLAUDE_MANAGED_SETTINGS=str(self.root / "etc" / "managed-settings.json"),
            ANTHROPIC_API_KEY=FAKE_API_KEY,
            ANTHROPIC_BASE_URL=self.api.url,
            DISABLE_AUTOUPDATER="1",
        )
        env.update(self.extra_env)
        env.update(extra)
        return env

    def claude(
        self,
        prompt: str,
        *args: str,
        script: Sequence[Turn] | None = None,
        config: Path | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = CLAUDE_TIMEOUT,
    ) -> Run:
        """`claude -p PROMPT --output-format json --allowedTools …` (root may not skip
        permissions, reference note), with the fake API answering `script`."""
        if script is not None:
            self.api.script(script)
        argv = [
            str(self.claude_bin),
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            ALLOWED_TOOLS,
            *args,
        ]
        started = time.monotonic()
        environ = {**self.env(config), **(env or {})}
        warm_home.seed(Path(environ["SCRUB_HOME"]), environ)
        done = subprocess.run(
            argv,
            env=environ,
            cwd=cwd or self.project,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        warm_home.keep(Path(environ["SCRUB_HOME"]))
        return Run(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def scrub(
        self, *args: str, config: Path | None = None, timeout: float = 120, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        env = self.env(config, **extra, PYTHONPATH=str(ROOT))
        warm_home.seed(Path(env["SCRUB_HOME"]), env)
        done = subprocess.run(
            [sys.executable, "-m", "scrubber.cli", *args],
            env=env,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        warm_home.keep(Path(env["SCRUB_HOME"]))
        return done

    def scrub_ok(self, *args: str, code: int = 0, **extra: Any) -> subprocess.CompletedProcess[str]:
        done = self.scrub(*args, **extra)
        assert done.returncode == code, (
            args,
            done.returncode,
            done.stdout[-2000:],
            done.stderr[-2000:],
        )
        return done

    def keygen(self) -> tuple[Path, str]:
        """An age identity file (0600) and its recipient, from `scrub keygen`."""
        key = self.root / "keys" / "identity.txt"
        key.parent.mkdir(exist_ok=True)
        done = self.scrub_ok("keygen", "-o", str(key))
        match = re.search(r"age1[0-9a-z]{58}", done.stderr)
        assert match, "scrub keygen printed no recipient on stderr"
        return key, match.group(0)

    # -- waiting ----------------------------------------------------------------------------

    def wait_for(
        self, condition: Callable[[], bool], *, timeout: float = 60, what: str = "condition"
    ) -> float:
        """Poll until `condition()`; returns the seconds waited. On timeout, fail with the tail
        of scrubber's logs (they hold no secret values, by contract)."""
        started = time.monotonic()
        while not condition():
            if time.monotonic() - started > timeout:
                logs = {
                    p.name: p.read_text(errors="replace")[-1500:]
                    for p in sorted((self.scrub_home / "log").glob("*"))
                }
                raise AssertionError(
                    f"timed out after {timeout} s waiting for {what}; logs: {logs}"
                )
            time.sleep(0.1)
        return time.monotonic() - started

    def activity(self) -> list[dict[str, Any]]:
        path = self.scrub_home / "log" / "activity.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def fake_api() -> Iterator[FakeApi]:
    with FakeApi() as api:
        yield api


@pytest.fixture
def box(tmp_path: Path, claude_bin: Path, fake_api: FakeApi) -> Box:
    return Box(tmp_path, claude_bin, fake_api)


@pytest.fixture
def box_factory(tmp_path: Path, claude_bin: Path, fake_api: FakeApi) -> Callable[..., Box]:
    def make(**options: Any) -> Box:
        return Box(tmp_path, claude_bin, fake_api, **options)

    return make
