"""The audit use case: find secrets in transcripts and side files without printing them.

Everything here takes its inputs explicitly (paths, a policy, the environment, `now`) and
returns values; the CLI renders them (`run_audit`), the worker logs them. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import json
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scrubber import paths
from scrubber.detection.known_values import KnownValues, ValueIndex
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.detection.registry import build_scanner
from scrubber.detection.scan import SecretScanner
from scrubber.durable import atomic_write
from scrubber.errors import UsageError
from scrubber.policy.model import Policy
from scrubber.redaction.copies import FoundValue, remember, scope_of
from scrubber.redaction.project_name import ProjectNames
from scrubber.transcript.sessions import Problem
from scrubber.untrusted import MAX_STATE_BYTES, load_json
from scrubber.usecases import parts
from scrubber.usecases.audit_copies import POOL_MIN_BYTES, Shown, add_copies, redacted_calls
from scrubber.usecases.audit_pool import ScanJob, scan_files
from scrubber.usecases.audit_report import AuditReport, FileAudit, ScanTarget
from scrubber.usecases.audit_resume import (
    FirstKinds,
    Planned,
    cache_entry,
    dirty_groups,
    merged_audit,
    plan_scans,
    recovered_values,
)
from scrubber.usecases.audit_scan import ScannedFile, scan_file, with_title
from scrubber.usecases.audit_targets import (
    modified_since,
    parse_since,
    targets_from_paths,
    targets_in_config,
)
from scrubber.usecases.parts import Progress
from scrubber.usecases.reported_projects import audit_cache_file
from scrubber.usecases.scan_cache import CachedFile, ScanCache, Verdict

ProgressFor = Callable[[int], Progress]  # given the bytes to scan: what to tell as they are


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What `scrub audit` is asked for: the files and folders named (`paths`), else the
    sessions and side files of the config dir (or only the `sessions` named, or those of the
    `projects`: each names at least one session, or the audit is refused)."""

    policy: Policy
    home: Path
    config: Path
    paths: tuple[Path, ...] = ()
    sessions: tuple[str, ...] = ()  # ids, id prefixes or titles
    projects: tuple[str, ...] = ()  # parts of project folder names, or exact cwds
    since: str | None = None  # only files changed since: `7d`, `12h`, or `2026-11-01`
    remember: bool = True  # keep each session's count in the audit cache (`scrub sessions`)
    # The scan cache (state/scan-cache/): True answers from it and keeps it up to date; False
    # scans everything (`--no-cache`) and writes it afresh; `remember=False` leaves it alone.
    use_cache: bool = True


def run_audit(
    request: AuditRequest,
    *,
    now: datetime,
    progress_for: ProgressFor | None = None,
    env: Mapping[str, str] | None = None,
) -> AuditReport:
    """What was asked for, scanned with the policy's detectors."""
    skipped: list[Problem] = []
    targets = _requested_targets(request, skipped)
    notes: list[str] = []
    if request.since:
        cutoff = parse_since(request.since, now)
        before = len(targets)
        targets = [t for t in targets if modified_since(t, cutoff)]
        if before and not targets:
            # "0 secrets" over nothing must not read as "all clear".
            notes.append(
                f"--since {request.since}: none of the {before} files changed since "
                f"{cutoff.astimezone(UTC):%Y-%m-%d %H:%M} UTC, so nothing was scanned (a longer --since, or "
                "none, looks further back)"
            )
    scanner = build_scanner(request.policy, request.home, env)
    progress = None
    if progress_for is not None:  # the sizes only for a progress bar: a stat of every file
        total = 0
        for target in targets:
            with contextlib.suppress(OSError):
                total += target.path.stat().st_size
        progress = progress_for(total)
    cache = ScanCache.of(request.home, scanner, request.policy) if request.remember else None
    if cache is not None and not request.use_cache:
        cache.forget()
    report = audit(
        targets,
        scanner,
        progress=progress,
        env=env,
        cache=cache,
        complete=_whole_config(request),
        # Said, not only left out: a transcript that is a link out of the config dir is not
        # audited, and a report of "0 secrets" must not read as "all clear" for it.
        notes=[*notes, *(f"skipped {p.path}: {p.reason}" for p in skipped)],
    )
    if cache is not None and _whole_config(request):
        cache.keep_only({t.project or "" for t in targets})
    if request.remember:
        update_audit_cache(request.home, report, scanner)
    return report


def _whole_config(request: AuditRequest) -> bool:
    """Whether the audit named every file of the config dir (so every shard still wanted)."""
    return not (request.paths or request.sessions or request.projects or request.since)


def _requested_targets(request: AuditRequest, skipped: list[Problem]) -> list[ScanTarget]:
    if request.paths:
        return targets_from_paths(request.paths)
    targets = targets_in_config(
        request.config,
        sessions=request.sessions,
        projects=request.projects,
        include_side_files=request.policy.detection.scan_side_files,
        titles=not request.remember,
        skipped=skipped,
    )
    if (request.sessions or request.projects) and not targets:
        wanted = " ".join(
            [*(f"--session {s}" for s in request.sessions),
             *(f"--project {p}" for p in request.projects)]
        )  # fmt: skip
        raise UsageError(f"no session matches {wanted}")
    return targets


def audit(
    targets: Iterable[ScanTarget],
    scanner: SecretScanner,
    *,
    progress: Progress | None = None,
    env: Mapping[str, str] | None = None,
    cache: ScanCache | None = None,
    pool_min_bytes: int = POOL_MIN_BYTES,
    complete: bool = False,
    notes: Sequence[str] = (),
) -> AuditReport:
    """Every target scanned (in parallel over files: audit_pool.py), then the copies of what
    was found (see audit_copies.py): a value found in one file of a session is a finding
    wherever else the session holds it. With a `cache`, a session none of whose files changed
    answers from it, and a transcript that grew is scanned from its settled offset
    (audit_resume.py); the report is the one a full scan makes. `complete`: the targets are
    every file of the config dir (the cache forgets the sessions not among them). `notes`:
    warnings of the caller's (what was left out), shown first.
    Paths, project names and warnings are redacted for display (`shown_path`), with the
    detectors and the values known in the sessions looked at again."""
    planned = plan_scans(list(targets), cache, scanner)
    jobs = [ScanJob(p.target, p.size, p.resume) for p in planned if p.verdict is not Verdict.FRESH]
    answered = sum(p.size for p in planned if p.verdict is Verdict.FRESH)
    if progress and answered:
        progress(answered)
    done = iter(
        scan_files(
            jobs,
            scanner,
            processes=parts.worker_processes(env),
            progress=progress,
            for_cache=cache is not None,
            pool_min_bytes=pool_min_bytes,
        )
    )
    scans = [None if p.verdict is Verdict.FRESH else next(done) for p in planned]
    for item, scanned in zip(planned, scans, strict=True):
        if scanned is not None:
            item.target = scanned.audit.target  # with its title, read where it was scanned
    files = [merged_audit(p, s, scanner) for p, s in zip(planned, scans, strict=True)]
    dirty = dirty_groups(planned, cache, scanner)
    known, index = (
        _find_copies(planned, scans, files, dirty, scanner, env, pool_min_bytes)
        if dirty
        else (None, None)
    )
    shown = Shown(scanner, index)
    names = ProjectNames(scanner, known)
    for result in files:
        _show_project(result, names, index is not None)
        shown.redact_place(result)
    if cache is not None:
        _store(cache, planned, files, scans, dirty, scanner, index, complete)
    # Modes matter for what Claude Code wrote: transcripts (JSONL), not every file named.
    warnings = permission_warnings(
        (t.target.path for t in files if t.target.is_transcript), _shown_folders(files, names)
    )
    warnings.extend(_held_by_keys(files))
    return AuditReport(files, [shown.text(w, None) for w in [*notes, *warnings]])


def _held_by_keys(files: Iterable[FileAudit]) -> list[str]:
    """A warning for the files that hold secrets in JSON object keys: a redacted copy keeps
    them (Claude Code's keys are never changed), so the redact hint alone would mislead."""
    held = [(r.path_shown, sum(f.in_key for f in r.findings)) for r in files]
    return [
        f"{path}: {count} secret{'s' if count > 1 else ''} in JSON object keys, which no "
        "redaction can take out (Claude Code's keys must stay as they are): do not share it"
        for path, count in held
        if count
    ]


def _show_project(result: FileAudit, names: ProjectNames, values_known: bool) -> None:
    """The file's project folder as shown (redacted/project_name.py: a token in the cwd is in
    the folder's name in its folder form, which matching a value as itself misses); its path
    is then made again from it. What the cache showed stands while nothing new is known."""
    target = result.target
    if not target.project or (result.shown_path is not None and not values_known):
        return
    scope = None if target.role == "history" else scope_of(target.session_id, target.path)
    # From what the cache showed: an unchanged session's values are not among those known now.
    result.shown_project = names.shown(result.shown_project or target.project, scope)
    result.shown_path = None


def _shown_folders(files: Iterable[FileAudit], names: ProjectNames) -> Callable[[Path], str]:
    """How a warning names a path: each project folder in it as its files show it, cleaned
    again with the values of every session (a folder holds several, and any of their values
    in its name is a secret); of the forms its sessions show, the one with least left in
    clear (a warm audit knows no values: each form is what the cache showed)."""
    shown: dict[str, str] = {}
    for result in files:
        project = result.target.project
        if project:
            form = names.shown(result.project_shown or project)
            current = shown.get(project)
            # The same form again (every session of a project, as a rule): nothing to weigh.
            if current is None or (form != current and _in_clear(form) < _in_clear(current)):
                shown[project] = form

    def show(path: Path) -> str:
        parts = [shown.get(p, p) for p in path.parts]
        return str(Path(*parts)) if parts else str(path)

    return show


def _in_clear(name: str) -> int:
    return sum(c.isalnum() for c in PLACEHOLDER_RE.sub("", name))


def _find_copies(
    planned: list[Planned],
    scans: list[ScannedFile | None],
    files: list[FileAudit],
    dirty: set[str],
    scanner: SecretScanner,
    env: Mapping[str, str] | None,
    pool_min_bytes: int,
) -> tuple[KnownValues, ValueIndex | None]:
    """The findings by value in the sessions that are looked at again (all, without a cache):
    their values (found now, or read back where the cache says they are), then their copies.
    history.jsonl keeps the copies of the other sessions' values. Returns the values known
    and their index (None: none), to redact what is shown and cached with."""
    known = KnownValues()
    kinds = FirstKinds(files) if len(dirty) < len({p.group for p in planned}) else None
    looked_at: list[FileAudit] = []
    for i, item in enumerate(planned):
        history = item.target.role == "history"
        if item.group not in dirty and not history:
            continue
        values = _values_of(item, scans[i], files[i], scanner)
        if values is None:  # the cache pointed at a value no longer there: scan it whole
            if item.target.title_pending:
                item.target = with_title(item.target)
            scans[i] = scan_file(item.target, scanner, for_cache=True)
            item.verdict, item.resume = Verdict.CHANGED, None
            files[i] = scans[i].audit  # type: ignore[union-attr]
            values = scans[i].values  # type: ignore[union-attr]
        values = [v for v in values if v[2] in dirty] if history else values
        if kinds is None:
            remember(known, values)
        else:
            kinds.remember(known, values)
        result = files[i]
        result.findings = [
            f for f in result.findings if not f.by_value or (history and f.session_id not in dirty)
        ]
        if item.verdict is Verdict.FRESH and item.target.is_transcript:
            if item.target.title_pending:
                item.target = with_title(item.target)
            if item.target.title:
                result.title = scanner.redact_text(item.target.title)
        looked_at.append(result)
    processes = parts.worker_processes(env)
    index = add_copies(looked_at, known, env, processes=processes, pool_min_bytes=pool_min_bytes)
    return known, index


def _values_of(
    item: Planned, scanned: ScannedFile | None, result: FileAudit, scanner: SecretScanner
) -> list[FoundValue] | None:
    """The values a file's detectors found: read back from the file for what the cache
    answered, as found for what was scanned."""
    if scanned is not None and item.resume is None:
        return scanned.values
    upto = item.resume.lines if item.resume is not None else None
    back = recovered_values(result, upto, scanner)
    if back is None:
        return None
    return back + (scanned.values if scanned is not None else [])


def _store(
    cache: ScanCache,
    planned: list[Planned],
    files: list[FileAudit],
    scans: list[ScannedFile | None],
    dirty: set[str],
    scanner: SecretScanner,
    index: ValueIndex | None,
    complete: bool,
) -> None:
    """Write the shards of the sessions looked at again (history.jsonl's with them), and,
    after an audit of every file, those that held sessions no longer there. The calls kept
    are redacted with the values known too (a command may hold a value found elsewhere)."""
    shards: dict[str, dict[str, dict[str, CachedFile]]] = {}
    for item, result, scanned in zip(planned, files, scans, strict=True):
        if item.group not in dirty and not (dirty and item.target.role == "history"):
            continue
        if item.target.only_sessions is not None:
            continue  # some sessions' lines of history.jsonl: not what a full scan finds
        entries = shards.setdefault(item.shard, {}).setdefault(item.group, {})
        entry = cache_entry(item, result, scanned, scanner)
        if entry is not None:
            if index is not None:
                entry.calls = redacted_calls(entry.calls, index, item.group)
            entries[cache.key(item.target.path)] = entry
    if complete:
        present: dict[str, set[str]] = {}
        for item in planned:
            present.setdefault(item.shard, set()).add(item.group)
        for shard, sessions in present.items():
            if cache.drop_others(shard, sessions):
                shards.setdefault(shard, {})
    for shard, groups in shards.items():
        cache.store(shard, groups)


def audit_file(
    target: ScanTarget,
    scanner: SecretScanner,
    *,
    progress: Progress | None = None,
    known: KnownValues | None = None,
) -> FileAudit:
    """One file's findings; the values found are added to `known` (for `add_copies`)."""
    scanned = scan_file(target, scanner, progress=progress)
    if known is not None:
        remember(known, scanned.values)
    return scanned.audit


def permission_warnings(files: Iterable[Path], show: Callable[[Path], str] = str) -> list[str]:
    """Transcript files and their folders readable by group or others, each named by `show`
    (a project folder's name can hold a token).

    Claude Code creates project folders 0755 (their names reveal working-directory paths), so
    open folders are summed up in one line rather than listed one by one.
    """
    warnings: list[str] = []
    seen_dirs: set[Path] = set()
    open_dirs: list[Path] = []
    open_files: list[tuple[Path, int]] = []
    for file in files:
        try:
            mode = file.stat().st_mode
        except OSError:
            continue
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            open_files.append((file, mode))
        folder = file.parent
        if folder in seen_dirs:
            continue
        seen_dirs.add(folder)
        try:
            dmode = folder.stat().st_mode
        except OSError:
            continue
        if dmode & (stat.S_IROTH | stat.S_IXOTH | stat.S_IRGRP | stat.S_IXGRP):
            open_dirs.append(folder)
    for file, mode in open_files[:5]:
        warnings.append(f"{show(file)} is readable by {_who(mode)} (chmod 600 it)")
    if len(open_files) > 5:
        warnings.append(f"… and {len(open_files) - 5} more transcripts readable by others")
    if open_dirs:
        shown = ", ".join(show(d) for d in open_dirs[:3])
        more = f" and {len(open_dirs) - 3} more" if len(open_dirs) > 3 else ""
        warnings.append(
            f"{len(open_dirs)} folders holding transcripts are open to group or others: "
            f"{shown}{more} (chmod 700 them)"
        )
    return warnings


def _who(mode: int) -> str:
    group = bool(mode & (stat.S_IRGRP | stat.S_IXGRP))
    other = bool(mode & (stat.S_IROTH | stat.S_IXOTH))
    return "group and others" if group and other else ("group" if group else "others")


def update_audit_cache(
    home: Path, report: AuditReport, scanner: SecretScanner | None = None
) -> None:
    """Remember each audited session's distinct secrets with its transcript's size and mtime as
    they were when the scan began, so `scrub sessions` shows the count only while the transcript
    is still the one audited. With the `scanner`, its title too as the audit showed it (with
    the values found anywhere in the session, which the detectors alone miss in a title), by
    the keyed fingerprint of the title as it is (reported_projects.audited_titles). Best
    effort: a cache that cannot be written is not updated."""
    path = audit_cache_file(home)
    try:
        # Planted or damaged (a FIFO, a link to /dev/zero, nested or numbers too deep to parse):
        # a cache, so it is rebuilt from this audit rather than read.
        data = load_json(path, MAX_STATE_BYTES, follow=False)
    except (OSError, ValueError):
        data = {}
    if (
        not isinstance(data, dict)
        or data.get("format") != 1
        or not isinstance(data.get("sessions"), dict)
    ):
        data = {"format": 1, "sessions": {}}
    distinct: dict[str, set[str]] = {}
    transcripts: dict[str, FileAudit] = {}
    for audit_result in report.files:
        sid = audit_result.target.session_id
        if sid is None or audit_result.error:
            continue
        distinct.setdefault(sid, set()).update(f.fingerprint for f in audit_result.findings)
        if audit_result.target.role == "transcript":
            transcripts[sid] = audit_result
    for sid, transcript in transcripts.items():
        data["sessions"][sid] = {
            "transcript_size": transcript.size,
            "transcript_mtime_ns": transcript.mtime_ns,
            "distinct": len(distinct.get(sid, ())),
            # As the audit showed it, with every value it knew in the session (side files'
            # too): `scrub sessions` scans nothing, and shows the folder with these gone.
            "project_shown": transcript.project_shown,
        }
        raw_title = transcript.target.title
        if scanner is not None and raw_title and transcript.title:
            data["sessions"][sid]["title_fingerprint"] = scanner.fingerprint(raw_title)
            data["sessions"][sid]["title_shown"] = transcript.title
    try:
        paths.ensure_private_dir(path.parent)
        atomic_write(path, [json.dumps(data).encode()], mode=0o600)
    except OSError:
        return
