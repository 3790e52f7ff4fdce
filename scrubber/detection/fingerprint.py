"""Keyed fingerprints: a way to name a secret without revealing it.

A plain hash of a short password can be reversed by guessing; an HMAC under a per-installation
key cannot, without the key. The key lives 0600 in scrubber's folder; the same secret gets the
same fingerprint everywhere on one installation, which lets the allowlist and the totals work.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from pathlib import Path

from scrubber.durable import PRIVATE_FILE_MODE, make_private_dirs
from scrubber.errors import ConfigError
from scrubber.paths import open_regular

KEY_BYTES = 32


class Fingerprinter:
    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ConfigError(
                "the fingerprint key is too short", "delete it to have a new one made"
            )
        self._key = key

    def __repr__(self) -> str:
        return "Fingerprinter(<key hidden>)"

    def fingerprint(self, value: str) -> str:
        """Hex HMAC-SHA256 of the value (64 chars). Callers show the first 8."""
        data = value.encode("utf-8", errors="surrogatepass")
        # The one-shot form: the same HMAC, without building an HMAC object per value.
        return hmac.digest(self._key, data, "sha256").hex()


def read_or_create_key(path: Path) -> bytes:
    """Read the installation's fingerprint key, creating it (0600 in a 0700 folder) if absent."""
    try:
        # A FIFO or a link planted as the key must neither block nor be followed.
        with open_regular(path, follow=False) as handle:
            key = handle.read(4096)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigError(f"cannot read the fingerprint key {path}: {exc.strerror}") from None
    else:
        if len(key) >= 16:
            return key
        raise ConfigError(
            f"the fingerprint key {path} is damaged (too short)",
            "delete it; a new key changes every fingerprint, so update allowlist fingerprints",
        )
    make_private_dirs(path.parent)
    key = secrets.token_bytes(KEY_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return read_or_create_key(path)  # another process made it first: use theirs
    except OSError as exc:
        raise ConfigError(f"cannot create the fingerprint key {path}: {exc.strerror}") from None
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        path.chmod(PRIVATE_FILE_MODE)
    return key
