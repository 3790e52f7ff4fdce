"""Where `scrub export -o FILE` may write, checked before the export runs, and the write itself.

An export is meant to leave the machine, so it is written where the user said, and nowhere
that would hurt: never over something that exists unless `--force` (and then only a regular
file, replaced by a rename: a device, a FIFO, a folder or a symbolic link is never written
through or replaced), never through a folder given as a symbolic link (the name the user typed
would not be where the file lands), and never inside Claude Code's config directory (its
`history.jsonl`, settings, transcripts) or scrubber's own folders (state, archives): whatever
path leads there, through symbolic links too. A file is created under a name nobody took (a
hard link, which fails if one appeared meanwhile), 0600, complete or not at all.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scrubber.durable import PRIVATE_FILE_MODE, atomic_write, fsync_dir, publish_by_link
from scrubber.errors import ScrubberError, UsageError, path_error_hint
from scrubber.paths import file_type_name

_TO_STDOUT = "-o - (or no -o) writes to stdout"


@dataclass(frozen=True, slots=True)
class ProtectedPlace:
    """A folder no export may be written into, and what it is, in words."""

    root: Path
    what: str


@dataclass(frozen=True, slots=True)
class ExportTarget:
    given: Path  # as the user typed it (what messages show)
    path: Path  # the real folder, resolved, and the file's name
    replaces: bool  # an existing regular file, replaced because of --force


def _absolute(path: Path) -> Path:
    return path if path.is_absolute() else Path.cwd() / path


def _refuse_symlinked_folder(given: Path, folder: Path) -> None:
    """The folder may not be a symbolic link, nor lie under one that someone else made (a
    link in a shared folder such as /tmp, planted to send the file elsewhere)."""
    me = os.getuid()
    for step in (*reversed(folder.parents), folder):
        try:
            st = step.lstat()
        except FileNotFoundError:
            raise UsageError(
                f"-o {given}: the folder {folder} does not exist", hint="create it first"
            ) from None
        if not stat.S_ISLNK(st.st_mode):
            continue
        if step == folder:
            raise UsageError(
                f"-o {given}: the folder {folder} is a symbolic link; not followed",
                hint=f"name the folder it leads to, if you trust it: {folder.resolve()}",
            )
        if st.st_uid not in (me, 0):
            raise UsageError(
                f"-o {given}: {step} is a symbolic link made by another user; not followed",
                hint="write somewhere only you control",
            )


def _refuse_protected(given: Path, final: Path, protected: Sequence[ProtectedPlace]) -> None:
    landing = {final, final.resolve()}  # the name, and where a link at that name leads
    for place in protected:
        root = place.root.resolve()
        if any(spot == root or root in spot.parents for spot in landing):
            raise UsageError(
                f"-o {given}: inside {place.what} ({place.root}); not written",
                hint="write the export somewhere else (your home folder, say)",
            )


def check_export_target(
    output: Path, *, force: bool, protected: Sequence[ProtectedPlace]
) -> ExportTarget:
    """Where `-o output` writes, or a UsageError (exit 2) saying why it may not."""
    if output.name in ("", ".", "..") or str(output).endswith(os.sep):
        raise UsageError(f"-o {output}: not a file name", hint="name a file")
    given_folder = _absolute(output).parent
    _refuse_symlinked_folder(output, given_folder)
    folder = given_folder.resolve()
    if not folder.is_dir():
        raise UsageError(f"-o {output}: {given_folder} is not a folder", hint="name a file")
    final = folder / output.name
    _refuse_protected(output, final, protected)
    try:
        st = final.lstat()
    except FileNotFoundError:
        return ExportTarget(output, final, replaces=False)
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(
            f"-o {output}: is {file_type_name(st.st_mode)}; not replaced, even with --force",
            hint=f"name a new file; {_TO_STDOUT}",
        )
    if not force:
        raise UsageError(
            f"-o {output}: already exists; not replaced",
            hint="add --force to replace it, or name a new file",
        )
    return ExportTarget(output, final, replaces=True)


def write_export(target: ExportTarget, content: bytes) -> None:
    """Write the export (0600): a new file under a name nobody took meanwhile, or, for
    --force, the regular file replaced by a rename. ScrubberError (exit 3) when the system
    refuses; nothing is left behind."""
    try:
        if target.replaces:
            if not target.path.is_symlink() and target.path.is_file():
                atomic_write(target.path, [content], mode=PRIVATE_FILE_MODE)
                return
            raise UsageError(f"-o {target.given}: changed while exporting; not replaced")
        _publish_new(target, content)
    except OSError as error:
        raise ScrubberError(
            f"cannot write {target.given}: {error.strerror or type(error).__name__}; "
            "nothing was written",
            path_error_hint(error),
        ) from None


def _publish_new(target: ExportTarget, content: bytes) -> None:
    folder = target.path.parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.path.name}.", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fchmod(out.fileno(), PRIVATE_FILE_MODE)
            os.fsync(out.fileno())
        if not publish_by_link(tmp, target.path):
            raise UsageError(
                f"-o {target.given}: appeared while exporting; not replaced",
                hint="add --force to replace it, or name a new file",
            )
        fsync_dir(folder)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
