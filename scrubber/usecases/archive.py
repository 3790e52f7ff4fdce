"""The archive use case, where discovery, the policy and the archive format meet.

Which sessions (named ones, `--all`, `--older-than`, `--project`), to whom (recipients from the
flags, else from the policy; or one passphrase), in clear or not (Contracts: archives are
encrypted whenever recipients are known; `--encrypt` makes that mandatory; without recipients
only redacted archives may be written), and where (`--output`, else the policy's destination,
else `$SCRUB_HOME/archives`). The CLI and the SessionEnd worker both call `archive_sessions`.

Redacted archives go through a `BundleRedactor`: every file of the bundle is copied, redacted,
into a private staging folder shaped like a config dir, and the archive is made from there.
The redaction engine provides the real one (`engine_redactor`, on `usecases.redact.redact_copy`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from scrubber import __version__, paths
from scrubber.archive.bundle import (
    BundleChangedError,
    BundleContents,
    BundleError,
    Progress,
    SessionFacts,
    collect_bundle,
    content_digest,
    walk_bundle,
)
from scrubber.archive.keys import (
    AnyRecipient,
    ScryptRecipient,
    X25519Recipient,
    parse_recipient,
    read_recipients_file,
)
from scrubber.archive.leftovers import remove_leftovers, staging_folder
from scrubber.archive.write import WrittenArchive, check_destination, write_archive
from scrubber.detection.known_values import KnownValues
from scrubber.errors import InputError, KeyMaterialError, ScrubberError, UsageError
from scrubber.policy.model import Policy, ThinkingMode
from scrubber.redaction.project_name import path_shown
from scrubber.transcript.sessions import SessionInfo, discover, find_session
from scrubber.usecases.archive_shown import (
    TEXT_FIELDS,
    SessionShown,
    redact_bundle,
    session_values,
)
from scrubber.usecases.reported_projects import ReportedNames

if TYPE_CHECKING:
    from scrubber.detection.scan import SecretScanner
    from scrubber.usecases.archive_push import PushOutcome

__all__ = [
    "ArchiveOutcome",
    "BundleRedactor",
    "Encryption",
    "Selection",
    "archive_session",
    "archive_sessions",
    "bundle_bytes",
    "bundle_digest",
    "engine_redactor",
    "facts_of",
    "resolve_encryption",
    "select_sessions",
]

# A file that changed between the hashing pass and the streaming pass (a live session) is
# retried this many times before the session is reported as failed.
_CHANGED_RETRIES = 2


# ---------------------------------------------------------------------------------- which


@dataclass(frozen=True, slots=True)
class Selection:
    sessions: tuple[str, ...] = ()  # ids, id prefixes or titles
    all: bool = False
    # `--older-than`: sessions whose last activity is before this moment (the CLI turns the
    # duration or date it was given into one, as `--since` does).
    active_before: datetime | None = None
    projects: tuple[str, ...] = ()  # parts of the project folder name, or exact cwds

    @property
    def is_filter(self) -> bool:
        return self.all or self.active_before is not None or bool(self.projects)


def _in_project(session: SessionInfo, project: str) -> bool:
    # An empty part would be in every name: it matches nothing (the CLI refuses it first).
    return bool(project.strip()) and (project in session.project or project == (session.cwd or ""))


def select_sessions(config_dir: Path, selection: Selection, *, now: datetime) -> list[SessionInfo]:
    """The sessions a selection names. UsageError when it names nothing or is contradictory."""
    if selection.sessions and selection.is_filter:
        raise UsageError(
            "name sessions, or select them with --all / --older-than / --project, not both"
        )
    if not selection.sessions and not selection.is_filter:
        raise UsageError(
            "no session selected",
            hint="name sessions (id, id prefix or title), or pass --all, --older-than 7d "
            "or --project P",
        )
    paths.require_config_dir(config_dir)
    discovery = discover(config_dir)
    if selection.sessions:
        chosen: dict[tuple[str, str], SessionInfo] = {}
        for query in selection.sessions:
            found = find_session(config_dir, query, discovery=discovery)
            chosen.setdefault((found.project, found.id), found)
        return list(chosen.values())
    for project in selection.projects:  # each one given must name something: a typo is not "none"
        if not any(_in_project(session, project) for session in discovery.sessions):
            raise UsageError(f"no session matches --project {project}")
    picked: list[SessionInfo] = []
    cutoff = selection.active_before
    for session in discovery.sessions:
        if selection.projects and not any(_in_project(session, p) for p in selection.projects):
            continue
        # Future times (clock skew, bulk-rewritten mtimes) count as now.
        if cutoff is not None and min(session.last_activity, now) >= cutoff:
            continue
        picked.append(session)
    return picked


def facts_of(session: SessionInfo) -> SessionFacts:
    return SessionFacts(
        session_id=session.id,
        project=session.project,
        cwd=session.cwd,
        title=session.title,
        tags=session.tags,
        first_timestamp=session.first_timestamp,
        last_timestamp=session.last_timestamp,
    )


# ---------------------------------------------------------------------------------- to whom


@dataclass(frozen=True, slots=True)
class Encryption:
    recipients: tuple[AnyRecipient, ...]
    source: str  # "flags", "policy", "passphrase", or "none" (a clear, redacted archive)

    @property
    def encrypted(self) -> bool:
        return bool(self.recipients)


def policy_recipients(policy: Policy) -> list[X25519Recipient]:
    """The policy's archive recipients (inline and from its recipients file)."""
    found: list[X25519Recipient] = []
    for index, text in enumerate(policy.archive.recipients):
        try:
            found.append(parse_recipient(text))
        except KeyMaterialError as exc:
            raise KeyMaterialError(f"archive.recipients[{index}]: {exc.message}") from None
    if policy.archive.recipients_file is not None:
        found.extend(read_recipients_file(policy.archive.recipients_file))
    return found


def resolve_encryption(
    policy: Policy,
    *,
    recipients: Sequence[str] = (),
    recipients_files: Sequence[Path] = (),
    passphrase: str | None = None,
    encrypt: bool = False,
    redact: bool = False,
) -> Encryption:
    """Who archives are encrypted to: the flags' recipients, else a passphrase, else the
    policy's. Raises KeyMaterialError for bad keys or `--encrypt` without any, UsageError for
    an unencrypted archive of unredacted sessions."""
    given: list[X25519Recipient] = []
    for index, text in enumerate(recipients, start=1):
        try:
            given.append(parse_recipient(text))
        except KeyMaterialError as exc:
            raise KeyMaterialError(f"-r #{index}: {exc.message}", exc.hint) from None
    for path in recipients_files:
        given.extend(read_recipients_file(path))
    if passphrase is not None:
        if given:
            raise KeyMaterialError(
                "--passphrase cannot be combined with -r / -R: an age file encrypted to a "
                "passphrase has no other recipient"
            )
        return Encryption((ScryptRecipient(passphrase),), "passphrase")
    source = "flags"
    if not given:
        given = policy_recipients(policy)
        source = "policy"
    unique = list({r.encode(): r for r in given}.values())
    if unique:
        return Encryption(tuple(unique), source)
    if encrypt:
        raise KeyMaterialError(
            "--encrypt: no recipient to encrypt to",
            hint="pass -r age1… / -R FILE / --passphrase, or set archive.recipients in the "
            "policy (`scrub keygen` makes a key pair)",
        )
    if not redact:
        raise UsageError(
            "refusing to archive unredacted sessions in clear: no recipients are configured",
            hint="pass --encrypt -r age1… (or set archive.recipients in the policy), or --redact",
        )
    return Encryption((), "none")


# ----------------------------------------------------------------------------- redaction


class BundleRedactor(Protocol):
    """Writes redacted copies of the files of one session bundle, (source, target) pairs
    (no target exists yet; their folders do), and returns the values it found in them. Its
    `scanner` shows the session's texts and paths as the redaction does (archive_shown.py)."""

    @property
    def scanner(self) -> SecretScanner: ...

    def __call__(self, pairs: Sequence[tuple[Path, Path]]) -> KnownValues: ...


def _scanner(policy: Policy, home: Path) -> SecretScanner:
    from scrubber.detection.registry import build_scanner

    return build_scanner(policy, home)


def engine_redactor(policy: Policy, scanner: SecretScanner) -> BundleRedactor:
    """The redaction engine's copier (`archive_shown.redact_bundle`, on
    `scrubber.usecases.redact.redact_copies`), imported only when `--redact` asks for it:
    transcripts have their string leaves redacted, text files their text, thinking as the
    policy says (`redaction.thinking`, default redact for copies), and a value found in any
    file of the bundle in all of them. Binary files cannot be redacted and are left out of the
    redacted bundle."""
    return _EngineRedactor(scanner, policy.redaction.thinking)


@dataclass(frozen=True, slots=True)
class _EngineRedactor:
    scanner: SecretScanner
    thinking: ThinkingMode

    def __call__(self, pairs: Sequence[tuple[Path, Path]]) -> KnownValues:
        return redact_bundle(pairs, self.scanner, self.thinking)


@dataclass(frozen=True, slots=True)
class _Staged:
    paths: list[Path]  # the staged top-level paths
    known: KnownValues  # the values the redaction found


def _stage_redacted(
    config_dir: Path, paths: Sequence[Path], staging: Path, redactor: BundleRedactor
) -> _Staged:
    """Redacted copies of a bundle under `staging`, and the values found in it."""
    pairs: list[tuple[Path, Path]] = []
    mtimes: list[int] = []
    for source, rel, st in walk_bundle(config_dir, paths):
        target = staging / rel
        if stat.S_ISDIR(st.st_mode):
            target.mkdir(parents=True, exist_ok=True, mode=0o700)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue  # symlinks are neither followed nor copied, as in a plain archive
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        pairs.append((source, target))
        mtimes.append(st.st_mtime_ns)
    known = redactor(pairs) if pairs else KnownValues()
    for (_source, target), mtime_ns in zip(pairs, mtimes, strict=True):
        # The source's mtime (the manifest records it); a file the redactor could not copy
        # (binary) is simply not there.
        with contextlib.suppress(FileNotFoundError):
            os.utime(target, ns=(mtime_ns, mtime_ns))
    staged = (staging / p.relative_to(config_dir) for p in paths)
    return _Staged([p for p in staged if os.path.lexists(p)], known)


def _rename_project(staging: Path, staged: list[Path], project: str, shown: str) -> list[Path]:
    """Move the staged `projects/<project>/` to `projects/<shown>/` (a redacted archive holds
    its files under the project folder's name as shown: the real one can hold a secret in its
    folder form); returns `staged` moved with it."""
    old, new = paths.projects_dir(staging) / project, paths.projects_dir(staging) / shown
    if shown == project or not old.is_dir():
        return staged
    old.rename(new)
    return [new / p.relative_to(old) if p.is_relative_to(old) else p for p in staged]


# ------------------------------------------------------------------------------------ doing


def bundle_digest(session: SessionInfo) -> str:
    """The content digest of a session's bundle as it is now, to compare with an archive's
    (`Sidecar.content_sha256`): retention deletes a bundle only when its newest archive holds
    exactly this. Reads every file of the bundle; raises OSError when one cannot be read."""
    return content_digest(collect_bundle(session.config_dir, session.bundle_paths()).files)


def bundle_bytes(sessions: Sequence[SessionInfo]) -> int:
    """The bytes archiving these sessions reads (each file twice: hashed, then streamed)."""
    total = 0
    for session in sessions:
        with contextlib.suppress(OSError, BundleError):
            for _path, _rel, st in walk_bundle(session.config_dir, session.bundle_paths()):
                if stat.S_ISREG(st.st_mode):
                    total += st.st_size
    return 2 * total


def archive_session(
    session: SessionInfo,
    *,
    destination: Path,
    encryption: Encryption,
    clear_fields: Sequence[str],
    now: datetime,
    work_dir: Path,
    redactor: BundleRedactor | None = None,
    scanner: SecretScanner | None = None,
    progress: Progress | None = None,
) -> WrittenArchive:
    """Archive one session (its whole bundle) under `destination`.

    `work_dir` (scrubber's own folder) holds the staging copy of a redacted bundle while it is
    archived. A redacted archive's manifest shows the session's texts and paths as its
    redaction does (archive_shown.py); with a `scanner`, so does an encrypted archive's
    sidecar, when the policy puts such a field in clear. Raises ScrubberError subclasses;
    InputError when the session cannot be read.
    """
    config_dir = session.config_dir
    facts = facts_of(session)
    for attempt in range(_CHANGED_RETRIES + 1):
        stack = contextlib.ExitStack()
        try:
            bundle = list(session.bundle_paths())
            source_root = config_dir
            manifest_facts = sidecar_facts = None
            if redactor is not None:
                work_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                # Locked while in use: a killed run's copies are removed by the next one.
                staging = stack.enter_context(staging_folder(work_dir, "archive-redact"))
                staged = _stage_redacted(config_dir, bundle, staging, redactor)
                manifest_facts = SessionShown(redactor.scanner, staged.known).facts(facts)
                bundle = _rename_project(
                    staging, staged.paths, facts.project, manifest_facts.project
                )
                source_root = staging
            elif scanner is not None and TEXT_FIELDS & set(clear_fields):
                sidecar_facts = SessionShown(scanner, session_values(session, scanner)).facts(facts)
            contents: BundleContents = collect_bundle(source_root, bundle, progress=progress)
            return write_archive(
                destination,
                facts,
                contents,
                source_root,
                encryption.recipients,
                created=now,
                scrubber_version=__version__,
                clear_fields=clear_fields,
                redacted=redactor is not None,
                manifest_facts=manifest_facts,
                sidecar_facts=sidecar_facts,
                progress=progress,
            )
        except BundleChangedError:
            if attempt == _CHANGED_RETRIES:
                raise
        except OSError as exc:
            where = exc.filename or session.transcript
            raise InputError(
                f"cannot read session {session.id}: {where}: {exc.strerror or type(exc).__name__}"
            ) from None
        finally:
            stack.close()
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class ArchiveOutcome:
    session: SessionInfo
    written: WrittenArchive | None = None
    error: ScrubberError | None = None
    # With an s3:// destination: the upload's outcome, or None when it was only queued.
    upload: PushOutcome | None = None
    upload_queued: bool = False
    # The project folder's name as shown (redaction/project_name.py: named after the cwd,
    # which can hold a token); "" until set.
    project_shown: str = ""

    @property
    def path_shown(self) -> str | None:
        """The archive written, its project folder as shown."""
        if self.written is None:
            return None
        return path_shown(self.written.entry.path, {self.session.project: self.project_shown})


def archive_sessions(
    sessions: Sequence[SessionInfo],
    *,
    policy: Policy,
    home: Path,
    encryption: Encryption,
    now: datetime,
    destination: Path | None = None,
    redact: bool = False,
    progress: Progress | None = None,
    upload_env: Mapping[str, str] | None = None,
) -> list[ArchiveOutcome]:
    """Archive each session; a failure is recorded and the next session still runs.

    With an s3:// destination (and no `destination` given), each archive written is queued
    for its upload; `upload_env` (the environment holding the AWS credential chain) uploads
    them at once as well, and a failed upload stays queued. Raises (before anything is
    written) only what concerns every session.
    """
    clear_fields = [str(f) for f in policy.archive.clear_manifest_fields]
    # Titles, tags, cwds and project names are free text or paths: redacted before they go
    # in clear, into a sidecar or a redacted archive's manifest (archive_shown.py).
    clear_text = bool(TEXT_FIELDS & set(clear_fields))
    scanner = _scanner(policy, home) if redact or clear_text else None
    redactor = engine_redactor(policy, scanner) if scanner is not None and redact else None
    target = destination or policy.archive.destination_in(home)
    check_destination(target)
    # What a killed run left (issue 11): its temp files and staging, never a live run's.
    remove_leftovers(home, archives=target)
    outcomes: list[ArchiveOutcome] = []
    names = ReportedNames.of_home(scanner or _scanner(policy, home), home)
    for session in sessions:
        cwds = (session.cwd,) if session.cwd else ()
        shown = names.shown(session.project, (session.id,), cwds)
        try:
            written = archive_session(
                session,
                destination=target,
                encryption=encryption,
                clear_fields=clear_fields,
                now=now,
                work_dir=home,
                redactor=redactor,
                scanner=scanner,
                progress=progress,
            )
        except ScrubberError as error:
            outcomes.append(ArchiveOutcome(session, error=error, project_shown=shown))
        else:
            outcomes.append(ArchiveOutcome(session, written=written, project_shown=shown))
    if policy.archive.s3 is not None and destination is None:
        return _queue_and_upload(outcomes, policy, home, now, upload_env)
    return outcomes


def _queue_and_upload(
    outcomes: list[ArchiveOutcome],
    policy: Policy,
    home: Path,
    now: datetime,
    env: Mapping[str, str] | None,
) -> list[ArchiveOutcome]:
    from scrubber.usecases.archive_push import push_uploads, queue_upload

    queued = {
        o.written.entry.path: o
        for o in outcomes
        if o.written is not None and queue_upload(home, o.written.entry, now=now)
    }
    pushed: dict[Path, PushOutcome] = {}
    if env is not None and queued:
        report = push_uploads(policy, home, env, now=now, only=list(queued))
        pushed = {p.archive: p for p in report.outcomes}
    return [
        replace(o, upload=pushed.get(o.written.entry.path), upload_queued=True)
        if o.written is not None and o.written.entry.path in queued
        else o
        for o in outcomes
    ]
