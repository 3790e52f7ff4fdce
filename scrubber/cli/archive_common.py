"""What the archive commands share: the output format, identities and passphrases read from
the user (never from argv), the archive folder, sizes in words, and the exit for failures."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from scrubber.archive.age import Identity
from scrubber.archive.keys import (
    ScryptIdentity,
    has_loose_permissions,
    read_identities_file,
)
from scrubber.cli import common
from scrubber.cli.terminal_text import terminal_safe
from scrubber.errors import KeyMaterialError, ScrubberError

if TYPE_CHECKING:
    from scrubber.usecases.archive_push import PushOutcome

ENV_PASSPHRASE_FILE = "SCRUB_PASSPHRASE_FILE"  # noqa: S105 - a variable name, no secret


_MAX_PASSPHRASE_FILE = 64 * 1024


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def warn(message: str) -> None:
    # A warning may name an archive or a folder (terminal_text.py).
    sys.stderr.write(f"scrub: warning: {terminal_safe(message)}\n")


def warn_if_loose(path: Path, what: str) -> None:
    try:
        loose = has_loose_permissions(path)
    except OSError:
        return  # the reader reports a missing file
    if loose:
        warn(f"{what} {path} is readable by group or others; run: chmod 600 {path}")


def read_passphrase_file(path: Path) -> str:
    warn_if_loose(path, "passphrase file")
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_PASSPHRASE_FILE + 1)
    except FileNotFoundError:
        raise KeyMaterialError(f"passphrase file not found: {path}") from None
    except OSError as exc:
        raise KeyMaterialError(f"cannot read passphrase file {path}: {exc.strerror}") from None
    if len(data) > _MAX_PASSPHRASE_FILE:
        raise KeyMaterialError(f"passphrase file {path} is too large to hold a passphrase")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyMaterialError(f"passphrase file {path} is not UTF-8 text") from None
    # One trailing line break is how editors and `echo` end a file; it is not part of it.
    text = text.removesuffix("\n").removesuffix("\r")
    if not text:
        raise KeyMaterialError(f"passphrase file {path} is empty")
    return text


def prompt_passphrase(*, confirm: bool) -> str:
    """Read a passphrase from the terminal (never from stdin or argv)."""
    import getpass

    # getpass falls back to echoing stdin when there is no terminal: probe for one first.
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
    except OSError:
        raise KeyMaterialError(
            "--passphrase needs a terminal to type it in",
            hint=f"for scripts, put it in a 0600 file: --passphrase-file F or ${ENV_PASSPHRASE_FILE}",
        ) from None
    first = getpass.getpass("Passphrase: ")
    if not first:
        raise KeyMaterialError("the passphrase is empty")
    if confirm and getpass.getpass("Confirm passphrase: ") != first:
        raise KeyMaterialError("the passphrases do not match")
    return first


def passphrase_file_from_env() -> Path | None:
    value = common.env().get(ENV_PASSPHRASE_FILE, "")
    return Path(value).expanduser() if value else None


def read_identities(
    identity_files: Sequence[Path] | None,
    passphrase_file: Path | None,
    passphrase: bool,
    *,
    required: bool,
) -> list[Identity]:
    found: list[Identity] = []
    for path in identity_files or ():
        warn_if_loose(path, "identity file")
        found.extend(read_identities_file(path))
    chosen_file = passphrase_file
    if chosen_file is None and not found and not passphrase:
        chosen_file = passphrase_file_from_env()
    if chosen_file is not None:
        found.append(ScryptIdentity(read_passphrase_file(chosen_file)))
    elif passphrase:
        found.append(ScryptIdentity(prompt_passphrase(confirm=False)))
    if required and not found:
        raise KeyMaterialError(
            "no key given to decrypt with",
            hint="pass -i IDENTITY_FILE, or --passphrase-file F for a passphrase archive",
        )
    return found


def new_passphrase(passphrase: bool, passphrase_file: Path | None) -> str | None:
    """The passphrase to encrypt to: from --passphrase-file, else (with --passphrase) from
    $SCRUB_PASSPHRASE_FILE or typed twice at the terminal; None without either option."""
    if passphrase_file is not None:
        return read_passphrase_file(passphrase_file)
    if not passphrase:
        return None
    env_file = passphrase_file_from_env()
    return (
        read_passphrase_file(env_file) if env_file is not None else prompt_passphrase(confirm=True)
    )


def archives_root(directory: Path | None, policy_path: Path | None) -> Path:
    if directory is not None:
        return directory
    loaded = common.policy(policy_path)
    return loaded.policy.archive.destination_in(common.scrub_home())


def human_bytes(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1000
        if value < 1000 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


def upload_json(outcome: PushOutcome | None) -> dict[str, Any]:
    """One upload to object storage, for --format json (None: queued, not tried yet)."""
    if outcome is None:
        return {"status": "queued"}
    if outcome.error is not None:
        return {"status": "queued", "error": outcome.error.message}
    proof = outcome.proof
    if proof is None:
        return {"status": "uploaded", "note": "uploaded by an earlier run"}
    return {
        "status": "uploaded",
        "key": proof.key,
        "size": proof.size,
        "sha256": proof.sha256,
        "checksum": proof.checksum,
        "verified_by": str(proof.proven_by),
        "removed_local": outcome.removed_local,
    }


def print_upload(outcome: PushOutcome | None, archive: Path | None) -> None:
    """One upload in words; a failure goes to stderr as a warning (the job stays queued)."""
    if outcome is None:
        typer.echo(f"queued     upload of {archive} (run `scrub archives push`)")
        return
    if outcome.error is not None:
        warn(f"upload of {outcome.archive} failed, it stays queued: {outcome.error.message}")
        if outcome.error.hint:
            sys.stderr.write(f"hint: {outcome.error.hint}\n")
        return
    proof = outcome.proof
    if proof is None:
        typer.echo(f"uploaded   {outcome.archive} (by an earlier run)")
        return
    how = {
        "read back": "size and SHA-256 read back from the store",
        "put response": "write-only key: verified by the PUT response's SHA-256 only, not "
        "read back",
        "already stored": "the same content was already there",
    }[str(proof.proven_by)]
    gone = "; local copy removed" if outcome.removed_local else ""
    typer.echo(f"uploaded   {outcome.archive.name} -> {proof.key}  ({how}{gone})")


def exit_for(errors: Sequence[ScrubberError]) -> None:
    if errors:
        raise typer.Exit(int(max(error.exit_code for error in errors)))
