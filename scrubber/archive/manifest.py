"""The manifest of an archive, and its JSON form (`manifest.json`, the payload's first member).

The manifest says what the session is (id, project, cwd, title, tags, first/last timestamp),
what the bundle holds (every file's path, size, mode, mtime and SHA-256), who can read it (the
recipients' fingerprints) and which scrubber wrote it. `bundle.py` collects it and streams the
files it lists; restore and verify read it back before any member.

Anyone who knows the recipient can make an archive (issue 11), so reading a manifest back checks
every field: errors name the field, never its value (a title may quote a secret).

Standard library only (plus errors).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scrubber.archive.bundle_errors import BundleError
from scrubber.errors import ExitCode

__all__ = [
    "MANIFEST_FORMAT",
    "MANIFEST_NAME",
    "MAX_MANIFEST_SIZE",
    "BundleDir",
    "BundleFile",
    "BundleVersionError",
    "Manifest",
    "SessionFacts",
    "Skipped",
    "content_digest",
    "safe_relative_path",
]

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = "scrubber.archive-manifest"
MANIFEST_FORMAT = 1  # bumped only for changes an older reader must refuse
# A manifest takes about 250 bytes per file: 16 MiB is some 60,000 files. It is read whole and
# parsed, and JSON made of empty objects grows some 20 times in memory, so this cap is what
# bounds a hostile manifest's cost (issue 11); a bundle whose manifest would not fit is refused
# when it is archived, not written as an archive that cannot be restored.
MAX_MANIFEST_SIZE = 16 * 1024 * 1024


class BundleVersionError(BundleError):
    """The manifest comes from a newer scrubber (exit 2)."""

    exit_code = ExitCode.USAGE


# ----------------------------------------------------------------------------------- values


def safe_relative_path(name: str) -> str:
    """`name` as a clean relative POSIX path, or BundleError when it could escape its folder:
    absolute, `..`, `.`, empty parts, NUL. Used on every path written to and read from a tar."""
    if not name or "\x00" in name or name.startswith("/"):
        raise BundleError(f"unsafe path in archive: {name[:200]!r}")
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise BundleError(f"unsafe path in archive: {name[:200]!r}")
    return name


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the caller knows about a session; the manifest records it as is."""

    session_id: str
    project: str
    cwd: str | None = None
    title: str | None = field(default=None, repr=False)  # may quote a secret: never printed
    tags: tuple[str, ...] = field(default=(), repr=False)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None

    @property
    def transcript(self) -> str:
        """The transcript's path relative to the config dir."""
        return f"projects/{self.project}/{self.session_id}.jsonl"


@dataclass(frozen=True, slots=True)
class BundleFile:
    path: str  # relative to the config dir, POSIX separators
    size: int
    sha256: str
    mode: int  # permission bits (restore writes 0600 whatever they were)
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class BundleDir:
    path: str
    mode: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """Something in the bundle that is not archived, and why (a symlink, a socket)."""

    path: str
    reason: str


def content_digest(files: Iterable[BundleFile]) -> str:
    """One SHA-256 for a bundle's content: over `path NUL size NUL sha256 LF` of every file,
    sorted by path. Retention compares it with the bundle as it is now."""
    digest = hashlib.sha256()
    for item in sorted(files, key=lambda f: f.path):
        digest.update(f"{item.path}\x00{item.size}\x00{item.sha256}\n".encode())
    return digest.hexdigest()


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat()


def _parse_iso(value: object, key: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BundleError(f"manifest: {key} is not a date")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BundleError(f"manifest: {key} is not a date") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# --------------------------------------------------------------------------------- manifest


@dataclass(frozen=True, slots=True)
class Manifest:
    """The first member of every archive."""

    session: SessionFacts
    files: tuple[BundleFile, ...]
    dirs: tuple[BundleDir, ...]
    created: datetime
    scrubber_version: str
    recipients: tuple[str, ...] = ()  # fingerprints (keys.recipient_fingerprint)
    encrypted: bool = True
    redacted: bool = False
    skipped: tuple[Skipped, ...] = ()
    format_version: int = MANIFEST_FORMAT

    @property
    def content_sha256(self) -> str:
        return content_digest(self.files)

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def transcript(self) -> BundleFile:
        wanted = self.session.transcript
        for item in self.files:
            if item.path == wanted:
                return item
        raise BundleError("manifest: the transcript is not among the files")  # pragma: no cover

    @property
    def sizes(self) -> dict[str, int]:
        return {
            "total": self.total_size,
            "transcript": self.transcript.size,
            "files": len(self.files),
        }

    def to_json(self) -> dict[str, Any]:
        facts = self.session
        return {
            "schema": MANIFEST_SCHEMA,
            "format_version": self.format_version,
            "scrubber_version": self.scrubber_version,
            "created": _iso(self.created),
            "session_id": facts.session_id,
            "project": facts.project,
            "cwd": facts.cwd,
            "title": facts.title,
            "tags": list(facts.tags),
            "first_timestamp": _iso(facts.first_timestamp),
            "last_timestamp": _iso(facts.last_timestamp),
            "transcript": facts.transcript,
            "encrypted": self.encrypted,
            "redacted": self.redacted,
            "recipients": list(self.recipients),
            "sizes": self.sizes,
            "content_sha256": self.content_sha256,
            "files": [
                {
                    "path": f.path,
                    "size": f.size,
                    "sha256": f.sha256,
                    "mode": f"{f.mode:04o}",
                    "mtime_ns": f.mtime_ns,
                }
                for f in self.files
            ],
            "dirs": [{"path": d.path, "mode": f"{d.mode:04o}"} for d in self.dirs],
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest:
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            raise BundleError("manifest.json is not valid JSON") from None
        if not isinstance(value, dict):
            raise BundleError("manifest.json is not a JSON object")
        return cls.from_json(value)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Manifest:
        """Read a manifest back, checking every field (errors name the field, never a value)."""
        # The sections are checked in a fixed order: a manifest wrong in several places is
        # always refused for the same field.
        version = _format_version(value)
        facts = _session_facts(value)
        files = _files(value.get("files"))
        dirs = _dirs(value.get("dirs", []))
        skipped = _skipped(value.get("skipped", []))
        created = _parse_iso(value.get("created"), "created")
        if created is None:
            raise BundleError("manifest: created is missing")
        manifest = cls(
            session=facts,
            files=files,
            dirs=dirs,
            created=created,
            scrubber_version=_required_text(value, "scrubber_version"),
            recipients=_texts("recipients", value.get("recipients", [])),
            encrypted=bool(value.get("encrypted", True)),
            redacted=bool(value.get("redacted", False)),
            skipped=skipped,
            format_version=version,
        )
        _check_paths(manifest)
        recorded = value.get("content_sha256")
        if recorded is not None and recorded != manifest.content_sha256:
            raise BundleError("manifest: content_sha256 does not match its file list")
        return manifest


# ---------------------------------------------------------------- reading manifest.json back


def _required_text(value: dict[str, Any], key: str) -> str:
    item = value.get(key)
    if not isinstance(item, str) or not item:
        raise BundleError(f"manifest: {key} is missing or not text")
    return item


def _optional_text(value: dict[str, Any], key: str) -> str | None:
    return None if value.get(key) is None else _required_text(value, key)


def _texts(key: str, items: object) -> tuple[str, ...]:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise BundleError(f"manifest: {key} is not a list of texts")
    return tuple(items)


def _mode(item: object, key: str) -> int:
    try:
        number = int(str(item), 8)
    except ValueError:
        raise BundleError(f"manifest: {key} is not an octal mode") from None
    if not 0 <= number <= 0o7777:
        raise BundleError(f"manifest: {key} is not a file mode")
    return number


def _number(item: object, key: str) -> int:
    if not isinstance(item, int) or isinstance(item, bool) or item < 0:
        raise BundleError(f"manifest: {key} is not a whole number")
    return item


def _format_version(value: dict[str, Any]) -> int:
    """The manifest's format version, once it is known to be one of ours that we can read."""
    if value.get("schema") != MANIFEST_SCHEMA:
        raise BundleError("manifest.json is not a scrubber archive manifest")
    version = value.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BundleError("manifest: format_version is missing")
    if version > MANIFEST_FORMAT:
        raise BundleVersionError(
            f"the archive was written by a newer scrubber (manifest format {version}, "
            f"this one reads {MANIFEST_FORMAT})",
            hint="upgrade scrubber to read it",
        )
    return version


def _session_facts(value: dict[str, Any]) -> SessionFacts:
    session_id = _required_text(value, "session_id")
    project = _required_text(value, "project")
    # Both are path parts (projects/<project>/<session_id>.jsonl): a `/` or a `..` would name
    # a path outside the session's own.
    for key, name in (("session_id", session_id), ("project", project)):
        if "/" in name or name in (".", ".."):
            raise BundleError(f"manifest: {key} is not a plain name")
    return SessionFacts(
        session_id=session_id,
        project=project,
        cwd=_optional_text(value, "cwd"),
        title=_optional_text(value, "title"),
        tags=_texts("tags", value.get("tags", [])),
        first_timestamp=_parse_iso(value.get("first_timestamp"), "first_timestamp"),
        last_timestamp=_parse_iso(value.get("last_timestamp"), "last_timestamp"),
    )


def _files(raw_files: object) -> tuple[BundleFile, ...]:
    if not isinstance(raw_files, list):
        raise BundleError("manifest: files is not a list")
    return tuple(_file(item, f"files[{index}]") for index, item in enumerate(raw_files))


def _file(item: object, key: str) -> BundleFile:
    if not isinstance(item, dict):
        raise BundleError(f"manifest: {key} is not an object")
    path = item.get("path")
    digest = item.get("sha256")
    if not isinstance(path, str):
        raise BundleError(f"manifest: {key}.path is not text")
    if not (
        isinstance(digest, str)
        and len(digest) == 64
        and all(c in "0123456789abcdef" for c in digest)
    ):
        raise BundleError(f"manifest: {key}.sha256 is not a SHA-256")
    return BundleFile(
        path=safe_relative_path(path),
        size=_number(item.get("size"), f"{key}.size"),
        sha256=digest,
        mode=_mode(item.get("mode"), f"{key}.mode"),
        mtime_ns=_number(item.get("mtime_ns"), f"{key}.mtime_ns"),
    )


def _dirs(raw_dirs: object) -> tuple[BundleDir, ...]:
    if not isinstance(raw_dirs, list):
        raise BundleError("manifest: dirs is not a list")
    dirs: list[BundleDir] = []
    for index, item in enumerate(raw_dirs):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise BundleError(f"manifest: dirs[{index}] is not an object with a path")
        dirs.append(
            BundleDir(
                safe_relative_path(item["path"]), _mode(item.get("mode"), f"dirs[{index}].mode")
            )
        )
    return tuple(dirs)


def _skipped(raw_skipped: Any) -> tuple[Skipped, ...]:
    # Only informative (what was left out when the archive was made): entries that are not
    # objects are ignored rather than refused.
    return tuple(
        Skipped(str(item.get("path", "")), str(item.get("reason", "")))
        for item in raw_skipped or []
        if isinstance(item, dict)
    )


def _check_paths(manifest: Manifest) -> None:
    """The paths a restore would write: each once, none that shadows the manifest or lies below
    a file, and the transcript among them."""
    paths = [f.path for f in manifest.files] + [d.path for d in manifest.dirs]
    if len(set(paths)) != len(paths):
        raise BundleError("manifest: a path is listed twice")
    if MANIFEST_NAME in paths:
        raise BundleError("manifest: a file is named like the manifest")
    if manifest.session.transcript not in {f.path for f in manifest.files}:
        raise BundleError("manifest: the transcript is not among the files")
    _refuse_files_as_folders(manifest.files, paths)


def _refuse_files_as_folders(files: Iterable[BundleFile], paths: Iterable[str]) -> None:
    """A path below a listed file (`a.jsonl/x`) could only be written by replacing that file
    with a folder: no bundle we collect holds one."""
    names = {f.path for f in files}
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent:
            if parent in names:
                raise BundleError(f"manifest: {path[:200]} lies below the file {parent[:200]}")
            parent = parent.rpartition("/")[0]
