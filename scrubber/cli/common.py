"""What every command needs: the environment, the policy, and a way to run safely."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from scrubber import paths
from scrubber.policy.load import LoadedPolicy, load_policy


def env() -> Mapping[str, str]:
    return os.environ


def config_dir() -> Path:
    return paths.config_dir(env())


def scrub_home() -> Path:
    return paths.scrub_home(env())


def policy(path: Path | None) -> LoadedPolicy:
    return load_policy(path, env())


# The `--policy` option every command that reads the policy takes.
PolicyOption = Annotated[
    Path | None,
    typer.Option(
        "--policy", help="Policy file (default: $SCRUB_POLICY, then $SCRUB_HOME/policy.yaml)."
    ),
]


def human_size(size: int) -> str:
    """`1.5 MB`: decimal units, as `bench/README.md` and the reports count."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 file`, `2 files`, `0 files` (`many` for the irregular: `entry`, `entries`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"
