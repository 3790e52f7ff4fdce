"""What the user asked `scrub install` for, and what an install or uninstall did."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class InstallOptions:
    recipients: tuple[str, ...] = ()
    recipients_file: Path | None = None
    on_session_end: tuple[str, ...] | None = None
    status_line: bool = False
    live: bool = False  # register the live hooks (PostToolUse, UserPromptSubmit)
    session_end_timeout: int | None = None
    schedule: str | None = None  # "systemd" or "cron"
    take_over_cleanup: bool = False
    dry_run: bool = False


@dataclass(slots=True)
class InstallReport:
    """What an install or uninstall did (or, in a dry run, would do). No secret in any field."""

    dry_run: bool
    settings_path: Path
    diff: str = ""
    done: list[str] = field(default_factory=list)  # one line per step
    notes: list[str] = field(default_factory=list)  # things the user should know or do
    backup: Path | None = None
    previews: list[tuple[str, str]] = field(default_factory=list)  # (title, text) in dry runs

    def step(self, text: str) -> None:
        self.done.append(text)
