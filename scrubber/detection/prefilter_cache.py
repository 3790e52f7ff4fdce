"""The compiled prefilter databases kept between runs, and why a kept one can be trusted.

Compiling the gates' hyperscan databases takes most of a second; loading them takes
milliseconds. A cache file is trusted only when it verifies (see CacheFile): anything else is
ignored, and the caller compiles afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scrubber.detection.fingerprint import read_or_create_key
from scrubber.errors import ScrubberError
from scrubber.paths import (
    ensure_private_dir,
    fingerprint_key_file,
    home_of_prefilter_cache,
    open_regular,
)


def cache_file(
    cache_dir: Path,
    gates: Sequence[tuple[bytes, bytes, bool]],
    hyperscan: Any,
    every_end: Sequence[int],
    deferral: object = None,
) -> CacheFile:
    """Where the databases of exactly these gates (patterns, flags, which report every end,
    which wait for rare literals: `deferral`, any repr-stable value) and this hyperscan version
    are kept, and what their MAC must cover."""
    identity = gates_identity(gates, hyperscan, every_end, deferral)
    return CacheFile(cache_dir / f"gates-{identity.hex()[:24]}.hsdb", identity)


def gates_identity(
    gates: Sequence[tuple[bytes, bytes, bool]],
    hyperscan: Any,
    every_end: Sequence[int],
    deferral: object = None,
) -> bytes:
    """A digest of everything compiled databases depend on: the gates, which report every
    end, the deferral plan and the hyperscan version."""
    version = getattr(hyperscan, "__version__", "?")
    described = repr((version, list(gates), list(every_end), deferral))
    return hashlib.sha256(described.encode()).digest()


class CacheFile:
    """A cache file: `magic`, an HMAC-SHA256 of (identity, payload) under a key derived from the
    installation's fingerprint key, then the payload (the number of databases, each one's size,
    then the databases: raw, text, and the raw forms of deferred gates).

    Why the MAC: a database is a compiled automaton, and one that matches nothing makes every
    line look clean. A planted `.hsdb` under the right name made `scrub audit` report 0
    secrets and `redact` copy every secret through. Without the key nobody can make a file that
    verifies; a file that does not verify is ignored and rebuilt (and never handed to
    hyperscan's deserializer, which is not made for hostile input)."""

    __slots__ = ("identity", "path")

    MAGIC = b"scrubber-prefilter-v3\n"
    MAX_BYTES = 256 << 20  # far above any real database; a bigger file is not read

    def __init__(self, path: Path, identity: bytes) -> None:
        self.path, self.identity = path, identity

    def mac(self, key: bytes, payload: bytes) -> bytes:
        return hmac.new(key, self.identity + payload, hashlib.sha256).digest()


def _cache_key(cache_dir: Path) -> bytes | None:
    """The MAC key of the cache: derived from the installation's fingerprint key (never the key
    itself, so a MAC tells nothing about fingerprints); None when there is none to read."""
    key_file = fingerprint_key_file(home_of_prefilter_cache(cache_dir))
    try:
        key = read_or_create_key(key_file)
    except ScrubberError:
        return None
    return hmac.new(key, b"scrubber prefilter cache", hashlib.sha256).digest()


def load_databases(cache: CacheFile, hyperscan: Any, count: int) -> list[Any] | None:
    """The `count` databases of a cache file; None when it is missing, unreadable, holds
    another number or does not verify (it is then rebuilt: a cache never decides an answer)."""
    key = _cache_key(cache.path.parent)
    if key is None:
        return None
    try:
        # Never a link, never a FIFO (which would block the scan).
        with open_regular(cache.path, follow=False) as stream:
            data = stream.read(cache.MAX_BYTES + 1)
        head, mac_end = len(cache.MAGIC), len(cache.MAGIC) + 32
        payload = data[mac_end:]
        if len(data) > cache.MAX_BYTES or data[:head] != cache.MAGIC:
            return None
        if not hmac.compare_digest(data[head:mac_end], cache.mac(key, payload)):
            return None
        (stored,) = struct.unpack_from(">I", payload)
        if stored != count:
            return None
        sizes = struct.unpack_from(f">{count}Q", payload, 4)
        offset = 4 + 8 * count
        databases = []
        for size in sizes:
            database = hyperscan.loadb(payload[offset : offset + size], hyperscan.HS_MODE_BLOCK)
            # A loaded database has no scratch space yet (compile allocates one).
            database.scratch = hyperscan.Scratch(database)
            databases.append(database)
            offset += size
    except (OSError, struct.error, ValueError, TypeError, AttributeError, hyperscan.error):
        return None
    return databases


def store_databases(cache: CacheFile, hyperscan: Any, databases: Sequence[Any]) -> None:
    """Write the cache atomically (temp file, rename), 0600 in a 0700 folder; a failure to
    write it only costs the next run a compile."""
    key = _cache_key(cache.path.parent)
    if key is None:
        return
    path = cache.path
    with contextlib.suppress(OSError, hyperscan.error):
        ensure_private_dir(path.parent)
        dumped = [hyperscan.dumpb(database) for database in databases]
        sizes = struct.pack(f">I{len(dumped)}Q", len(dumped), *(len(d) for d in dumped))
        payload = sizes + b"".join(dumped)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(cache.MAGIC + cache.mac(key, payload) + payload)
            temp.replace(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
