"""The two small scripts `scrub install` writes into `$SCRUB_HOME/bin/`, the commands that run
them, and how a command in a settings file is recognised as ours (by the launchers' names)."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from scrubber import paths
from scrubber.durable import atomic_write

SESSION_END_LAUNCHER = "scrubber-session-end"


STATUS_LINE_LAUNCHER = "scrubber-status-line"


# The live hooks (`scrub install --live`): event -> (launcher name, hook module, matcher).
LIVE_LAUNCHERS: dict[str, tuple[str, str, str | None]] = {
    "PostToolUse": (
        "scrubber-post-tool-use",
        "post_tool_use",
        "Read|Bash|BashOutput|KillShell|KillBash|Grep|Glob|LS|WebFetch|WebSearch|NotebookRead|mcp__.*",
    ),
    "UserPromptSubmit": ("scrubber-user-prompt-submit", "user_prompt_submit", None),
}


def launcher_dir(home: Path) -> Path:
    return home / "bin"


def is_ours(command: object) -> bool:
    """A hook or status-line command that runs one of our launchers."""
    return isinstance(command, str) and (
        SESSION_END_LAUNCHER in command
        or STATUS_LINE_LAUNCHER in command
        or any(name in command for name, _, _ in LIVE_LAUNCHERS.values())
    )


@dataclass(frozen=True, slots=True)
class Launchers:
    """The two small scripts `scrub install` writes into `$SCRUB_HOME/bin/`.

    They run under this environment's interpreter with `-S` (no site-packages: start-up is most
    of a hook's time) and put this package's folder on sys.path themselves. The SessionEnd
    launcher tells the hook which interpreter runs the worker (this one, with site-packages).
    """

    python: str
    package_root: str
    session_end: Path
    status_line: Path

    @classmethod
    def for_home(cls, home: Path, python: str | None = None) -> Launchers:
        import scrubber

        folder = launcher_dir(home)
        return cls(
            python=python or sys.executable,
            package_root=str(Path(scrubber.__file__).resolve().parents[1]),
            session_end=folder / SESSION_END_LAUNCHER,
            status_line=folder / STATUS_LINE_LAUNCHER,
        )

    def session_end_text(self) -> str:
        return _launcher_text(
            self.python,
            self.package_root,
            "SessionEnd hook",
            "from scrubber.hooks import session_end\n"
            f"raise SystemExit(session_end.main(worker_python={self.python!r}))\n",
        )

    def status_line_text(self) -> str:
        return _launcher_text(
            self.python,
            self.package_root,
            "status line",
            "from scrubber.hooks import fastpath\nraise SystemExit(fastpath.main())\n",
        )

    def session_end_command(self) -> str:
        return shlex.join([self.python, "-S", str(self.session_end)])

    def status_line_command(self, previous: str | None = None) -> str:
        words = [self.python, "-S", str(self.status_line)]
        if previous:
            words += ["--wrap", previous]
        return shlex.join(words)

    def write(self) -> tuple[Path, Path]:
        paths.ensure_private_dir(self.session_end.parent)
        for path, text in (
            (self.session_end, self.session_end_text()),
            (self.status_line, self.status_line_text()),
        ):
            atomic_write(path, [text.encode()], mode=0o700)
        return self.session_end, self.status_line


def _launcher_text(python: str, root: str, what: str, body: str) -> str:
    return (
        f"#!{python} -S\n"
        f"# scrubber's {what}, written by `scrub install` (`scrub uninstall` removes it).\n"
        "# Runs without site-packages (-S) for a fast start; the package is found here:\n"
        "import sys\n\n"
        f"sys.path.insert(0, {root!r})\n"
        f"{body}"
    )


def wrapped_command(command: str) -> str | None:
    """The previous status-line command our command wraps (`--wrap CMD`), if any."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "--wrap" in words:
        at = words.index("--wrap")
        if at + 1 < len(words):
            return words[at + 1]
    return None


def command_program_exists(command: str) -> bool:
    """Whether the interpreter and the script a registered command names both exist."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    targets = [w for w in words[:3] if not w.startswith("-")]
    return bool(targets) and all(Path(w).exists() for w in targets[:2])


def scrub_command() -> list[str]:
    """The absolute command that runs `scrub` from this environment (for schedules)."""
    script = Path(sys.executable).parent / "scrub"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "scrubber.cli"]


def live_launcher(home: Path, event: str) -> Path:
    return launcher_dir(home) / LIVE_LAUNCHERS[event][0]


def live_command(launchers: Launchers, home: Path, event: str) -> str:
    return shlex.join([launchers.python, "-S", str(live_launcher(home, event))])


def write_live_launchers(launchers: Launchers, home: Path) -> list[Path]:
    """The live hooks' launchers, beside the other two."""
    written = []
    for event, (_, module, _) in LIVE_LAUNCHERS.items():
        path = live_launcher(home, event)
        text = _launcher_text(
            launchers.python,
            launchers.package_root,
            f"{event} hook (live protection)",
            f"from scrubber.hooks import {module}\nraise SystemExit({module}.main())\n",
        )
        paths.ensure_private_dir(path.parent, home)
        atomic_write(path, [text.encode()], mode=0o700)
        written.append(path)
    return written
