"""The `scrub` command: one typer app, thin commands, errors turned into exit codes here only."""

from __future__ import annotations

import os
import sys
import traceback
from typing import NoReturn

import click
import typer

from scrubber import __version__
from scrubber.cli import (
    archive_cmd,
    audit_cmd,
    doctor_cmd,
    hook_cmd,
    install_cmd,
    redact_cmd,
    retention_cmd,
)
from scrubber.errors import ExitCode, ScrubberError

app = typer.Typer(
    name="scrub",
    help=(
        "Keep Claude Code transcripts from becoming a leak.\n\n"
        "Find secrets in session transcripts (audit), write redacted copies (redact), keep "
        "encrypted archives in the age format (archive), and control deletion (retention).\n\n"
        "Claude Code's files are found under $CLAUDE_CONFIG_DIR (default ~/.claude); scrubber "
        "keeps its own under $SCRUB_HOME (default <config dir>/scrubber).\n\n"
        "Exit codes: 0 done/clean, 1 findings, 2 usage/policy/key error, 3 runtime or I/O error, "
        "4 busy."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"scrub {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    pass


audit_cmd.register(app)
redact_cmd.register(app)
archive_cmd.register(app)
retention_cmd.register(app)
install_cmd.register(app)
doctor_cmd.register(app)
hook_cmd.register(app)


def fail(error: ScrubberError) -> NoReturn:
    sys.stderr.write(f"scrub: error: {error.message}\n")
    if error.hint:
        sys.stderr.write(f"hint: {error.hint}\n")
    raise SystemExit(int(error.exit_code))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script."""
    try:
        app(args=argv, standalone_mode=True)
    except ScrubberError as error:
        fail(error)
    except KeyboardInterrupt:
        sys.stderr.write("scrub: interrupted\n")
        raise SystemExit(130) from None
    except click.exceptions.Exit as done:
        raise SystemExit(done.exit_code) from None
    except SystemExit:
        raise
    except Exception as error:
        if os.environ.get("SCRUB_DEBUG"):
            traceback.print_exc()
        # The type only: an exception's text might quote input, and input may hold secrets.
        sys.stderr.write(
            f"scrub: internal error ({type(error).__name__}); rerun with SCRUB_DEBUG=1 for details\n"
        )
        raise SystemExit(int(ExitCode.RUNTIME)) from None
