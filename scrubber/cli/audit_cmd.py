"""`scrub audit`: find secrets in transcripts without printing them."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.cli.common import PolicyOption, refuse_special_file
from scrubber.cli.durations import parse_moment
from scrubber.cli.progress import ProgressLine
from scrubber.cli.render import render_json, render_sarif, render_text
from scrubber.errors import ExitCode, UsageError
from scrubber.pipeline import (
    ScanTarget,
    audit,
    build_scanner,
    targets_from_paths,
    targets_in_config,
    update_audit_cache,
)


class AuditFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


def _parse_since(value: str) -> datetime:
    """`7d`, `12h`, `30m`, a number of days, or an ISO date/time (the one duration syntax)."""
    return parse_moment(value, "--since", datetime.now(UTC))


def _modified_since(target: ScanTarget, since: datetime) -> bool:
    try:
        return datetime.fromtimestamp(target.path.stat().st_mtime, UTC) >= since
    except OSError:
        return True


def register(app: typer.Typer) -> None:
    @app.command("audit")
    def audit_command(
        paths_: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="[PATH]...",
                help="Files or folders to scan. Default: every session and side file under the "
                "config directory.",
                show_default=False,
            ),
        ] = None,
        session: Annotated[
            str | None, typer.Option("--session", help="Only this session (id or id prefix).")
        ] = None,
        project: Annotated[
            str | None,
            typer.Option("--project", help="Only sessions whose project folder contains this."),
        ] = None,
        since: Annotated[
            str | None,
            typer.Option("--since", help="Only files changed since: 7d, 12h, or 2026-11-01."),
        ] = None,
        output_format: Annotated[
            AuditFormat, typer.Option("--format", help="text (summary), json or sarif.")
        ] = AuditFormat.text,
        preview: Annotated[
            bool,
            typer.Option(
                "--preview",
                help="Show masked previews: a known public prefix and the length, never more.",
            ),
        ] = False,
        verbose: Annotated[
            bool, typer.Option("--verbose", "-v", help="List every finding and clean sessions.")
        ] = False,
        policy_path: PolicyOption = None,
        demo: Annotated[
            bool,
            typer.Option(
                "--demo",
                help="Audit synthetic sessions made on the spot (fake secrets), to see how it "
                "works on a machine without Claude Code data.",
            ),
        ] = False,
    ) -> None:
        """Find secrets in transcripts and side files, without printing them.

        Reports each secret's kind, where it sits (file, line, JSON path, the tool call it came
        from) and a keyed fingerprint, never its value. Exit 0 when clean, 1 when secrets were
        found, 2 on a usage or policy error, 3 when a file could not be read.

        Examples:

          scrub audit                      # everything under ~/.claude (or $CLAUDE_CONFIG_DIR)

          scrub audit --session 3f9a --format json

          scrub audit ~/backup/claude --format sarif > scrub.sarif

          scrub audit --demo
        """
        if demo:
            _run_demo(output_format, preview, verbose)
            return
        loaded = common.policy(policy_path)
        home = common.scrub_home()
        if paths_:
            if session or project:
                raise UsageError(
                    "--session and --project select from the config directory; "
                    "give them without paths"
                )
            for given in paths_:
                # A path the user typed that is not there is a usage error (exit 2), as for
                # redact; the pipeline's InputError (exit 3) is for files that vanish mid-run.
                if not given.exists() and not given.is_symlink():
                    raise UsageError(f"{given}: no such file or folder")
                refuse_special_file(given, "audited")
            targets = targets_from_paths(paths_)
        else:
            config = common.config_dir()
            if not config.is_dir():
                raise UsageError(
                    f"no Claude Code config directory at {config}",
                    "set CLAUDE_CONFIG_DIR, name files to scan, or try `scrub audit --demo`",
                )
            targets = targets_in_config(
                config,
                session=session,
                project=project,
                include_side_files=loaded.policy.detection.scan_side_files,
            )
            if (session or project) and not targets:
                raise UsageError(
                    f"no session matches {'--session ' + session if session else '--project ' + str(project)}"
                )
        if since:
            cutoff = _parse_since(since)
            targets = [t for t in targets if _modified_since(t, cutoff)]
        _audit_and_print(
            targets,
            build_scanner(loaded.policy, home),
            output_format,
            preview,
            verbose,
            cache_home=None if paths_ else home,
        )


def _audit_and_print(
    targets: list[ScanTarget],
    scanner: object,
    output_format: AuditFormat,
    preview: bool,
    verbose: bool,
    cache_home: Path | None = None,
) -> None:
    total = 0
    for target in targets:
        with contextlib.suppress(OSError):
            total += target.path.stat().st_size
    progress = ProgressLine(total, "scanning")
    try:
        report = audit(targets, scanner, progress=progress)  # type: ignore[arg-type]
    finally:
        progress.close()
    if cache_home is not None:
        update_audit_cache(cache_home, report)
    if output_format is AuditFormat.json:
        typer.echo(render_json(report, preview=preview))
    elif output_format is AuditFormat.sarif:
        typer.echo(render_sarif(report))
    else:
        typer.echo(render_text(report, preview=preview, verbose=verbose))
    for failed in (f for f in report.files if f.error):
        sys.stderr.write(f"scrub: {failed.target.path}: {failed.error}\n")
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
            sys.stderr.write(
                f"scrub: demo: synthetic sessions with fake secrets in {config} (removed after)\n"
            )
        os.environ["CLAUDE_CONFIG_DIR"] = str(config)
        targets = targets_in_config(config)
        _audit_and_print(
            targets, build_scanner(Policy.default(), home), output_format, preview, verbose
        )
