"""The errors of the age format (`age.py`): a file that is malformed, tampered with, truncated,
of another version, or not encrypted to the keys given. Their own module so that the header,
the payload and the key types can all raise them without importing each other."""

from __future__ import annotations

from scrubber.errors import ExitCode, KeyMaterialError, ScrubberError

__all__ = [
    "AgeError",
    "AgeHeaderError",
    "AgeMacError",
    "AgePayloadError",
    "AgeVersionError",
    "NoIdentityMatchedError",
    "ScryptWorkFactorError",
]


class AgeError(ScrubberError):
    """An age file could not be decrypted: malformed, tampered with, or truncated (exit 3)."""


class AgeHeaderError(AgeError):
    """The header is malformed (or the payload nonce is missing): not a valid age v1 file."""


class AgeVersionError(AgeHeaderError):
    """The file is an age file of a format version we do not support (exit 2)."""

    exit_code = ExitCode.USAGE


class ScryptWorkFactorError(AgeHeaderError):
    """A passphrase stanza asks for more scrypt work than we accept (exit 2)."""

    exit_code = ExitCode.USAGE


class AgeMacError(AgeError):
    """The header MAC does not match: the header was modified after it was written."""


class AgePayloadError(AgeError):
    """A payload chunk failed authentication, the payload is truncated, or data follows it."""


class NoIdentityMatchedError(KeyMaterialError, AgeError):
    """None of the identities given can unwrap the file key: the wrong key (exit 2)."""
