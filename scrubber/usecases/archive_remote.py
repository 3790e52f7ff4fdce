"""Archives in object storage, read back: list, verify, fetch for a restore, and the check
retention makes before it deletes a session (`retention.require_archive`).

Keyless, an object counts as intact when the store reports the size its sidecar records and
the checksum computed from the file at upload (`scrub-checksum`, for the `scrub-sha256` the
sidecar holds), which the store itself confirmed then. With a key, the objects are downloaded
into a private temp folder in `$SCRUB_HOME/cache/` and verified like local files. These need
read access (List, Get); a write-only key gets a clear "access denied".
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from scrubber import paths
from scrubber.archive.age import Identity
from scrubber.archive.errors import ArchiveError
from scrubber.archive.layout import SIDECAR_SUFFIX, plain_name
from scrubber.archive.s3 import (
    META_CHECKSUM,
    META_SHA256,
    ObjectStore,
    RemoteObject,
    b64_digest,
)
from scrubber.archive.s3_queue import RemoteName, keys_prefix, parse_key, sidecar_key
from scrubber.archive.sidecar import Sidecar
from scrubber.archive.verify import verify_archive
from scrubber.errors import ScrubberError, UsageError
from scrubber.policy.model import Policy
from scrubber.usecases.archive_push import StoreFactory, s3_destination
from scrubber.usecases.restore import RestoreOutcome, restore_session

_MAX_SIDECAR = 1 << 20


@dataclass(frozen=True, slots=True)
class RemoteArchive:
    bucket: str
    name: RemoteName
    size: int
    sidecar: Sidecar | None = None
    problem: str | None = None

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.name.key}"

    @property
    def last_timestamp(self) -> datetime | None:
        raw = self.sidecar.manifest.get("last_timestamp") if self.sidecar else None
        with contextlib.suppress(TypeError, ValueError):
            return datetime.fromisoformat(str(raw)) if raw else None
        return None


@dataclass(frozen=True, slots=True)
class RemoteVerdict:
    archive: RemoteArchive
    problem: str | None  # None: intact
    full: bool = False  # decrypted and checked file by file


def open_store(policy: Policy, env: Mapping[str, str], factory: StoreFactory) -> ObjectStore:
    return factory(s3_destination(policy, "there is no bucket to read archives from"), env)


def list_remote(
    store: ObjectStore,
    *,
    host: str | None,
    project: str | None = None,
    session: str | None = None,
) -> list[RemoteArchive]:
    """The archives in the bucket (one host's, or every host's when `host` is None), oldest
    first per session, each with its sidecar read. Needs List and Get."""
    destination = store.destination
    prefix = keys_prefix(destination, host)
    if host is not None and project is not None:
        prefix += project + "/"
        if session is not None and len(session) >= 36:
            prefix += session + "/"
    listed = store.list_keys(prefix)
    sizes = dict(listed)
    found: list[RemoteArchive] = []
    for key, size in listed:
        name = parse_key(destination, key)
        if name is None or (session is not None and not name.session_id.startswith(session)):
            continue
        if project is not None and name.project != project:
            continue
        found.append(_with_sidecar(store, name, size, sizes))
    found.sort(key=lambda a: (a.name.host, a.name.project, a.name.session_id, a.name.name))
    return found


def _with_sidecar(
    store: ObjectStore, name: RemoteName, size: int, sizes: Mapping[str, int]
) -> RemoteArchive:
    key = sidecar_key(name.key)
    if key not in sizes:
        return RemoteArchive(
            store.destination.bucket, name, size, problem="no sidecar object beside it"
        )
    try:
        data = store.read_small(key, _MAX_SIDECAR)
        sidecar = Sidecar.from_json(json.loads(data), Path(name.name + SIDECAR_SUFFIX))
    except (ValueError, RecursionError):
        return RemoteArchive(
            store.destination.bucket, name, size, problem="its sidecar object is not valid JSON"
        )
    except ScrubberError as error:
        return RemoteArchive(store.destination.bucket, name, size, problem=error.message)
    return RemoteArchive(store.destination.bucket, name, size, sidecar)


def object_problem(archive: RemoteArchive, found: RemoteObject | None) -> str | None:
    """Why the object in the bucket is not the archive its sidecar describes, or None."""
    sidecar = archive.sidecar
    if sidecar is None:
        return archive.problem or "no sidecar"
    if found is None:
        return "the object is gone from the bucket"
    if found.size != sidecar.size:
        return f"the store holds {found.size} bytes, the sidecar says {sidecar.size}"
    if found.metadata.get(META_SHA256) != sidecar.ciphertext_sha256:
        return "the object's recorded SHA-256 differs from its sidecar's"
    expected = found.metadata.get(META_CHECKSUM)
    single = "-" not in (expected or "-")
    # One part: the store's own checksum is the file's SHA-256 itself.
    if single and expected != b64_digest(bytes.fromhex(sidecar.ciphertext_sha256)):
        return "the object's checksum does not match its SHA-256"
    if found.checksum is None or found.checksum != expected:
        return "the store does not confirm the object's checksum"
    return None


def verify_remote(
    store: ObjectStore,
    archives: Sequence[RemoteArchive],
    home: Path,
    identities: Sequence[Identity] = (),
) -> list[RemoteVerdict]:
    """Keyless (HEAD) checks, or full ones with `identities` (each object downloaded)."""
    verdicts: list[RemoteVerdict] = []
    for archive in archives:
        try:
            problem = object_problem(archive, store.head(archive.name.key))
            if problem is None and identities:
                with mirrored(store, [archive], home) as root:
                    verify_archive(_mirror_path(root, archive.name), identities)
        except ScrubberError as error:
            problem = error.message
        verdicts.append(RemoteVerdict(archive, problem, full=bool(identities) and not problem))
    return verdicts


def _mirror_path(root: Path, name: RemoteName) -> Path:
    return root / name.project / name.session_id / name.name


@contextlib.contextmanager
def mirrored(store: ObjectStore, archives: Sequence[RemoteArchive], home: Path) -> Iterator[Path]:
    """The archives (and sidecars) downloaded into a private temp folder laid out like a
    local archive folder, checked against their sidecars; removed afterwards."""
    cache = paths.ensure_private_dir(home / "cache", home)
    root = Path(tempfile.mkdtemp(prefix="s3-", dir=cache))
    try:
        for archive in archives:
            if archive.sidecar is None:
                raise ArchiveError(f"{archive.url}: {archive.problem or 'no sidecar'}")
            name = archive.name
            folder = (
                root
                / plain_name(name.project, "project")
                / plain_name(name.session_id, "session id")
            )
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            target = folder / plain_name(name.name, "archive name")
            with _private_file(target) as out:
                size, sha256 = store.download(name.key, out, max_size=archive.sidecar.size)
            if size != archive.sidecar.size or sha256 != archive.sidecar.ciphertext_sha256:
                raise ArchiveError(f"{archive.url}: downloaded bytes differ from its sidecar")
            with _private_file(folder / (target.name + SIDECAR_SUFFIX)) as out:
                out.write(archive.sidecar.to_bytes())
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def _private_file(path: Path) -> Iterator[BinaryIO]:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb", buffering=0) as out:
        yield out


def session_in_bucket(
    store: ObjectStore, query: str, host: str | None, project: str | None = None
) -> list[RemoteArchive]:
    """Every archive of the one session `query` (an id or id prefix) names."""
    if len(query) < 4:
        raise UsageError("give at least 4 characters of the session id")
    found = list_remote(store, host=host, project=project, session=query)
    sessions = {(a.name.host, a.name.session_id) for a in found}
    if not found:
        where = f"host {host}" if host else "any host"
        raise UsageError(
            f"no archive of a session matching {query!r} for {where} in {store.destination.url}",
            hint="`scrub archives list --remote --all-hosts` shows what is there",
        )
    if len({s for _h, s in sessions}) > 1:
        raise UsageError(f"{len(sessions)} archived sessions match {query!r}; give more of the id")
    if len(sessions) > 1:
        raise UsageError(
            f"session {query!r} is archived by {len(sessions)} hosts",
            hint="choose one with --host",
        )
    return found


def restore_from_bucket(
    policy: Policy,
    env: Mapping[str, str],
    home: Path,
    query: str,
    identities: Sequence[Identity],
    *,
    host: str | None = None,
    all_hosts: bool = False,
    to: Path | None = None,
    create: bool = False,
    force: bool = False,
    keep_mtime: bool = False,
    warn: Callable[[str], None] = lambda _message: None,
    store_factory: StoreFactory = ObjectStore,
) -> RestoreOutcome:
    """Download a session's archives from the bucket (checked against their sidecars), then
    restore the newest one the key opens, exactly as `scrub restore` does for local files."""
    which = chosen_host(policy, host, all_hosts)
    store = open_store(policy, env, store_factory)
    archives = session_in_bucket(store, query, which)
    with mirrored(store, archives, home) as root:
        return restore_session(
            env,
            archives[0].name.session_id,
            identities,
            archives_root=lambda: root,
            to=to,
            create=create,
            force=force,
            keep_mtime=keep_mtime,
            now=datetime.now(UTC),
            warn=warn,
        )


def chosen_host(policy: Policy, host: str | None, all_hosts: bool) -> str | None:
    """`--host H`, else every host with `--all-hosts`, else this machine's (the policy's)."""
    if host is not None and all_hosts:
        raise UsageError("--host and --all-hosts exclude each other")
    if all_hosts:
        return None
    if host is not None:
        return host
    return s3_destination(policy, "there is no bucket to read archives from").host_name()


@dataclass(frozen=True, slots=True)
class BucketListing:
    url: str
    host: str | None  # None: every host
    archives: list[RemoteArchive]


def list_bucket_archives(
    policy: Policy,
    env: Mapping[str, str],
    *,
    host: str | None = None,
    all_hosts: bool = False,
    sessions: Sequence[str] = (),
    store_factory: StoreFactory = ObjectStore,
) -> BucketListing:
    """The bucket's archives for this host (or `host`, or every host), of the sessions whose
    ids start with one of `sessions` (every session when there is none)."""
    which = chosen_host(policy, host, all_hosts)
    store = open_store(policy, env, store_factory)
    queries: list[str | None] = [*dict.fromkeys(sessions)] or [None]
    found = {a.url: a for q in queries for a in list_remote(store, host=which, session=q)}
    ordered = sorted(
        found.values(), key=lambda a: (a.name.host, a.name.project, a.name.session_id, a.name.name)
    )
    return BucketListing(store.destination.url, which, ordered)


def verify_bucket_archives(
    policy: Policy,
    env: Mapping[str, str],
    home: Path,
    identities: Sequence[Identity] = (),
    *,
    host: str | None = None,
    all_hosts: bool = False,
    store_factory: StoreFactory = ObjectStore,
) -> tuple[BucketListing, list[RemoteVerdict]]:
    which = chosen_host(policy, host, all_hosts)
    store = open_store(policy, env, store_factory)
    archives = list_remote(store, host=which)
    listing = BucketListing(store.destination.url, which, archives)
    return listing, verify_remote(store, archives, home, identities)
