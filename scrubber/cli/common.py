"""What every command needs: the environment, the policy, and a way to run safely."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from scrubber import paths
from scrubber.errors import UsageError
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


def refuse_special_file(path: Path, verb: str) -> None:
    """A FIFO, socket or device named on the command line is a usage error (exit 2): reading
    a FIFO waits forever for a writer, and saying "0 files" would hide that nothing was done.
    Symbolic links are left to the caller (each command words that refusal itself)."""
    try:
        st = path.stat()
    except OSError:
        return  # missing or unreadable: the caller's own checks say so
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise UsageError(
            f"{path}: is {paths.file_type_name(st.st_mode)}, not a regular file; not {verb}",
            "name transcripts (regular files) or folders that hold them",
        )


def human_size(size: int) -> str:
    """`1.5 MB`: decimal units, as `bench/README.md` and the reports count."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"
