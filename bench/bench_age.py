"""Benchmark: age encryption and decryption, ours (scrubber.archive.age) against pyrage (rage).

Same data (pseudo-random bytes from a fixed seed), same run, one X25519 recipient. Reports MB/s
(1 MB = 10^6 bytes), best of --repeat runs, and our ratio to pyrage's faster mode (pyrage has
an in-memory bytes API and a streaming file-object API; both are timed).

Then, in a fresh subprocess, streams --size-mb through our encrypt and decrypt (generated input
-> temp file -> hashing sink) and reports the peak RSS (ru_maxrss) against the same process's
RSS before streaming, to show that memory does not grow with the size.

    python bench/bench_age.py                 # 100 MB
    python bench/bench_age.py --size-mb 20 --repeat 2
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from scrubber.archive import age
from scrubber.archive.keys import generate_identity

MB = 1_000_000
SEED = 20240601


def _best(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    best = float("inf")
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def throughput(size_mb: int, repeat: int) -> dict[str, float]:
    import pyrage

    data = random.Random(SEED).randbytes(size_mb * MB)
    identity = generate_identity()
    recipient = identity.recipient()
    p_recipient = pyrage.x25519.Recipient.from_str(recipient.encode())
    p_identity = pyrage.x25519.Identity.from_str(identity.encode())

    def ours_encrypt() -> bytes:
        out = io.BytesIO()
        age.encrypt(io.BytesIO(data), out, [recipient])
        return out.getvalue()

    def ours_decrypt(blob: bytes) -> bytes:
        out = io.BytesIO()
        age.decrypt(io.BytesIO(blob), out, [identity])
        return out.getvalue()

    def pyrage_encrypt_io() -> bytes:
        out = io.BytesIO()
        pyrage.encrypt_io(io.BytesIO(data), out, [p_recipient])
        return out.getvalue()

    def pyrage_decrypt_io(blob: bytes) -> bytes:
        out = io.BytesIO()
        pyrage.decrypt_io(io.BytesIO(blob), out, [p_identity])
        return out.getvalue()

    t_oe, ours_blob = _best(repeat, ours_encrypt)
    t_pe, pyrage_blob = _best(repeat, lambda: pyrage.encrypt(data, [p_recipient]))
    t_pei, _ = _best(repeat, pyrage_encrypt_io)
    assert isinstance(ours_blob, bytes) and isinstance(pyrage_blob, bytes)
    # Decrypt each other's files: the comparison is only fair if both are doing the real thing.
    t_od, plain = _best(repeat, lambda: ours_decrypt(pyrage_blob))
    assert plain == data
    t_pd, plain = _best(repeat, lambda: pyrage.decrypt(ours_blob, [p_identity]))
    assert plain == data
    t_pdi, plain = _best(repeat, lambda: pyrage_decrypt_io(ours_blob))
    assert plain == data

    size = len(data) / MB
    results = {
        "ours_encrypt": size / t_oe,
        "pyrage_encrypt_bytes": size / t_pe,
        "pyrage_encrypt_io": size / t_pei,
        "ours_decrypt": size / t_od,
        "pyrage_decrypt_bytes": size / t_pd,
        "pyrage_decrypt_io": size / t_pdi,
    }
    results["encrypt_ratio"] = results["ours_encrypt"] / max(
        results["pyrage_encrypt_bytes"], results["pyrage_encrypt_io"]
    )
    results["decrypt_ratio"] = results["ours_decrypt"] / max(
        results["pyrage_decrypt_bytes"], results["pyrage_decrypt_io"]
    )
    return results


class _GeneratedInput(io.RawIOBase):
    """`total` pseudo-random bytes, produced 1 MiB at a time (never all in memory)."""

    def __init__(self, total: int) -> None:
        self._left = total
        self._rng = random.Random(SEED)
        self.sha256 = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self._left, 1 << 20)
        if n <= 0:
            return 0
        block = self._rng.randbytes(n)
        self.sha256.update(block)
        buffer[:n] = block
        self._left -= n
        return n


class _HashingSink(io.RawIOBase):
    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.sha256.update(data)
        self.size += len(data)
        return len(data)


def _maxrss_mib() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_child(size_mb: int) -> dict[str, float]:
    identity = generate_identity()
    total = size_mb * MB
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.age"
        source = _GeneratedInput(total)
        before = _maxrss_mib()
        with path.open("wb") as dst:
            age.encrypt(source, dst, [identity.recipient()])  # type: ignore[arg-type]
        after_encrypt = _maxrss_mib()
        sink = _HashingSink()
        with path.open("rb") as src:
            age.decrypt(src, sink, [identity])  # type: ignore[arg-type]
        after_decrypt = _maxrss_mib()
        ciphertext = path.stat().st_size
    assert sink.size == total and sink.sha256.digest() == source.sha256.digest()
    return {
        "size_mb": size_mb,
        "ciphertext_mb": ciphertext / MB,
        "rss_before_mib": before,
        "rss_after_encrypt_mib": after_encrypt,
        "rss_after_decrypt_mib": after_decrypt,
        "growth_mib": after_decrypt - before,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_child:
        print(json.dumps(memory_child(args.size_mb)))
        return 0

    # The memory children run first: Linux carries ru_maxrss across fork and exec, so a child
    # started after the parent allocated its 100 MB would report the parent's peak. Two sizes,
    # a tenth and the full one: bounded memory means the same growth for both.
    memory = []
    for size in (max(1, args.size_mb // 10), args.size_mb):
        child = subprocess.run(
            [sys.executable, __file__, "--memory-child", "--size-mb", str(size)],
            capture_output=True,
            text=True,
            check=True,
        )
        memory.append(json.loads(child.stdout))
    speed = throughput(args.size_mb, args.repeat)
    if args.json:
        print(json.dumps({"throughput_mb_s": speed, "memory": memory}, indent=2))
        return 0
    print(f"age, one X25519 recipient, {args.size_mb} MB, best of {args.repeat} (MB/s)")
    for op in ("encrypt", "decrypt"):
        print(
            f"  {op}  ours {speed[f'ours_{op}']:6.0f}   pyrage bytes "
            f"{speed[f'pyrage_{op}_bytes']:6.0f}   pyrage io {speed[f'pyrage_{op}_io']:6.0f}"
            f"   ours/best pyrage {speed[f'{op}_ratio']:.2f}"
        )
    for m in memory:
        print(
            f"streaming {m['size_mb']:>4} MB through our encrypt + decrypt: "
            f"peak RSS {m['rss_after_decrypt_mib']:.1f} MiB, "
            f"{m['growth_mib']:+.1f} MiB over {m['rss_before_mib']:.1f} MiB before streaming"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
