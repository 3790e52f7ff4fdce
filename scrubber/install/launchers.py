"""The two small scripts `scrub install` writes into `$SCRUB_HOME/bin/`, the commands that run
them, and how a command in a settings file is recognised as ours (by the launchers' names)."""

from __future__ import annotations

import ast
import os
import shlex
import sys
from collections.abc import Mapping
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


# The line of a launcher that sets the variables install pinned (read back by `pinned_in`).
_PIN_LINE = "os.environ.update("


def launcher_dir(home: Path) -> Path:
    return home / "bin"


def _absolute(path: Path) -> Path:
    # Hooks run with cwd = the project and cron jobs in $HOME: a relative path must not move.
    return path.expanduser().absolute()


def pinned_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables whatever install writes (launchers, schedules) sets before scrub runs, so
    that it finds the files this install used: its SCRUB_HOME, its config dir, its policy.

    Claude Code runs hooks with its own environment, not the shell's that ran `scrub install`:
    a `SCRUB_HOME=/x scrub install` would otherwise leave hooks using `<config>/scrubber`, with
    the built-in policy (nothing archived, nothing said). Nothing is pinned for the default
    install (`~/.claude`, its `scrubber/`): that is what scrub finds with no variable at all,
    and Claude Code runs the hooks of a config dir's settings.json with that config dir, so
    a default install's launchers stay free of paths and unchanged. A pinned home always comes
    with an absolute path; the config dir is pinned only when it is not `~/.claude` (a hook
    from `~/.claude/settings.json` runs under a Claude Code using that folder anyway).
    """
    config = _absolute(paths.config_dir(env))
    home = _absolute(paths.scrub_home(env))
    default_config = _absolute(
        paths.config_dir({k: v for k, v in env.items() if k != "CLAUDE_CONFIG_DIR"})
    )
    pins: dict[str, str] = {}
    if config != default_config:
        pins["CLAUDE_CONFIG_DIR"] = str(config)
    if pins or home != default_config / "scrubber":
        pins["SCRUB_HOME"] = str(home)
    if env.get("SCRUB_POLICY"):
        # Install read (and kept) this policy: the hooks must use it too, not the home's.
        pins["SCRUB_POLICY"] = str(_absolute(Path(env["SCRUB_POLICY"])))
    return pins


def pinned_in(launcher: Path) -> dict[str, str] | None:
    """The variables a launcher pins ({} for none); None when it cannot be read as ours."""
    try:
        text = launcher.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        if line.startswith(_PIN_LINE) and line.endswith(")"):
            try:
                value = ast.literal_eval(line[len(_PIN_LINE) : -1])
            except (ValueError, SyntaxError):
                return None
            if isinstance(value, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                return value
            return None
    return {}


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
    pins: tuple[tuple[str, str], ...] = ()  # see pinned_environment

    @classmethod
    def for_home(
        cls, home: Path, python: str | None = None, pins: Mapping[str, str] | None = None
    ) -> Launchers:
        import scrubber

        folder = launcher_dir(home)
        return cls(
            python=python or sys.executable,
            package_root=str(Path(scrubber.__file__).resolve().parents[1]),
            session_end=folder / SESSION_END_LAUNCHER,
            status_line=folder / STATUS_LINE_LAUNCHER,
            pins=tuple((pins or {}).items()),
        )

    def text(self, what: str, body: str) -> str:
        return _launcher_text(self.python, self.package_root, what, body, dict(self.pins))

    def session_end_text(self) -> str:
        return self.text(
            "SessionEnd hook",
            "from scrubber.hooks import session_end\n"
            f"raise SystemExit(session_end.main(worker_python={self.python!r}))\n",
        )

    def status_line_text(self) -> str:
        return self.text(
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
        paths.ensure_private_dir(self.session_end.parent, self.session_end.parent.parent)
        for path, text in (
            (self.session_end, self.session_end_text()),
            (self.status_line, self.status_line_text()),
        ):
            atomic_write(path, [text.encode()], mode=0o700)
        return self.session_end, self.status_line


def _launcher_text(
    python: str, root: str, what: str, body: str, pins: Mapping[str, str] | None = None
) -> str:
    pinned = ""
    if pins:
        # Set over whatever Claude Code's environment says: this launcher lives in that home's
        # bin/ and is registered for it; another SCRUB_HOME would split the hook (spool, logs)
        # from the policy install wrote. repr() makes any path one safe Python literal.
        pinned = (
            "# The files `scrub install` used (its SCRUB_HOME, config dir, policy), whatever\n"
            "# the environment Claude Code runs this with says; the worker inherits them.\n"
            f"import os\n\n{_PIN_LINE}{dict(pins)!r})\n"
        )
    return (
        f"#!{python} -S\n"
        f"# scrubber's {what}, written by `scrub install` (`scrub uninstall` removes it).\n"
        "# Runs without site-packages (-S) for a fast start; the package is found here:\n"
        "import sys\n\n"
        f"sys.path.insert(0, {root!r})\n"
        f"{pinned}"
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
        text = launchers.text(
            f"{event} hook (live protection)",
            f"from scrubber.hooks import {module}\nraise SystemExit({module}.main())\n",
        )
        paths.ensure_private_dir(path.parent, home)
        atomic_write(path, [text.encode()], mode=0o700)
        written.append(path)
    return written
