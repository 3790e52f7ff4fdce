"""`scrub export`: parse, call `usecases.export.run_export`, write to stdout or say where."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.cli.common import PolicyOption, plural
from scrubber.detection.registry import build_scanner, prefilter_engine
from scrubber.paths import require_config_dir
from scrubber.usecases.export import ExportFormat, ExportRequest, run_export


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
        typer.Option("--output", "-o", metavar="FILE", help="Write here (0600); default stdout."),
    ] = None,
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

    Examples:

      scrub export 3f9a2c1e > session.md

      scrub export 'checkout-500' --format html -o checkout.html

      scrub export 3f9a2c1e --format jsonl -o shareable.jsonl
    """
    loaded = common.policy(policy_path)
    config = common.config_dir()
    require_config_dir(config, "set CLAUDE_CONFIG_DIR to the config directory that holds it")
    scanner = build_scanner(loaded.policy, common.scrub_home())
    request = ExportRequest(
        session, config, format=ExportFormat(output_format.value), output=output, thinking=thinking
    )
    result = run_export(request, scanner, prefilter_engine(common.env()))
    if result.output is None:
        sys.stdout.buffer.write(result.content)
        sys.stdout.flush()
    for note in result.notes:
        sys.stderr.write(f"scrub: note: {note}\n")
    where = f"wrote {result.output}" if result.output else "exported"
    sys.stderr.write(
        f"scrub: {where}: session {result.session_id} as {result.format.value}, "
        f"{plural(len(result.redacted), 'redaction')} listed\n"
    )
