"""The restore use case (`scrub restore`): which archive, into which config dir, and what becomes
of the session already there.

- `--to` must name a Claude Code config dir (issue 14): a typo used to create a whole new tree
  and "restore" into it; a new one is made only with `create`.
- `force` never destroys: what the archive would replace (a session that gained lines since it
  was archived) goes to the trash first, whole, under the retention lock, and comes back with
  `scrub undelete` (issue 14). The archive is decrypted and verified completely before that.
- A session id restores the newest of its archives that the key given opens (issue 14: only
  the newest was tried, whatever key it was made for); errors say which key each one needs.
- One activity-log line per restore, without any value.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.activity import append_activity
from scrubber.archive.age import Identity
from scrubber.archive.age_errors import (
    AgeHeaderError,
    AgeMacError,
    AgePayloadError,
    AgeVersionError,
    ScryptWorkFactorError,
)
from scrubber.archive.bundle_errors import BundleError
from scrubber.archive.errors import ArchiveError, ArchiveVersionError
from scrubber.archive.keys import X25519Identity, recipient_fingerprint
from scrubber.archive.layout import ArchiveEntry, key_needed, list_archives
from scrubber.archive.manifest import Manifest
from scrubber.archive.restore import RestoreResult, restore_archive
from scrubber.archive.verify import opens_with, verify_archive
from scrubber.errors import KeyMaterialError, ScrubberError, UsageError, path_error_hint
from scrubber.retention.apply import retention_lock
from scrubber.retention.trash import trash_session
from scrubber.transcript.metadata import read_metadata
from scrubber.transcript.sessions import SessionInfo, discover
from scrubber.usecases.archive_listing import archive_at_shown_path

__all__ = ["RestoreOutcome", "check_config_dir", "choose_version", "restore_session"]

Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class RestoreOutcome:
    result: RestoreResult
    archive: Path
    home: Path  # the scrubber folder of the config dir restored into (its trash)
    trashed: Path | None = None  # the trash entry holding what `force` replaced


def check_config_dir(path: Path, *, create: bool) -> None:
    """Refuse a `--to` that is not a Claude Code config dir, unless `create` (then it may be a
    new or empty folder, never a file)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise UsageError(
            f"--to {path}: cannot look at it ({error.strerror})",
            hint=path_error_hint(error, writing=False) or "check the path",
        ) from None
    if mode is not None and not stat.S_ISDIR(mode):
        raise UsageError(
            f"--to {path}: is not a folder", hint="--to names a Claude Code config directory"
        )
    if create:
        return
    if mode is not None and paths.is_config_dir(path):
        return
    what = "does not exist" if mode is None else "is not a Claude Code config directory"
    raise UsageError(
        f"--to {path}: {what}; nothing was restored",
        hint="a config dir holds projects/ or settings.json: check the path, or add --create "
        "to make a new one there",
    )


def _refuse_own_home(to: Path, home: Path) -> None:
    """A `--to` in scrubber's own folder (its archives, trash and state) is refused: a session
    restored there is plaintext where nothing reads it as a session, and beside the state it
    could be taken for."""
    target, own = to.absolute().resolve(), home.absolute().resolve()
    if target == own or own in target.parents:
        raise UsageError(
            f"--to {to}: inside scrubber's own folder ({home}); nothing was restored",
            hint="--to names a Claude Code config directory somewhere else",
        )


def _home_for(env: Mapping[str, str], config: Path) -> Path:
    """Scrubber's folder for `config`: $SCRUB_HOME, else `<config>/scrubber`, so that
    `CLAUDE_CONFIG_DIR=<config> scrub undelete` finds what a forced restore trashed."""
    return paths.scrub_home({**env, "CLAUDE_CONFIG_DIR": str(config)})


def _project_there(project: str, session_id: str, existing: Sequence[str]) -> str:
    """The project folder whose copy of the session is in the way.

    The archive's own folder first; else the folder of a transcript of the same session
    elsewhere (a redacted archive names the project as shown, the original is under its real
    name): the restore conflicts with that one, so that one goes to the trash.
    """
    own = f"projects/{project}/{session_id}.jsonl"
    if own in existing:
        return project
    for path in existing:
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "projects" and parts[2] == f"{session_id}.jsonl":
            return parts[1]
    return project


def _session_there(config: Path, project: str, session_id: str) -> tuple[SessionInfo, bool]:
    """The session as it is in `config` now, and whether its transcript exists."""
    for found in discover(config, metadata=False).by_id(session_id):
        if found.project == project:
            meta = read_metadata(found.transcript)
            return (
                replace(
                    found,
                    **meta.session_fields(),
                ),
                True,
            )
    transcript = paths.projects_dir(config) / project / f"{session_id}.jsonl"
    return SessionInfo(session_id, project, transcript, config, size=0, mtime=0.0), False


def _trash_what_is_there(
    config: Path, home: Path, now: datetime, trashed: list[Path]
) -> Callable[[Manifest, Sequence[str]], None]:
    def make_room(manifest: Manifest, existing: Sequence[str]) -> None:
        facts = manifest.session
        with retention_lock(home):
            project = _project_there(facts.project, facts.session_id, existing)
            session, whole = _session_there(config, project, facts.session_id)
            try:
                slot = trash_session(
                    session, config_dir=config, home=home, now=now, without_transcript=not whole
                )
            except ScrubberError as error:
                # The same error (its type says the exit code), in words that say what for.
                error.message = (
                    f"cannot move the session there to the trash first: {error.message}; "
                    "nothing was replaced"
                )
                raise
            except OSError as error:
                raise ScrubberError(
                    f"cannot move the session there to the trash first: "
                    f"{error.filename or home}: {error.strerror}; nothing was replaced",
                    hint=path_error_hint(error),
                ) from None
        trashed.append(slot)

    return make_room


def _session_archives(value: str, archives_root: Callable[[], Path]) -> list[ArchiveEntry]:
    """The archives of the session `value` names (an id or id prefix), newest first."""
    root = archives_root()
    entries = [e for e in list_archives(root) if e.session_id.startswith(value)]
    sessions = {e.session_id for e in entries}
    if not entries:
        raise UsageError(
            f"no archive file or archived session matches {value!r} in {root}",
            hint="`scrub archives list` shows what is there",
        )
    if len(sessions) > 1:
        raise UsageError(f"{len(sessions)} archived sessions match {value!r}; give more of the id")
    usable = [e for e in entries if e.path.is_file()]
    if not usable:
        raise UsageError(f"the archives of {value!r} are missing their files")
    return usable[::-1]


def _fingerprints(identities: Sequence[Identity]) -> str:
    named = [
        f"key {recipient_fingerprint(i.recipient())}"
        if isinstance(i, X25519Identity)
        else "a passphrase"
        for i in identities
    ]
    return ", ".join(dict.fromkeys(named))


def _needs(entries: Sequence[ArchiveEntry], limit: int = 4) -> str:
    told = "; ".join(f"{e.version} needs {key_needed(e)}" for e in entries[:limit])
    return told + (f"; and {len(entries) - limit} older" if len(entries) > limit else "")


def choose_version(
    entries: Sequence[ArchiveEntry], identities: Sequence[Identity], warn: Warn
) -> ArchiveEntry:
    """The newest of a session's archives (`entries`, newest first) that `identities` open, with
    a warning when newer ones need another key (issue 14: only the newest was tried). Without
    any key, only the newest is considered: an older archive in clear is not a silent stand-in
    for a forgotten -i."""
    newest = entries[0]
    if not identities:
        if opens_with(newest.path, identities):
            return newest
        raise KeyMaterialError(
            f"no key given to decrypt the archives of session {newest.session_id}",
            hint=f"{_needs(entries[:1])}: pass -i IDENTITY_FILE (or --passphrase-file F)",
        )
    for index, entry in enumerate(entries):
        if opens_with(entry.path, identities):
            if index:
                warn(
                    f"restoring {entry.version}, the newest archive of session "
                    f"{entry.session_id} that the key(s) given open; newer: "
                    f"{_needs(entries[:index])}"
                )
            return entry
    raise KeyMaterialError(
        f"none of the {len(entries)} archive(s) of session {newest.session_id} opens with "
        f"the key(s) given ({_fingerprints(identities)})",
        hint=f"{_needs(entries)}; `scrub keygen -y KEY_FILE` prints a key's fingerprint",
    )


def resolve_archive(
    value: str, identities: Sequence[Identity], archives_root: Callable[[], Path], warn: Warn
) -> tuple[Path, list[ArchiveEntry]]:
    """An archive path as given, else the newest archive of the session it names that the
    identities open; with the archives older than it (newest first) when chosen by session."""
    path = Path(value)
    if path.exists() or os.sep in value or value.endswith((".age", ".gz")):
        if not path.exists():
            path = archive_at_shown_path(path) or path  # pasted as a report shows it
        if not path.is_file():
            raise UsageError(f"{value}: archive file not found")
        return path, []
    entries = _session_archives(value, archives_root)
    chosen = choose_version(entries, identities, warn)
    return chosen.path, entries[entries.index(chosen) + 1 :]


# What a damaged archive file raises while it is read (not a wrong key), and what of that is
# a refusal instead (a format or a scrypt work factor we do not take): nothing is damaged.
_DAMAGE = (AgeHeaderError, AgeMacError, AgePayloadError, ArchiveError, BundleError)
_REFUSALS = (AgeVersionError, ScryptWorkFactorError, ArchiveVersionError)


def _damaged(error: ScrubberError) -> bool:
    return isinstance(error, _DAMAGE) and not isinstance(error, _REFUSALS)


def _older_copy(older: Sequence[ArchiveEntry], identities: Sequence[Identity]) -> str | None:
    """A hint naming the newest older archive the key opens and that is intact as far as a
    keyless check tells (its sidecar's size and SHA-256, its header), for when the chosen one
    is damaged: taking it in its place is the user's call (it lacks what came later)."""
    for entry in older:
        if opens_with(entry.path, identities) and _intact(entry.path):
            # Named by version, not path: the project folder in a path is named after the cwd,
            # which can hold a token (`archives list` shows it redacted).
            return (
                f"an older archive of this session opens with the key given: {entry.version}; "
                f"`scrub archives list --session {entry.session_id}` shows its path, and "
                "`scrub restore PATH` with the same key restores it (without what came after it)"
            )
    return None


def _intact(path: Path) -> bool:
    try:
        verify_archive(path)
    except (ScrubberError, OSError):
        return False
    return True


def restore_session(
    env: Mapping[str, str],
    archive: str,
    identities: Sequence[Identity],
    *,
    archives_root: Callable[[], Path],
    to: Path | None = None,
    create: bool = False,
    force: bool = False,
    keep_mtime: bool = False,
    now: datetime | None = None,
    warn: Warn = lambda _message: None,
) -> RestoreOutcome:
    """Put an archived session back into `to` (default: the config dir of `env`)."""
    moment = now or datetime.now(UTC)
    if to is not None:
        _refuse_own_home(to, paths.scrub_home(env))
        check_config_dir(to, create=create)
    config = to if to is not None else paths.config_dir(env)
    home = _home_for(env, config)
    record: dict[str, Any] = {"time": moment.isoformat(), "event": "restore", "to": str(config)}
    trashed: list[Path] = []
    older: list[ArchiveEntry] = []
    try:
        path, older = resolve_archive(archive, identities, archives_root, warn)
        record["archive"] = str(path)
        result = restore_archive(
            path,
            identities,
            config,
            home=home,
            force=force,
            keep_mtime=keep_mtime,
            now=moment.timestamp(),
            make_room=_trash_what_is_there(config, home, moment, trashed) if force else None,
        )
    except ScrubberError as error:
        record.update(exit=int(error.exit_code), error=error.message)
        if trashed:
            record["trashed"] = str(trashed[0])
        _log(home, record, warn)
        if trashed:  # placing failed after the session there went to the trash: say where
            error.hint = (
                f"the version that was there is in {trashed[0]}; `scrub undelete` brings it "
                "back once its paths are free"
            )
        elif _damaged(error) and older:
            error.hint = _older_copy(older, identities) or error.hint
        raise
    facts = result.manifest.session
    record.update(session=f"{facts.project}/{facts.session_id}", files=result.files, exit=0)
    if trashed:
        record.update(replaced=len(result.replaced), trashed=str(trashed[0]))
    _log(home, record, warn)
    return RestoreOutcome(result, path, home, trashed[0] if trashed else None)


def _log(home: Path, record: Mapping[str, Any], warn: Warn) -> None:
    # A restore refused before anything was written (an unknown session id) makes no folder.
    if not home.is_dir():
        return
    try:
        append_activity(home, record)
    except OSError as error:
        warn(f"could not write the activity log ({error.strerror})")
