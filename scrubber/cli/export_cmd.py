"""`scrub export`: parse, call `usecases.export.run_export`, write to stdout or say where."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber.cli import common, quiet
from scrubber.cli.common import PolicyOption, plural
from scrubber.detection.registry import build_scanner, prefilter_engine
from scrubber.errors import UsageError
from scrubber.paths import projects_dir, require_config_dir
from scrubber.usecases.export import ExportFormat, ExportRequest, run_export
from scrubber.usecases.export_target import (
    ExportTarget,
    ProtectedPlace,
    check_export_target,
    write_export,
)


class FormatChoice(StrEnum):
    markdown = "markdown"
    html = "html"
    jsonl = "jsonl"


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)


def export_command(
    session: Annotated[
        str, typer.Argument(metavar="SESSION", help="Session id, id prefix or title.")
    ],
    output_format: Annotated[
        FormatChoice, typer.Option("--format", help="markdown, html or jsonl.")
    ] = FormatChoice.markdown,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write a new file here (0600); '-' or none: stdout.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace FILE if it exists (a regular file only)."),
    ] = False,
    thinking: Annotated[
        bool, typer.Option("--thinking", help="Show thinking text too (redacted like the rest).")
    ] = False,
    policy_path: PolicyOption = None,
) -> None:
    """Write a session to share, with every secret redacted.

    Renders the conversation `claude --resume` replays (across compactions): prompts,
    answers, tool calls with their inputs and outputs (very long ones cut, with a note), and
    subagent conversations where they were started; then the list of what was redacted (kind,
    where, fingerprint; never a value). markdown for tickets; html is one self-contained file
    (no scripts, no external assets, a strict Content-Security-Policy); jsonl is the redacted
    transcript, as `scrub redact` writes it. The output is checked with the detectors before
    it is written: if anything is left, nothing is written (exit 3).

    -o FILE makes a new file; one that exists is replaced only with --force, and only if it
    is a regular file (never a device, FIFO, folder or symbolic link). No export is written
    inside Claude Code's config directory or scrubber's own folders, nor through a folder
    given as a symbolic link. -o - writes to stdout.

    Examples:

      scrub export 3f9a2c1e > session.md

      scrub export 'checkout-500' --format html -o checkout.html

      scrub export 3f9a2c1e --format jsonl -o shareable.jsonl

      scrub export 3f9a2c1e -o session.md --force
    """
    loaded = common.policy(policy_path)
    config = common.config_dir()
    home = common.scrub_home()
    require_config_dir(config, "set CLAUDE_CONFIG_DIR to the config directory that holds it")
    target = _target(output, force, config, home, loaded.policy.archive.destination_in(home))
    scanner = build_scanner(loaded.policy, home)
    # The export comes back checked, and is written here (export_target.py), not by run_export:
    # the rules on the destination and the no-replace write live there.
    request = ExportRequest(
        session, config, format=ExportFormat(output_format.value), thinking=thinking
    )
    result = run_export(request, scanner, prefilter_engine(common.env()))
    if target is None:
        # A stdout without a byte layer (an embedding program, a test's capture) gets text.
        binary = getattr(sys.stdout, "buffer", None)
        if binary is not None:
            binary.write(result.content)
        else:
            sys.stdout.write(result.content.decode("utf-8", "replace"))
        sys.stdout.flush()
    else:
        write_export(target, result.content)
    for note in result.notes:
        quiet.note(f"note: {note}")
    where = f"{'replaced' if target.replaces else 'wrote'} {target.given}" if target else "exported"
    quiet.note(
        f"{where}: session {result.session_id} as {result.format.value}, "
        f"{plural(len(result.redacted), 'redaction')} listed"
    )


def _target(
    output: Path | None, force: bool, config: Path, home: Path, archives: Path
) -> ExportTarget | None:
    """Where the export goes: None for stdout (no -o, or -o -)."""
    if output is None or str(output) == "-":
        if force:
            raise UsageError("--force is for -o FILE", hint="name the file to replace with -o")
        return None
    protected = [  # the first that holds the destination names it
        ProtectedPlace(projects_dir(config), "Claude Code's projects folder"),
        ProtectedPlace(config, "Claude Code's config directory"),
        ProtectedPlace(Path.home() / ".claude", "Claude Code's config directory"),
        ProtectedPlace(home, "scrubber's own folder"),
        ProtectedPlace(archives, "scrubber's archive folder"),
    ]
    return check_export_target(output, force=force, protected=protected)
