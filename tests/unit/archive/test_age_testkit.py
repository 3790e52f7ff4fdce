"""Conformance: every official age test vector (C2SP CCTV, ../shared/age-testkit) we can run.

Each vector is one test. For X25519, scrypt, header and STREAM vectors we check the exact
outcome (success / no match / HMAC failure / header failure / payload failure) and the SHA-256
of all the plaintext released, including what was released before a failure. ASCII armor and
post-quantum vectors are skipped with their reason (`pytest -ra` lists the counts).
"""

from __future__ import annotations

import hashlib
import io
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from scrubber.archive import age
from scrubber.archive.keys import AnyIdentity, ScryptIdentity, parse_identity
from tests.skips import needs_shared

TESTKIT = Path(__file__).resolve().parents[3] / ".." / "shared" / "age-testkit"

KNOWN_KEYS = {"expect", "payload", "identity", "passphrase", "armored", "file key", "comment"}
KNOWN_KEYS |= {"compressed"}
OUTCOMES = {"success", "no match", "HMAC failure", "header failure", "payload failure"}


@dataclass(frozen=True, slots=True)
class Vector:
    name: str
    meta: dict[str, list[str]]
    body: bytes
    skip_reason: str | None

    @property
    def expect(self) -> str:
        return self.meta["expect"][0]


def _load(path: Path) -> Vector:
    raw = path.read_bytes()
    head, _, body = raw.partition(b"\n\n")
    meta: dict[str, list[str]] = {}
    for line in head.decode("utf-8").splitlines():
        key, _, value = line.partition(": ")
        meta.setdefault(key, []).append(value)
    skip: str | None = None
    unknown = set(meta) - KNOWN_KEYS
    if unknown:
        skip = f"unknown vector keys {sorted(unknown)}"
    elif meta.get("armored") == ["yes"] or meta["expect"] == ["armor failure"]:
        skip = "ASCII armor is not implemented"
    elif any(i.startswith("AGE-SECRET-KEY-PQ-") for i in meta.get("identity", [])):
        skip = "post-quantum (ML-KEM hybrid) recipients are not implemented"
    elif meta["expect"][0] not in OUTCOMES:
        skip = f"unknown expected outcome {meta['expect'][0]!r}"
    if meta.get("compressed") == ["zlib"]:
        body = zlib.decompress(body)
    elif "compressed" in meta and skip is None:
        skip = f"unknown compression {meta['compressed']}"
    return Vector(path.name, meta, body, skip)


def _vectors() -> list[Vector]:
    if not TESTKIT.is_dir():
        return []
    return [_load(p) for p in sorted(TESTKIT.iterdir()) if p.is_file() and p.name != "README.md"]


VECTORS = _vectors()


def _identities(vector: Vector) -> list[AnyIdentity]:
    ids: list[AnyIdentity] = [parse_identity(i) for i in vector.meta.get("identity", [])]
    ids += [ScryptIdentity(p) for p in vector.meta.get("passphrase", [])]
    return ids


def _run(vector: Vector) -> tuple[str, bytes]:
    released = io.BytesIO()
    try:
        age.decrypt(io.BytesIO(vector.body), released, _identities(vector))
    except age.NoIdentityMatchedError:
        outcome = "no match"
    except age.AgeMacError:
        outcome = "HMAC failure"
    except age.AgeHeaderError:
        outcome = "header failure"
    except age.AgePayloadError:
        outcome = "payload failure"
    else:
        outcome = "success"
    return outcome, released.getvalue()


@pytest.mark.parametrize(
    "vector",
    [pytest.param(v, id=v.name) for v in VECTORS] or [pytest.param(None, id="testkit-absent")],
)
def test_vector(vector: Vector | None) -> None:
    if vector is None:
        pytest.skip(needs_shared("age-testkit"))
    if vector.skip_reason:
        pytest.skip(vector.skip_reason)
    outcome, released = _run(vector)
    comment = vector.meta.get("comment", [""])[0]
    assert outcome == vector.expect, comment
    if "payload" in vector.meta:
        assert hashlib.sha256(released).hexdigest() == vector.meta["payload"][0]
    else:
        # Failures before the payload (header, MAC, no match) must release nothing at all.
        assert released == b""


def test_vector_coverage() -> None:
    """Say how many vectors ran and why the others were skipped; make sure most of them ran."""
    if not VECTORS:
        pytest.skip(needs_shared("age-testkit"))
    skipped = Counter(v.skip_reason for v in VECTORS if v.skip_reason)
    ran = [v for v in VECTORS if not v.skip_reason]
    by_outcome = Counter(v.expect for v in ran)
    print(f"\nage testkit: {len(VECTORS)} vectors, {len(ran)} run {dict(by_outcome)}")
    for reason, count in skipped.items():
        print(f"  skipped {count}: {reason}")
    # 92 of the 143 vectors of CCTV commit 1e3d286 are neither armor nor post-quantum.
    assert len(ran) >= 90
    assert set(by_outcome) == OUTCOMES  # every kind of outcome is exercised
    assert not any("unknown" in (r or "") for r in skipped)
    # The families the brief names are all there.
    for prefix in ("x25519", "scrypt", "stanza", "hmac", "stream", "header", "version"):
        assert any(v.name.startswith(prefix) for v in ran), prefix
