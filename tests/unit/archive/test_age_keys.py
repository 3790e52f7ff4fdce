"""Keys: Bech32 (BIP-173 vectors), the age encodings, key files, permissions, fingerprints."""

from __future__ import annotations

import io
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive import age
from scrubber.archive.keys import (
    DEFAULT_SCRYPT_WORK_FACTOR,
    MAX_SCRYPT_WORK_FACTOR,
    ScryptIdentity,
    ScryptRecipient,
    X25519Identity,
    X25519Recipient,
    bech32_decode,
    bech32_encode,
    generate_identity,
    has_loose_permissions,
    identity_file_text,
    parse_identity,
    parse_recipient,
    read_identities_file,
    read_recipients_file,
    recipient_fingerprint,
    write_identity_file,
)
from scrubber.errors import ExitCode, KeyMaterialError

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

# ------------------------------------------------------------------------------------- Bech32
# Test vectors from BIP-173 (https://github.com/bitcoin/bips/blob/master/bip-0173.mediawiki).

BIP173_VALID = [
    "A12UEL5L",
    "a12uel5l",
    "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
    "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
    "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
    "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
    "?1ezyfcl",
]

BIP173_INVALID = [
    "\x201nwldj5",  # HRP character out of range
    "\x7f1axkwrx",
    "pzry9x0s0muk",  # no separator
    "1pzry9x0s0muk",  # empty HRP
    "x1b4n0q5v",  # invalid data character
    "li1dgmt3",  # too short checksum
    "de1lg7wt\xff",  # invalid character in checksum
    "A1G7SGD8",  # checksum calculated with upper-case HRP
    "10a06t8",  # empty HRP
    "1qzzfhee",  # empty HRP
    "a12UEL5L",  # mixed case
]


@pytest.mark.parametrize("text", BIP173_VALID)
def test_bip173_valid_strings_decode(text: str) -> None:
    hrp, _ = bech32_decode(text)
    assert hrp == text[: text.rfind("1")]


@pytest.mark.parametrize("text", BIP173_INVALID)
def test_bip173_invalid_strings_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        bech32_decode(text)


@pytest.mark.parametrize("size", [0, 1, 20, 31, 32, 33, 100])
def test_bech32_roundtrip_without_length_limit(size: int) -> None:
    data = bytes(range(size))
    encoded = bech32_encode("age", data)
    assert bech32_decode(encoded) == ("age", data)
    assert bech32_decode(encoded.upper()) == ("AGE", data)


def test_bech32_detects_a_changed_character() -> None:
    encoded = bech32_encode("age", bytes(32))
    changed = encoded[:10] + ("q" if encoded[10] != "q" else "p") + encoded[11:]
    with pytest.raises(ValueError, match="checksum"):
        bech32_decode(changed)


# ---------------------------------------------------------------------------------- age keys


def test_spec_example_key_pair() -> None:
    # The age spec's example: the identity of 32 bytes 0x42 and its recipient. The secret is
    # assembled here so the repository holds no literal that looks like a live key.
    identity = X25519Identity(b"\x42" * 32)
    assert identity.encode() == "AGE-SECRET-KEY-1" + "GFPYYSJZ" * 6 + "GFPQ4EGAEX"
    assert identity.recipient().encode() == (
        "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
    )
    assert parse_identity(identity.encode()) == identity


def test_generated_identity_roundtrips() -> None:
    identity = generate_identity()
    text = identity.encode()
    assert text.startswith("AGE-SECRET-KEY-1") and text == text.upper()
    assert parse_identity(text) == identity
    recipient = identity.recipient()
    assert str(recipient).startswith("age1")
    assert parse_recipient(str(recipient)) == recipient
    assert generate_identity() != identity


def test_reprs_never_show_secrets() -> None:
    identity = generate_identity()
    secret = identity.encode()
    assert secret not in repr(identity) and secret not in str(identity)
    assert identity.secret_key.hex() not in repr(identity)
    passphrase = "correct" + "-horse-" + os.urandom(4).hex()  # pragma: allowlist secret
    assert passphrase not in repr(ScryptIdentity(passphrase))
    assert passphrase not in repr(ScryptRecipient(passphrase, work_factor=10))


def _corrupt(text: str) -> str:
    """Change one data character in the middle, keeping the case."""
    i = len(text) // 2
    replacement = "Q" if text[i].upper() != "Q" else "P"
    if text == text.lower():
        replacement = replacement.lower()
    return text[:i] + replacement + text[i + 1 :]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda s: s.lower(), "upper case"),
        (_corrupt, "checksum"),
        (lambda s: s[:-1], "checksum"),
        (lambda s: s + "Q", "checksum"),
        (lambda s: s.replace("AGE-SECRET-KEY-", "AGE-SECRET-KEY-PQ-"), "post-quantum"),
        (lambda s: s.replace("AGE-SECRET-KEY-", "AGE-PLUGIN-X-"), "plugin"),
        (lambda s: "age1" + s[16:].lower(), "recipient"),
        (lambda s: "", "not an age secret key"),
    ],
)
def test_malformed_identity_errors_never_show_the_key(make: object, reason: str) -> None:
    secret = generate_identity().encode()
    bad = make(secret)  # type: ignore[operator]
    with pytest.raises(KeyMaterialError, match=reason) as caught:
        parse_identity(bad)
    message = str(caught.value)
    assert "\n" not in message
    assert secret[16:30] not in message and secret[16:30].lower() not in message
    assert caught.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda r, i: r.upper(), "lower case"),
        (lambda r, i: _corrupt(r), "checksum"),
        (lambda r, i: i, "secret key"),
        (lambda r, i: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", "SSH"),
        (lambda r, i: bech32_encode("age1pq", bytes(64)), "not supported"),
        (lambda r, i: bech32_encode("age", bytes(31)), "32 bytes"),
        (lambda r, i: "hello", "not an age1"),
    ],
)
def test_malformed_recipient_errors(make: object, reason: str) -> None:
    identity = generate_identity()
    bad = make(identity.recipient().encode(), identity.encode())  # type: ignore[operator]
    with pytest.raises(KeyMaterialError, match=reason) as caught:
        parse_recipient(bad)
    assert identity.encode()[16:30] not in str(caught.value)


# --------------------------------------------------------------------------------- key files


def test_identity_file_in_age_keygen_layout(tmp_path: Path) -> None:
    identity = generate_identity()
    path = tmp_path / "key.txt"
    write_identity_file(path, identity, NOW)
    text = path.read_text()
    assert text == identity_file_text(identity, NOW)
    assert text.startswith("# created: 2025-01-02T03:04:05+00:00\n")
    assert f"# public key: {identity.recipient()}\n" in text
    assert (path.stat().st_mode & 0o777) == 0o600
    assert not has_loose_permissions(path)
    assert read_identities_file(path) == [identity]
    with pytest.raises(KeyMaterialError, match="already exists"):
        write_identity_file(path, generate_identity(), NOW)
    assert read_identities_file(path) == [identity]


def test_key_files_skip_comments_and_blank_lines(tmp_path: Path) -> None:
    a, b = generate_identity(), generate_identity()
    ids = tmp_path / "ids"
    ids.write_text(f"# comment\n\n{a.encode()}\r\n  \n# {b.recipient()}\n{b.encode()}\n")
    assert read_identities_file(ids) == [a, b]
    recipients = tmp_path / "recipients"
    recipients.write_text(f"# team\n{a.recipient()}\n\n{b.recipient()}  \n")
    assert read_recipients_file(recipients) == [a.recipient(), b.recipient()]


def test_key_file_errors_name_the_line_not_the_key(tmp_path: Path) -> None:
    a = generate_identity()
    path = tmp_path / "ids"
    bad = _corrupt(a.encode())
    path.write_text(f"# c\n{a.encode()}\n{bad}\n")
    with pytest.raises(KeyMaterialError) as caught:
        read_identities_file(path)
    message = str(caught.value)
    assert f"{path} line 3" in message
    assert bad[16:30] not in message and a.encode()[16:30] not in message


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "no identity found"),
        (b"# only a comment\n\n", "no identity found"),
        (b"age-encryption.org/v1\n-> scrypt x 18\n", "age-encrypted"),
        (b"-----BEGIN " + b"OPENSSH PRIVATE KEY-----\nxx\n", "SSH"),
        (b"\xff\xfe\x00", "not a text file"),
    ],
)
def test_identity_file_problems(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "ids"
    path.write_bytes(content)
    with pytest.raises(KeyMaterialError, match=reason):
        read_identities_file(path)


def test_missing_key_files_are_key_errors(tmp_path: Path) -> None:
    with pytest.raises(KeyMaterialError, match="not found") as caught:
        read_identities_file(tmp_path / "nope")
    assert caught.value.exit_code == ExitCode.USAGE
    with pytest.raises(KeyMaterialError, match="not found"):
        read_recipients_file(tmp_path / "nope")


def test_recipients_file_refuses_a_secret_key(tmp_path: Path) -> None:
    path = tmp_path / "recipients"
    path.write_text(generate_identity().encode() + "\n")
    with pytest.raises(KeyMaterialError, match=r"line 1: .*secret key"):
        read_recipients_file(path)


@pytest.mark.parametrize(
    ("mode", "loose"),
    [(0o600, False), (0o400, False), (0o640, True), (0o604, True), (0o620, True), (0o644, True)],
)
def test_loose_permissions(tmp_path: Path, mode: int, loose: bool) -> None:
    path = tmp_path / "key"
    path.write_text("x")
    path.chmod(mode)
    assert has_loose_permissions(path) is loose


def test_loose_permissions_on_a_missing_file_is_a_key_error(tmp_path: Path) -> None:
    with pytest.raises(KeyMaterialError, match="cannot read"):
        has_loose_permissions(tmp_path / "missing")


# --------------------------------------------------------------------------------- passphrase


def test_scrypt_defaults() -> None:
    assert DEFAULT_SCRYPT_WORK_FACTOR == 18
    assert MAX_SCRYPT_WORK_FACTOR == 22
    assert ScryptRecipient("pw").work_factor == 18
    assert ScryptIdentity("pw").max_work_factor == 22
    with pytest.raises(KeyMaterialError):
        ScryptRecipient("pw", work_factor=23)
    with pytest.raises(KeyMaterialError):
        ScryptIdentity("pw", max_work_factor=23)
    with pytest.raises(KeyMaterialError, match="empty"):
        ScryptRecipient("")


def test_scrypt_stanza_shape_and_roundtrip() -> None:
    [stanza] = ScryptRecipient("pw", work_factor=10).wrap(bytes(16))
    assert stanza.args[0] == "scrypt" and stanza.args[2] == "10"
    assert len(age.decode_base64(stanza.args[1])) == 16
    out = io.BytesIO()
    age.encrypt(io.BytesIO(b"hello"), out, [ScryptRecipient("pw", work_factor=10)])
    plain = io.BytesIO()
    age.decrypt(io.BytesIO(out.getvalue()), plain, [ScryptIdentity("pw")])
    assert plain.getvalue() == b"hello"
    with pytest.raises(age.NoIdentityMatchedError):
        age.decrypt(io.BytesIO(out.getvalue()), io.BytesIO(), [ScryptIdentity("wrong")])
    # An X25519 identity does not match a passphrase file (and vice versa).
    with pytest.raises(age.NoIdentityMatchedError, match="passphrase"):
        age.decrypt(io.BytesIO(out.getvalue()), io.BytesIO(), [generate_identity()])


def test_scrypt_work_factor_limit_on_read() -> None:
    out = io.BytesIO()
    age.encrypt(io.BytesIO(b"x"), out, [ScryptRecipient("pw", work_factor=12)])
    with pytest.raises(age.ScryptWorkFactorError, match="12") as caught:
        age.decrypt(io.BytesIO(out.getvalue()), io.BytesIO(), [ScryptIdentity("pw", 11)])
    assert caught.value.exit_code == ExitCode.USAGE
    # Raising the stanza's factor above 22 by hand is refused before any scrypt work is done.
    blob = out.getvalue().replace(b" 12\n", b" 23\n", 1)
    with pytest.raises(age.ScryptWorkFactorError):
        age.decrypt(io.BytesIO(blob), io.BytesIO(), [ScryptIdentity("pw")])


def test_passphrase_cannot_be_mixed_with_other_recipients() -> None:
    recipients = [ScryptRecipient("pw", work_factor=4), generate_identity().recipient()]
    with pytest.raises(KeyMaterialError, match="passphrase"):
        age.encrypt(io.BytesIO(b"x"), io.BytesIO(), recipients)


# ------------------------------------------------------------------------------- fingerprints


def test_recipient_fingerprint() -> None:
    a, b = generate_identity().recipient(), generate_identity().recipient()
    fa = recipient_fingerprint(a)
    assert len(fa) == 16 and int(fa, 16) >= 0
    assert fa == recipient_fingerprint(X25519Recipient(a.public_key))
    assert fa != recipient_fingerprint(b)
    # No hash of a passphrase: it would allow offline guessing around scrypt.
    assert recipient_fingerprint(ScryptRecipient("one", work_factor=4)) == "passphrase"
    assert recipient_fingerprint(ScryptRecipient("two", work_factor=4)) == "passphrase"
