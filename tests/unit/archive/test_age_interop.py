"""Interop, both directions: our files open with Debian's `age` and with `pyrage` (rage), theirs
open with ours; keys from `age-keygen` load here and our keys work with `age -i` / `age -R`.

The `age` CLI reads passphrases only from a terminal, so passphrase files are checked with
`pyrage.passphrase`. rage picks its own scrypt work factor (about a second of its work, several
of ours), so files it encrypted with a passphrase are kept in `data/` and checked at two sizes;
the payload code they exercise is the same as for X25519, which runs at every size.
"""

from __future__ import annotations

import functools
import io
import random
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive import age
from scrubber.archive.keys import (
    ScryptIdentity,
    ScryptRecipient,
    X25519Identity,
    generate_identity,
    read_identities_file,
    write_identity_file,
)
from tests.skips import INSTALL_AGE, INSTALL_PYRAGE

SIZES = [0, 1, 65535, 65536, 65537, 200_000, 5 * 1024 * 1024 + 3]
SIZE_IDS = ["0", "1", "65535", "65536", "65537", "200000", "5MiB+3"]

AGE = shutil.which("age")
AGE_KEYGEN = shutil.which("age-keygen")
needs_age = pytest.mark.skipif(AGE is None or AGE_KEYGEN is None, reason=INSTALL_AGE)
sizes = pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)


@functools.cache
def _data(size: int) -> bytes:
    return random.Random(size).randbytes(size)


def _encrypt_ours(data: bytes, recipients: list[age.Recipient]) -> bytes:
    out = io.BytesIO()
    age.encrypt(io.BytesIO(data), out, recipients)
    return out.getvalue()


def _decrypt_ours(blob: bytes, identities: list[age.Identity]) -> bytes:
    out = io.BytesIO()
    age.decrypt(io.BytesIO(blob), out, identities)
    return out.getvalue()


def _run(*args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(args, input=stdin, capture_output=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


# ------------------------------------------------------------------------------- the age CLI


@pytest.fixture(scope="module")
def keygen_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if AGE_KEYGEN is None:
        pytest.skip(INSTALL_AGE)
    path = tmp_path_factory.mktemp("agekeys") / "key.txt"
    _run(AGE_KEYGEN, "-o", str(path))
    return path


@needs_age
def test_age_keygen_output_loads(keygen_file: Path) -> None:
    [identity] = read_identities_file(keygen_file)
    public = _run(str(AGE_KEYGEN), "-y", str(keygen_file)).decode().strip()
    assert identity.recipient().encode() == public
    assert f"# public key: {public}" in keygen_file.read_text()


@needs_age
@sizes
def test_age_cli_decrypts_our_files(tmp_path: Path, keygen_file: Path, size: int) -> None:
    [identity] = read_identities_file(keygen_file)
    src = tmp_path / "file.age"
    src.write_bytes(_encrypt_ours(_data(size), [identity.recipient()]))
    # (stdout, not -o: age creates no output file for an empty plaintext)
    assert _run(str(AGE), "-d", "-i", str(keygen_file), str(src)) == _data(size)


@needs_age
@sizes
def test_we_decrypt_age_cli_files(tmp_path: Path, keygen_file: Path, size: int) -> None:
    [identity] = read_identities_file(keygen_file)
    plain = tmp_path / "plain"
    plain.write_bytes(_data(size))
    enc = tmp_path / "file.age"
    _run(str(AGE), "-r", identity.recipient().encode(), "-o", str(enc), str(plain))
    assert _decrypt_ours(enc.read_bytes(), [identity]) == _data(size)


@needs_age
def test_our_keys_work_with_age_cli(tmp_path: Path) -> None:
    ours = generate_identity()
    key = tmp_path / "ours.key"
    write_identity_file(key, ours, datetime.now(UTC))
    assert _run(str(AGE_KEYGEN), "-y", str(key)).decode().strip() == ours.recipient().encode()
    data = _data(200_000)
    # age -d -i with our identity file opens our file.
    enc = tmp_path / "ours.age"
    enc.write_bytes(_encrypt_ours(data, [ours.recipient()]))
    assert _run(str(AGE), "-d", "-i", str(key), str(enc)) == data
    # age -R with a recipients file we wrote makes a file we open.
    recipients = tmp_path / "recipients.txt"
    recipients.write_text(f"# ours\n{ours.recipient()}\n")
    blob = _run(str(AGE), "-R", str(recipients), stdin=data)
    assert _decrypt_ours(blob, [ours]) == data


@needs_age
def test_several_recipients_with_age_cli(tmp_path: Path, keygen_file: Path) -> None:
    [theirs] = read_identities_file(keygen_file)
    ours = generate_identity()
    data = _data(65537)
    enc = tmp_path / "two.age"
    enc.write_bytes(_encrypt_ours(data, [ours.recipient(), theirs.recipient()]))
    assert _run(str(AGE), "-d", "-i", str(keygen_file), str(enc)) == data
    blob = _run(
        str(AGE), "-r", theirs.recipient().encode(), "-r", ours.recipient().encode(), stdin=data
    )
    assert _decrypt_ours(blob, [ours]) == data
    assert _decrypt_ours(blob, [theirs]) == data


@needs_age
def test_age_cli_refuses_our_truncated_file(tmp_path: Path, keygen_file: Path) -> None:
    [identity] = read_identities_file(keygen_file)
    enc = tmp_path / "cut.age"
    enc.write_bytes(_encrypt_ours(_data(200_000), [identity.recipient()])[:-1])
    done = subprocess.run(
        [str(AGE), "-d", "-i", str(keygen_file), str(enc)], capture_output=True, check=False
    )
    assert done.returncode != 0


# ----------------------------------------------------------------------------------- pyrage


@pytest.fixture(scope="module")
def identity() -> X25519Identity:
    return generate_identity()


@sizes
def test_pyrage_decrypts_our_files(identity: X25519Identity, size: int) -> None:
    pyrage = pytest.importorskip("pyrage", reason=INSTALL_PYRAGE)
    blob = _encrypt_ours(_data(size), [identity.recipient()])
    their_identity = pyrage.x25519.Identity.from_str(identity.encode())
    assert pyrage.decrypt(blob, [their_identity]) == _data(size)


@sizes
def test_we_decrypt_pyrage_files(identity: X25519Identity, size: int) -> None:
    pyrage = pytest.importorskip("pyrage", reason=INSTALL_PYRAGE)
    their_recipient = pyrage.x25519.Recipient.from_str(identity.recipient().encode())
    blob = pyrage.encrypt(_data(size), [their_recipient])
    assert _decrypt_ours(blob, [identity]) == _data(size)


def test_pyrage_keys_load_here() -> None:
    pyrage = pytest.importorskip("pyrage", reason=INSTALL_PYRAGE)
    from scrubber.archive.keys import parse_identity, parse_recipient

    theirs = pyrage.x25519.Identity.generate()
    ours = parse_identity(str(theirs))
    assert ours.recipient() == parse_recipient(str(theirs.to_public()))


@sizes
def test_pyrage_decrypts_our_passphrase_files(size: int) -> None:
    pyrage = pytest.importorskip("pyrage", reason=INSTALL_PYRAGE)
    # work_factor=10 keeps the test fast; the default (18) is asserted in test_age_keys.
    blob = _encrypt_ours(_data(size), [ScryptRecipient("test pass", work_factor=10)])
    assert age.read_header(io.BytesIO(blob)).stanza_types == ("scrypt",)
    assert pyrage.passphrase.decrypt(blob, "test pass") == _data(size)


# Files pyrage 1.4.0 encrypted with the passphrase "test pass", made once with
#     pyrage.passphrase.encrypt(_data(size), "test pass")
# and kept: rage picks its own scrypt work factor from how fast the machine is (19 when these
# were made), and encrypting them in every run cost up to a minute of scrypt in the suite.
PYRAGE_PASSPHRASE_FILES = Path(__file__).parent / "data"


@pytest.mark.parametrize("size", [0, 65537])
def test_we_decrypt_pyrage_passphrase_files(size: int) -> None:
    blob = (PYRAGE_PASSPHRASE_FILES / f"pyrage-passphrase-{size}.age").read_bytes()
    assert age.read_header(io.BytesIO(blob)).stanza_types == ("scrypt",)
    assert _decrypt_ours(blob, [ScryptIdentity("test pass")]) == _data(size)
