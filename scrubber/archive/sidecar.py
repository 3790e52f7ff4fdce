"""The sidecar `<archive>.json`: what may be read without a key (the manifest fields the policy
allows in clear, the SHA-256 and size of the file as written, the recipients' fingerprints, the
stanza types of the age header, the bundle's content hash and the format version). It is not
authenticated: keyless checks against it catch corruption, not tampering."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from scrubber.archive.errors import (
    ArchiveVersionError,
    SidecarError,
)
from scrubber.archive.manifest import Manifest, SessionFacts
from scrubber.errors import UsageError
from scrubber.untrusted import DamagedDocument, load_json

SIDECAR_SCHEMA = "scrubber.archive-sidecar"


SIDECAR_FORMAT = 1


# The manifest fields a sidecar may hold in clear: the policy's `clear_manifest_fields` values.
# (The path itself always shows project, session id and last timestamp: the Contracts fix it.)
CLEAR_FIELDS = (
    "session_id",
    "project",
    "cwd",
    "title",
    "tags",
    "first_timestamp",
    "last_timestamp",
    "sizes",
)


_MAX_SIDECAR = 1 << 20


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def clear_manifest(
    manifest: Manifest,
    fields: Collection[str],
    redact_text: Callable[[str], str] | None = None,
    facts: SessionFacts | None = None,
) -> dict[str, Any]:
    """The manifest fields the policy allows in clear, of `facts` (default the manifest's:
    the caller passes them as shown, their secrets replaced). `redact_text`, when given, is
    applied to every free-text and path field first: title, tags, cwd and project (a secret
    can hide in each; a cwd names the project folder)."""
    unknown = set(fields) - set(CLEAR_FIELDS)
    if unknown:
        raise UsageError(f"unknown manifest field(s) for the sidecar: {', '.join(sorted(unknown))}")
    facts = manifest.session if facts is None else facts

    def text(value: str) -> str:
        return redact_text(value) if redact_text is not None else value

    values: dict[str, Any] = {
        "session_id": facts.session_id,
        "project": text(facts.project),
        "cwd": None if facts.cwd is None else text(facts.cwd),
        "title": None if facts.title is None else text(facts.title),
        "tags": [text(tag) for tag in facts.tags],
        "first_timestamp": _iso(facts.first_timestamp),
        "last_timestamp": _iso(facts.last_timestamp),
        "sizes": manifest.sizes,
    }
    return {name: values[name] for name in CLEAR_FIELDS if name in fields}


@dataclass(frozen=True, slots=True)
class Sidecar:
    """What is known of an archive without its key."""

    archive: str  # the archive's file name
    encrypted: bool
    redacted: bool
    size: int
    ciphertext_sha256: str  # SHA-256 of the file as written (the ciphertext when encrypted)
    content_sha256: str  # the bundle's content digest (bundle.content_digest)
    recipients: tuple[str, ...]  # fingerprints; "passphrase" for a passphrase
    stanza_types: tuple[str, ...]  # the age header's stanza types, in order
    created: datetime
    scrubber_version: str
    manifest: Mapping[str, Any] = field(default_factory=dict, hash=False, repr=False)
    format_version: int = SIDECAR_FORMAT

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SIDECAR_SCHEMA,
            "format_version": self.format_version,
            "scrubber_version": self.scrubber_version,
            "archive": self.archive,
            "created": _iso(self.created),
            "encrypted": self.encrypted,
            "redacted": self.redacted,
            "size": self.size,
            "ciphertext_sha256": self.ciphertext_sha256,
            "content_sha256": self.content_sha256,
            "recipients": list(self.recipients),
            "stanza_types": list(self.stanza_types),
            "manifest": dict(self.manifest),
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, value: object, origin: Path) -> Sidecar:
        if not isinstance(value, dict) or value.get("schema") != SIDECAR_SCHEMA:
            raise SidecarError(f"{origin}: not a scrubber archive sidecar")
        version = value.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise SidecarError(f"{origin}: format_version is missing")
        if version > SIDECAR_FORMAT:
            raise ArchiveVersionError(
                f"{origin}: written by a newer scrubber (sidecar format {version}, this one "
                f"reads {SIDECAR_FORMAT})",
                hint="upgrade scrubber to verify or list this archive",
            )

        def get(key: str, kind: type | tuple[type, ...]) -> Any:
            item = value.get(key)
            if not isinstance(item, kind) or isinstance(item, bool) is not (kind is bool):
                raise SidecarError(f"{origin}: {key} is missing or malformed")
            return item

        def digest(key: str) -> str:
            item = get(key, str)
            if not re.fullmatch(r"[0-9a-f]{64}", item):
                raise SidecarError(f"{origin}: {key} is not a SHA-256")
            return cast(str, item)

        def texts(key: str) -> tuple[str, ...]:
            items = get(key, list)
            if not all(isinstance(i, str) for i in items):
                raise SidecarError(f"{origin}: {key} is not a list of texts")
            return tuple(items)

        try:
            created = datetime.fromisoformat(get("created", str))
        except ValueError:
            raise SidecarError(f"{origin}: created is not a date") from None
        size = get("size", int)
        if size < 0:
            raise SidecarError(f"{origin}: size is negative")
        return cls(
            archive=get("archive", str),
            encrypted=get("encrypted", bool),
            redacted=get("redacted", bool),
            size=size,
            ciphertext_sha256=digest("ciphertext_sha256"),
            content_sha256=digest("content_sha256"),
            recipients=texts("recipients"),
            stanza_types=texts("stanza_types"),
            created=created,
            scrubber_version=get("scrubber_version", str),
            manifest=get("manifest", dict),
            format_version=version,
        )


def read_sidecar(path: Path) -> Sidecar:
    """The sidecar at `path`. Raises SidecarError when it is missing, not a regular file (a FIFO
    would block a plain open for good), too large or damaged. A link is followed: the sidecar
    lies next to an archive the user may have linked or copied there."""
    try:
        value = load_json(path, _MAX_SIDECAR, follow=True)
    except FileNotFoundError:
        raise SidecarError(
            f"{path.name}: no sidecar next to the archive",
            hint="verify it with -i IDENTITY (a full decrypt needs no sidecar)",
        ) from None
    except OSError as exc:
        raise SidecarError(f"{path}: cannot read the sidecar ({exc.strerror})") from None
    except DamagedDocument as damaged:
        raise SidecarError(f"{path}: the sidecar is damaged: {damaged.problem}") from None
    return Sidecar.from_json(value, path)
