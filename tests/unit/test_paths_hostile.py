"""paths.open_regular and the CLI's words for system errors, on real files and devices."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from scrubber import paths
from scrubber.cli.os_errors import os_error_as_scrubber_error


def test_open_regular_reads_a_regular_file(tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    file.write_bytes(b"{}\n")
    with paths.open_regular(file) as stream:
        assert stream.read() == b"{}\n"


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (os.mkfifo, "a FIFO"),
        (lambda p: p.mkdir(), "a folder"),
        (lambda p: p.symlink_to("/dev/null"), "a character device"),
    ],
)
def test_open_regular_refuses_what_is_not_a_regular_file(tmp_path: Path, make, kind) -> None:
    path = tmp_path / "x"
    make(path)
    with pytest.raises(paths.NotRegularFileError) as raised:
        paths.open_regular(path)  # never blocks: a FIFO without a writer is opened O_NONBLOCK
    assert raised.value.kind == kind
    assert raised.value.filename == str(path)


def test_open_regular_without_follow_refuses_a_link(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"x")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError) as raised:
        paths.open_regular(tmp_path / "link", follow=False)
    assert raised.value.errno == errno.ELOOP


def test_a_full_device_reads_as_a_plain_message() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError) as raised, Path("/dev/full").open("wb", buffering=0) as full:
        full.write(b"x")
    told = os_error_as_scrubber_error(raised.value)
    assert told is not None
    assert told.message == "cannot write: No space left on device"
    assert told.hint and "free space" in told.hint
    named = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/srv/out.jsonl")
    assert os_error_as_scrubber_error(named).message == (  # type: ignore[union-attr]
        "cannot write /srv/out.jsonl: No space left on device"
    )
    assert os_error_as_scrubber_error(OSError("no errno")) is None
