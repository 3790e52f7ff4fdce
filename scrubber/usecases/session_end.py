"""The SessionEnd use case: what is done for one ended, settled session.

The policy's `on_session_end` actions run in their fixed order (archive, redact-copy,
redact-in-place), skipping those an earlier attempt finished; with none configured, an audit
summary is recorded instead. Each finished action is handed to `on_action_done` before the next
one starts, so the caller (the worker) can log it and save the progress: a run killed between
two actions resumes at the second. The answer is a `SessionEndResult`: what was done, and the
first error, for the caller to decide between retrying and giving up.

Results are activity-log fields (counts, paths, kinds), never a secret's value.
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from scrubber import paths
from scrubber.errors import InputError, ScrubberError
from scrubber.policy.model import Policy, SessionEndAction
from scrubber.transcript.metadata import read_metadata
from scrubber.transcript.sessions import SessionInfo, session_bundle

if TYPE_CHECKING:
    from scrubber.redaction.lines import FileRedaction
    from scrubber.usecases.audit_report import ScanTarget

AUDIT_SUMMARY = "audit-summary"


@dataclass(frozen=True, slots=True)
class EndedSession:
    """Everything an action needs for one session."""

    session_id: str
    transcript: Path
    config_dir: Path
    home: Path
    policy: Policy
    env: Mapping[str, str] = field(repr=False)
    now: datetime  # when the session is archived (an archive's version and manifest time)

    @property
    def project(self) -> str:
        return self.transcript.parent.name


class SessionActions(Protocol):
    """What is done with a settled session. Results are activity-log fields (counts, paths,
    kinds), never values. Raise ScrubberError subclasses: the class decides whether the job is
    retried (runtime, busy) or parked (usage, config, key material)."""

    def run(self, action: SessionEndAction, session: EndedSession) -> Mapping[str, Any]: ...

    def summarize(self, session: EndedSession) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ActionDone:
    action: SessionEndAction
    fields: Mapping[str, Any]  # activity-log fields: counts, paths, kinds
    seconds: float


@dataclass(frozen=True, slots=True)
class SessionEndResult:
    actions: tuple[SessionEndAction, ...]  # what the policy asked for, in order
    summary: Mapping[str, Any] | None = None  # the audit summary, when it asked for nothing
    failed: str | None = None  # the action (or AUDIT_SUMMARY) that raised `error`
    error: ScrubberError | OSError | None = None
    vanished: bool = False  # the transcript disappeared under `failed`: nothing is left to do


def end_session(
    session: EndedSession,
    actions: SessionActions,
    *,
    done: Sequence[str],
    monotonic: Callable[[], float],
    on_action_done: Callable[[ActionDone], None],
) -> SessionEndResult:
    """Run the policy's SessionEnd actions not in `done` (action values), or the audit summary
    when there are none. Our errors and OS errors end the run and come back in the result;
    anything else propagates (the caller treats it as an unexpected failure)."""
    wanted = session.policy.session_end_actions
    for action in wanted:
        if action.value in done:
            continue
        started = monotonic()
        try:
            fields = actions.run(action, session)
        except (ScrubberError, OSError) as error:
            vanished = isinstance(error, InputError) and not session.transcript.exists()
            return SessionEndResult(wanted, failed=action.value, error=error, vanished=vanished)
        on_action_done(ActionDone(action, fields, round(monotonic() - started, 3)))
    if wanted:
        return SessionEndResult(wanted)
    try:
        summary = actions.summarize(session)
    except (ScrubberError, OSError) as error:
        return SessionEndResult(wanted, failed=AUDIT_SUMMARY, error=error)
    return SessionEndResult(wanted, summary=summary)


# -- the real actions: audit, archive and redaction ---------------------------------------------


class PipelineActions:
    """The real actions (imported lazily: they pull in detect_secrets and age)."""

    def run(self, action: SessionEndAction, session: EndedSession) -> Mapping[str, Any]:
        if action is SessionEndAction.ARCHIVE:
            return _archive(session)
        if action is SessionEndAction.REDACT_COPY:
            return _redact_copy(session)
        return _redact_in_place(session)

    def summarize(self, session: EndedSession) -> Mapping[str, Any]:
        from scrubber.detection.registry import build_scanner
        from scrubber.usecases.audit import audit, update_audit_cache

        scanner = build_scanner(session.policy, session.home)
        if not session.transcript.is_file():
            raise InputError(f"cannot read {session.transcript}: no such file")
        report = audit(session_targets(session), scanner, env=session.env)
        totals = report.totals()
        update_audit_cache(session.home, report, scanner)
        return {
            "occurrences": totals["occurrences"],
            "distinct": totals["distinct"],
            "by_kind": totals["by_kind"],
            "files": len(report.files),
            "unreadable": sum(1 for f in report.files if f.error),
        }


def session_targets(session: EndedSession) -> list[ScanTarget]:
    """The session's transcript and, when the policy scans side files, its bundle's files."""
    from scrubber.usecases.audit_report import ScanTarget
    from scrubber.usecases.audit_targets import targets_from_paths

    transcript = ScanTarget(session.transcript, True, session.session_id, session.project, None)
    targets = [transcript]
    if not session.policy.detection.scan_side_files:
        return targets
    extra = [
        p
        for p in session_bundle(session.config_dir, session.project, session.session_id)
        if p != session.transcript and not p.is_symlink()
    ]
    with contextlib.suppress(InputError):
        targets.extend(targets_from_paths(extra))
    return targets


def session_info(session: EndedSession) -> SessionInfo:
    """The session as `transcript.sessions` describes it, read for this one transcript only
    (discovering the whole config dir would cost seconds on a large one)."""
    try:
        st = session.transcript.stat()
        meta = read_metadata(session.transcript)
    except OSError as exc:
        raise InputError(f"cannot read {session.transcript}: {exc.strerror}") from None
    return SessionInfo(
        id=session.session_id,
        project=session.project,
        transcript=session.transcript,
        config_dir=session.config_dir,
        size=st.st_size,
        mtime=st.st_mtime,
        **meta.session_fields(),
    )


def bundle_files(session: EndedSession) -> list[Path]:
    """The regular files of the session's bundle (transcript first); symlinks are neither
    followed nor listed, as in an archive."""
    from scrubber.archive.bundle import walk_bundle

    bundle = session_bundle(session.config_dir, session.project, session.session_id)
    return [
        path for path, _, st in walk_bundle(session.config_dir, bundle) if stat.S_ISREG(st.st_mode)
    ]


def _archive(session: EndedSession) -> Mapping[str, Any]:
    from scrubber.usecases.archive import archive_sessions, resolve_encryption

    # Recipients come from the policy (a hook has no flags); none is a configuration error.
    encryption = resolve_encryption(session.policy, encrypt=True)
    [outcome] = archive_sessions(
        [session_info(session)],
        policy=session.policy,
        home=session.home,
        encryption=encryption,
        now=session.now,
    )
    if outcome.error is not None or outcome.written is None:
        raise outcome.error or ScrubberError(f"session {session.session_id}: nothing archived")
    return {
        "archive": str(outcome.written.entry.path),
        "created": outcome.written.created,  # False: this version was archived already
        "recipients": len(encryption.recipients),
    }


def _redaction_summary(results: Sequence[FileRedaction]) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    for result in results:
        for kind, count in result.by_kind.items():
            by_kind[kind] = by_kind.get(kind, 0) + count
    return {
        "files": len(results),
        "replaced": sum(r.replaced for r in results),
        "left_in_thinking": sum(r.left_in_thinking for r in results),
        "left_in_keys": sum(r.left_in_keys for r in results),
        "skipped": sum(1 for r in results if r.skipped),
        "by_kind": dict(sorted(by_kind.items())),
    }


def _redact_copy(session: EndedSession) -> Mapping[str, Any]:
    """Redacted copies under `$SCRUB_HOME/redacted/`, shaped like the config dir (never under
    `projects/`, where Claude Code's sweep deletes every top-level `*.jsonl`)."""
    from scrubber.detection.registry import build_scanner
    from scrubber.usecases.redact import redact_copies
    from scrubber.usecases.redact_cache import RedactCache
    from scrubber.usecases.redact_targets import dest_for, note_folders
    from scrubber.usecases.shown_names import FolderNames

    scanner = build_scanner(session.policy, session.home)
    dest_root = paths.redacted_dir(session.home)
    # All of the session's files at once: a value found in one is redacted in all of them.
    # Placed as `scrub redact --session` places them: the project folder named as shown.
    sources = list(bundle_files(session))
    folders = FolderNames(session.policy, session.home, session.env, scanner)
    note_folders(folders, session.config_dir, sources)
    roots = [session.config_dir]
    pairs = [(s, dest_for(s, roots, dest_root, folders.project)) for s in sources]
    thinking = session.policy.redaction.thinking
    # The cache `scrub redact --session`/`--all` keeps for the same folder: a session either
    # wrote that is still current is not written again.
    cache = RedactCache.of(
        session.home, scanner, session.policy, str(dest_root.absolute()), thinking.value
    )
    results = redact_copies(pairs, scanner, thinking=thinking, env=session.env, cache=cache)
    summary = _redaction_summary(results)
    summary["destination"] = folders.text(
        str(dest_for(session.transcript, roots, dest_root, folders.project))
    )
    return summary


def _redact_in_place(session: EndedSession) -> Mapping[str, Any]:
    """Rewrite the session's files with secrets replaced (thinking text untouched: reported).
    The lock folder is the one `scrub redact --in-place` uses, so the two never overlap."""
    from scrubber.detection.registry import build_scanner
    from scrubber.usecases.redact_cache import IN_PLACE, RedactCache, redact_in_place_cached

    scanner = build_scanner(session.policy, session.home)
    lock_dir = paths.state_dir(session.home) / "locks"
    cache = RedactCache.of(session.home, scanner, session.policy, IN_PLACE, "keep")
    # All of the session's files at once: a value found in one is redacted in all of them;
    # skipped when every one is as our last rewrite left it.
    results = redact_in_place_cached(
        bundle_files(session), scanner, lock_dir, cache, env=session.env
    )
    return _redaction_summary(results)
