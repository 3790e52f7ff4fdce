"""The installation key is read only from a regular file of our own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scrubber.detection.fingerprint import read_or_create_key
from scrubber.errors import ConfigError


def test_a_fifo_planted_as_the_key_is_refused_without_blocking(tmp_path: Path) -> None:
    key = tmp_path / "fingerprint.key"
    os.mkfifo(key)
    # In a child process with a timeout: the old code blocked forever opening the FIFO.
    code = (
        "import sys; from pathlib import Path\n"
        "from scrubber.detection.fingerprint import read_or_create_key\n"
        "from scrubber.errors import ConfigError\n"
        "try:\n    read_or_create_key(Path(sys.argv[1]))\n"
        "except ConfigError as e:\n    print('refused:', e.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(key)], capture_output=True, text=True, timeout=20
    )
    assert "refused:" in done.stdout and "FIFO" in done.stdout


def test_a_link_planted_as_the_key_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.key"
    elsewhere.write_bytes(b"x" * 32)
    key = tmp_path / "fingerprint.key"
    key.symlink_to(elsewhere)
    with pytest.raises(ConfigError):
        read_or_create_key(key)


def test_a_missing_key_is_created_private(tmp_path: Path) -> None:
    key = tmp_path / "home" / "fingerprint.key"
    made = read_or_create_key(key)
    assert len(made) == 32 and read_or_create_key(key) == made
    assert key.stat().st_mode & 0o777 == 0o600
