"""Fixtures shared by the whole suite: an isolated environment, demo config dirs, and the `scrub`
CLI run as a real process or in this one.

Nothing here is autouse: modules that build their own worlds keep doing so. Every fixture that
touches the environment points CLAUDE_CONFIG_DIR, HOME, SCRUB_HOME and XDG_* at temp folders, so
no test can read or write a real ~/.claude.
"""

from __future__ import annotations

import base64
import compileall
import contextlib
import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import DemoManifest, build_demo_config, demo_manifest
from tests import warm_home

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package once, up front. These machines set PYTHONDONTWRITEBYTECODE, so
    without it every `scrub` and hook process a test starts compiles each module it imports
    from source again (a third of a short command's CPU). compileall writes the caches even
    under that variable, and skips modules whose cache is current."""
    del config
    compileall.compile_dir(REPO_ROOT / "scrubber", quiet=2, workers=1)


# Variables a test environment must never inherit: they would point scrubber at real data or
# change how it behaves (a policy, a forced prefilter engine, tracebacks).
_INHERITED_PREFIXES = ("CLAUDE_", "SCRUB_", "XDG_")
_XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")


@dataclass(frozen=True)
class CliResult:
    """What one `scrub` run did: its exit code and everything it wrote."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class Sandbox:
    """A private world: Claude Code's config dir, HOME, scrubber's home and XDG folders.

    `config` is not created (a test decides what lives there: `demo_config` fills it);
    `scrub_home` is not created either, so tests can see scrubber make it private.
    """

    root: Path
    config: Path
    home: Path
    scrub_home: Path
    xdg: Path

    def environ(self, **extra: str) -> dict[str, str]:
        """A full environment for a child process: ours, plus PATH and the like."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(_INHERITED_PREFIXES) and k != "HOME"
        }
        env.update(self.variables())
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The repository first, so the child imports this working tree's package.
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p
        )
        env.update(extra)
        return env

    def variables(self) -> dict[str, str]:
        values = {
            "CLAUDE_CONFIG_DIR": str(self.config),
            "HOME": str(self.home),
            "SCRUB_HOME": str(self.scrub_home),
        }
        values.update({name: str(self.xdg / name.lower()) for name in _XDG})
        return values

    def scrub(
        self,
        *args: str | os.PathLike[str],
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> CliResult:
        """`python -m scrubber.cli ARGS` as a real process, in a session of its own (no
        controlling terminal, as a hook or cron job would run it)."""
        environ = self.environ(**(env or {}))
        warm_home.seed(self.scrub_home, environ)
        done = subprocess.run(
            [sys.executable, "-m", "scrubber.cli", *map(str, args)],
            env=environ,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        warm_home.keep(self.scrub_home)
        return CliResult(done.returncode, done.stdout, done.stderr)

    def popen(self, *args: str | os.PathLike[str], **kwargs: object) -> subprocess.Popen[bytes]:
        """Start `scrub ARGS` without waiting (fault tests kill it)."""
        warm_home.seed(self.scrub_home)
        return subprocess.Popen(
            [sys.executable, "-m", "scrubber.cli", *map(str, args)],
            env=self.environ(),
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **kwargs,  # type: ignore[arg-type]
        )


def make_sandbox(root: Path) -> Sandbox:
    """A sandbox under `root` (created; its config dir and scrubber home are not)."""
    root.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox(
        root=root,
        config=root / "claude" / ".claude",
        home=root / "home",
        scrub_home=root / "scrub-home",
        xdg=root / "xdg",
    )
    sandbox.home.mkdir(exist_ok=True)
    for name in _XDG:
        (sandbox.xdg / name.lower()).mkdir(parents=True, exist_ok=True, mode=0o700)
    return sandbox


def run_in_process(args: list[str]) -> CliResult:
    """`scrub ARGS` through the real entry point (error handling and exit codes included), in
    this process: a few milliseconds instead of a process start. The environment is whatever
    os.environ holds, so use it with the `sandbox` fixture."""
    from scrubber.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """An isolated environment, set in os.environ too (for in-process code)."""
    world = make_sandbox(tmp_path / "sandbox")
    for name in list(os.environ):
        if name.startswith(_INHERITED_PREFIXES):
            monkeypatch.delenv(name)
    for name, value in world.variables().items():
        monkeypatch.setenv(name, value)
    return world


@pytest.fixture(scope="session")
def sandbox_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Sandbox]:
    """For module- or session-scoped worlds: a new sandbox per call. It does not touch
    os.environ; use `Sandbox.scrub` (a child process gets the sandbox's environment)."""

    def make(name: str) -> Sandbox:
        return make_sandbox(tmp_path_factory.mktemp(name))

    return make


@pytest.fixture
def demo_config(sandbox: Sandbox) -> Path:
    """The demo config dir (3 scripted sessions with planted fake secrets) at the sandbox's
    CLAUDE_CONFIG_DIR; its manifest is the `demo_secrets` fixture."""
    built = build_demo_config(sandbox.config.parent)
    assert built == sandbox.config
    return built


@pytest.fixture(scope="session")
def demo_secrets() -> DemoManifest:
    """What `build_demo_config` plants with its default arguments. Holds the fake values:
    compare against them, never print them."""
    return demo_manifest()


@pytest.fixture
def scrub_cli(sandbox: Sandbox) -> Callable[..., CliResult]:
    """Run `scrub ARGS` in this process, in the sandbox."""

    def run(*args: str | os.PathLike[str]) -> CliResult:
        return run_in_process([str(a) for a in args])

    return run


class TranscriptBuilder:
    """Small transcripts in Claude Code's shape, for tests that need a particular record: a
    prompt, a tool call and its result (the `tool_result` block and `toolUseResult`), a reply
    with optional thinking, or raw bytes (a torn line). Values are whatever the test passes:
    build fake secrets at run time."""

    def __init__(self, session_id: str | None = None, cwd: str = "/home/u/work/app") -> None:
        self.session_id = session_id or str(uuid.uuid4())
        self.cwd = cwd
        self.lines: list[bytes] = []
        self._last: str | None = None
        self._clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        self._counter = 0

    def _envelope(self, kind: str) -> dict[str, Any]:
        self._counter += 1
        record_uuid = str(uuid.uuid4())
        record: dict[str, Any] = {
            "parentUuid": self._last,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.332",
            "gitBranch": "main",
            "type": kind,
            "uuid": record_uuid,
            "timestamp": (self._clock + timedelta(seconds=self._counter)).strftime(
                "%Y-%m-%dT%H:%M:%S.000Z"
            ),
        }
        self._last = record_uuid
        return record

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode())
        return record

    def raw(self, data: bytes) -> None:
        self.lines.append(data)

    def prompt(self, text: str) -> dict[str, Any]:
        record = self._envelope("user")
        record["message"] = {"role": "user", "content": text}
        return self.add(record)

    def say(self, text: str, *, thinking: str | None = None) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            signature = base64.b64encode(uuid.uuid4().bytes * 8).decode()
            blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
        blocks.append({"type": "text", "text": text})
        record = self._envelope("assistant")
        record["message"] = {
            "id": "msg_01" + uuid.uuid4().hex[:22],
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": blocks,
            "usage": {"input_tokens": 3, "output_tokens": 40},
        }
        record["requestId"] = "req_011C" + uuid.uuid4().hex[:20]
        return self.add(record)

    def tool(
        self, name: str, tool_input: dict[str, Any], result: Any, tool_use_result: Any = None
    ) -> str:
        """A tool call and its result; returns the tool_use id."""
        tool_id = "toolu_01" + uuid.uuid4().hex[:22]
        call = self._envelope("assistant")
        call["message"] = {
            "id": "msg_01" + uuid.uuid4().hex[:22],
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
        }
        self.add(call)
        source = call["uuid"]
        answer = self._envelope("user")
        answer["message"] = {
            "role": "user",
            "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": result}],
        }
        if tool_use_result is not None:
            answer["toolUseResult"] = tool_use_result
        answer["sourceToolAssistantUUID"] = source
        self.add(answer)
        return tool_id

    def read(self, path: str, text: str) -> str:
        numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(text.split("\n"), 1))
        file = {"filePath": path, "content": text, "numLines": text.count("\n") + 1}
        return self.tool("Read", {"file_path": path}, numbered, {"type": "text", "file": file})

    def bash(self, command: str, stdout: str) -> str:
        result = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
        return self.tool("Bash", {"command": command, "description": "Run"}, stdout, result)

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)

    def write(self, path: Path, *, torn_tail: bytes = b"") -> Path:
        """Write the transcript (0600), optionally ending in an unterminated torn line."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data() + torn_tail)
        path.chmod(0o600)
        return path


@pytest.fixture(scope="session")
def transcript_builder() -> type[TranscriptBuilder]:
    """The `TranscriptBuilder` class (conftest is not importable by test modules)."""
    return TranscriptBuilder


def value_at(file: str | Path, line: int, json_path: str | None, span: tuple[int, int]) -> str:
    """The text a finding points at: line `line` (1-based) of `file`, then the JSON Pointer
    into its object (RFC 6901) when there is one, else the line decoded as text, then the
    [start, end) code-point span. Compare the result with planted values; never print it."""
    with Path(file).open("rb") as stream:
        lines = stream.read().split(b"\n")
    assert 1 <= line <= len(lines), f"{file} has no line {line}"
    data = lines[line - 1]
    if json_path is None:
        text = data.decode("utf-8", errors="surrogateescape")
    else:
        value: Any = json.loads(data)
        for escaped in json_path.split("/")[1:]:
            token = escaped.replace("~1", "/").replace("~0", "~")
            value = value[int(token)] if isinstance(value, list) else value[token]
        assert isinstance(value, str), f"{json_path} does not name a string"
        text = value
    start, end = span
    assert 0 <= start < end <= len(text), f"span {span} outside line {line}"
    return text[start:end]


@pytest.fixture(scope="session")
def finding_value() -> Callable[[str | Path, int, str | None, tuple[int, int]], str]:
    """`value_at`: what a finding's file, line, json_path and span point at."""
    return value_at


@pytest.fixture
def scrub_in(monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run `scrub ARGS` in this process with the environment of a given sandbox (one made by
    `sandbox_factory` for a whole module, say); os.environ is restored afterwards."""

    def run(world: Sandbox, *args: str | os.PathLike[str]) -> CliResult:
        with monkeypatch.context() as patch:
            for name in list(os.environ):
                if name.startswith(_INHERITED_PREFIXES):
                    patch.delenv(name)
            for name, value in world.variables().items():
                patch.setenv(name, value)
            return run_in_process([str(a) for a in args])

    return run


class WarmPrefilter:
    """The opt-in form of tests/warm_home.py, for code that builds scanners in this process
    in many fresh homes (the CLI runners below seed their homes themselves)."""

    def seed(self, home: Path) -> None:
        warm_home.seed(home)

    def keep(self, home: Path) -> None:
        warm_home.keep(home)


@pytest.fixture(scope="session")
def warm_prefilter() -> WarmPrefilter:
    """See `WarmPrefilter`: for test files that build scanners in many fresh homes."""
    return WarmPrefilter()
