"""`scrub decrypt`: any age file to a plain file, through a temp file that a failure removes, or
to a stream (stdout), as `age -d` does."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, cast

from scrubber.archive.age import (
    DecryptingReader,
    Identity,
)
from scrubber.archive.errors import ArchiveError
from scrubber.durable import fsync_dir, publish_by_link
from scrubber.errors import UsageError, path_error_hint


def _open_source(src: Path) -> BinaryIO:
    try:
        return cast(BinaryIO, src.open("rb"))
    except FileNotFoundError:
        raise ArchiveError(f"{src}: file not found", hint="check the path") from None
    except IsADirectoryError:
        raise ArchiveError(
            f"{src}: is a folder, not an age file", hint="name an age file (….tar.gz.age)"
        ) from None
    except OSError as exc:
        raise ArchiveError(
            f"cannot read {src}: {exc.strerror}", hint=path_error_hint(exc, writing=False)
        ) from None


def decrypt_to_stream(src: Path, sink: BinaryIO, identities: Sequence[Identity]) -> int:
    """Decrypt the age file `src` into `sink` (stdout, for `scrub decrypt F | tar xz`), as
    `age -d` does: chunk by chunk, each one written only once it authenticated, so a damaged
    or truncated file stops with an error after the chunks before the damage. Returns the
    size. An OSError from `sink` (a closed pipe) is the caller's to tell."""
    with _open_source(src) as handle:
        reader = DecryptingReader(handle, identities)
        size = 0
        for chunk in reader.chunks():
            sink.write(chunk)
            size += len(chunk)
        sink.flush()
    return size


def decrypt_file(
    src: Path, out: Path, identities: Sequence[Identity], *, force: bool = False
) -> int:
    """Decrypt the age file `src` to `out` (0600) through a temp file in `out`'s folder, which
    is removed on any failure: a damaged or truncated file leaves nothing. Returns the size.

    Refuses an existing `out` unless `force`.
    """
    if out.is_dir():
        raise UsageError(f"{out} is a folder", hint="name a file (inside it, say) with -o")
    if os.path.lexists(out) and not force:
        raise UsageError(f"{out} already exists", hint="choose another -o, or remove it first")
    handle = _open_source(src)
    tmp: Path | None = None
    try:
        with handle:
            reader = DecryptingReader(handle, identities)
            folder = out.parent if str(out.parent) else Path()
            fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder)
            tmp = Path(tmp_name)
            size = 0
            with os.fdopen(fd, "wb") as sink:
                for chunk in reader.chunks():
                    sink.write(chunk)
                    size += len(chunk)
                sink.flush()
                os.fsync(sink.fileno())
        if force:
            tmp.replace(out)
        elif not publish_by_link(tmp, out):
            raise UsageError(f"{out} appeared while decrypting; not overwritten")
        fsync_dir(out.parent)
        return size
    except OSError as exc:
        told = path_error_hint(exc)
        raise ArchiveError(
            f"cannot write {out}: {exc.strerror or type(exc).__name__}",
            hint=f"{told}; nothing was left behind" if told else "nothing was left behind",
        ) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
