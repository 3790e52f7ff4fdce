"""`scrub audit`: find secrets in transcripts without printing them."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber import paths
from scrubber.cli import common, quiet
from scrubber.cli.common import PolicyOption
from scrubber.cli.progress import ProgressLine
from scrubber.cli.render import render_json, render_sarif, render_text
from scrubber.cli.terminal_text import terminal_safe
from scrubber.errors import ExitCode, UsageError
from scrubber.usecases.audit import AuditRequest, ProgressFor, run_audit
from scrubber.usecases.audit_report import AuditReport


class AuditFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


PathsArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="[PATH]...",
        help="Files or folders to scan. Default: every session and side file under the "
        "config directory.",
        show_default=False,
    ),
]
SessionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--session",
        help="Only this session (id, id prefix or title): its files and its lines of "
        "history.jsonl; repeatable.",
    ),
]
ProjectOption = Annotated[
    list[str] | None,
    typer.Option("--project", help="Only sessions whose project folder contains this; repeatable."),
]
SinceOption = Annotated[
    str | None,
    typer.Option("--since", help="Only files changed since: 7d, 12h, or 2026-11-01."),
]
FormatOption = Annotated[
    AuditFormat, typer.Option("--format", help="text (summary), json or sarif.")
]
PreviewOption = Annotated[
    bool,
    typer.Option(
        "--preview",
        help="Show masked previews: a known public prefix and the length, never more.",
    ),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="List every finding and clean sessions.")
]
NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Scan every file in full, ignoring what earlier audits found (the scan cache "
        "in $SCRUB_HOME/state/scan-cache/ is then written afresh).",
    ),
]
DemoOption = Annotated[
    bool,
    typer.Option(
        "--demo",
        help="Audit synthetic sessions made on the spot (fake secrets), to see how it "
        "works on a machine without Claude Code data.",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)


def audit_command(
    paths_: PathsArgument = None,
    session: SessionOption = None,
    project: ProjectOption = None,
    since: SinceOption = None,
    output_format: FormatOption = AuditFormat.text,
    preview: PreviewOption = False,
    verbose: VerboseOption = False,
    policy_path: PolicyOption = None,
    no_cache: NoCacheOption = False,
    demo: DemoOption = False,
) -> None:
    """Find secrets in transcripts and side files, never printing them.

    Reports each secret's kind, where it sits (file, line, JSON path, the tool call it came
    from) and a keyed fingerprint, never its value. Exit 0 when clean, 1 when secrets were
    found, 2 on a usage or policy error, 3 when a file could not be read. An audit of the
    config directory remembers what it found (fingerprints and places, never values): the
    next one scans only what changed, and a transcript that grew from where it stopped.

    Examples:

      scrub audit                      # everything under the config directory

      scrub audit --no-cache           # the same, every file scanned in full

      scrub audit --session 3f9a --format json

      scrub audit ~/backup/claude --format sarif > scrub.sarif

      scrub audit --demo
    """
    if demo:
        _run_demo(output_format, preview, verbose)
        return
    loaded = common.policy(policy_path)
    home = common.scrub_home()
    config = common.config_dir()
    _check_selection(paths_ or [], session, project, config)
    request = AuditRequest(
        loaded.policy,
        home,
        config,
        paths=tuple(paths_ or ()),
        sessions=tuple(session or ()),
        projects=tuple(project or ()),
        since=since,
        remember=not paths_,
        use_cache=not no_cache,
    )
    _audit_and_print(request, output_format, preview, verbose)


def _check_selection(
    paths_: list[Path], session: list[str] | None, project: list[str] | None, config: Path
) -> None:
    """Usage errors in what was named, before anything is read."""
    if paths_:
        if session or project:
            raise UsageError(
                "--session and --project select from the config directory; give them without paths"
            )
        for given in paths_:
            # A path the user typed that is not there is a usage error (exit 2), as for
            # redact; the audit's InputError (exit 3) is for files that vanish mid-run.
            if not given.exists() and not given.is_symlink():
                raise UsageError(f"{given}: no such file or folder")
            paths.refuse_special_file(given, "audited")
    else:
        paths.require_config_dir(
            config, "set CLAUDE_CONFIG_DIR, name files to scan, or try `scrub audit --demo`"
        )


def _audit_and_print(
    request: AuditRequest,
    output_format: AuditFormat,
    preview: bool,
    verbose: bool,
    *,
    demo: bool = False,
) -> None:
    with _progress_line() as progress_for:
        report = run_audit(request, now=datetime.now(UTC), progress_for=progress_for)
    # The demo's sessions are gone when it ends: a hint to redact them would lead nowhere.
    hint = None if demo else redact_hint(request, report)
    _print(report, output_format, preview, verbose, hint)


@contextmanager
def _progress_line() -> Iterator[ProgressFor | None]:
    """A progress line on stderr for the scan, cleared when it ends; None where none can be
    drawn (stderr not a terminal, `--quiet`): the audit then need not sum every file's size."""
    if not ProgressLine.can_draw():
        yield None
        return
    lines: list[ProgressLine] = []

    def progress_for(total: int) -> ProgressLine:
        lines.append(ProgressLine(total, "scanning"))
        return lines[-1]

    try:
        yield progress_for
    finally:
        for line in lines:
            line.close()


def redact_hint(request: AuditRequest, report: AuditReport) -> str | None:
    """The `scrub redact` that copies what this audit looked at, repeating the user's own
    selection: never one that reaches further, and never one that rewrites originals (copies
    go to $SCRUB_HOME/redacted/; only --in-place rewrites, and a hint never says it)."""
    if request.paths:
        named = " ".join(shlex.quote(str(p)) for p in request.paths)
        target = "OUT" if len(request.paths) == 1 and request.paths[0].is_file() else "DEST"
        return f"scrub redact {named} --output {target}"
    if request.sessions:
        return "scrub redact " + " ".join(f"--session {shlex.quote(s)}" for s in request.sessions)
    if request.projects or request.since:
        found = {f.target.session_id for f in report.files if f.findings}
        found.discard(None)
        if len(found) == 1:
            return f"scrub redact --session {str(found.pop())[:8]}"
        return "scrub redact --session ID, for each session above"
    return "scrub redact --all"


def _print(
    report: AuditReport,
    output_format: AuditFormat,
    preview: bool,
    verbose: bool,
    hint: str | None = None,
) -> None:
    if output_format is AuditFormat.json:
        typer.echo(render_json(report, preview=preview))
    elif output_format is AuditFormat.sarif:
        typer.echo(render_sarif(report))
    else:
        typer.echo(render_text(report, preview=preview, verbose=verbose, redact_hint=hint))
        for warning in report.warnings:
            typer.echo(terminal_safe(f"warning: {warning}"), err=True)
    for failed in (f for f in report.files if f.error):
        sys.stderr.write(terminal_safe(f"scrub: {failed.path_shown}: {failed.error}") + "\n")
    if report.has_findings:
        raise typer.Exit(int(ExitCode.FINDINGS))
    if any(f.error for f in report.files):
        raise typer.Exit(int(ExitCode.RUNTIME))


def _run_demo(output_format: AuditFormat, preview: bool, verbose: bool) -> None:
    from scrubber.demo import build_demo_config
    from scrubber.policy.model import Policy

    with tempfile.TemporaryDirectory(prefix="scrub-demo-") as tmp:
        config = build_demo_config(Path(tmp) / "claude")
        home = Path(tmp) / "scrub-home"
        if output_format is AuditFormat.text:
            quiet.note(f"demo: synthetic sessions with fake secrets in {config} (removed after)")
        os.environ["CLAUDE_CONFIG_DIR"] = str(config)
        request = AuditRequest(Policy.default(), home, config, remember=False)
        _audit_and_print(request, output_format, preview, verbose, demo=True)
