"""What `scrub doctor` reports: one check, its level, and the fix it suggests."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    level: Level
    message: str
    fix: str | None = None
