"""The `scrub` command: one typer app, thin commands, errors turned into exit codes here only."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

import typer

from scrubber import __version__
from scrubber.cli import command as command_classes
from scrubber.cli import quiet
from scrubber.cli.terminal_text import terminal_lines
from scrubber.errors import ExitCode, ScrubberError

# Each command group's module, and the command names it registers, in the order `--help` lists
# them. Only the module of the command being run is imported: the others pull in detection,
# cryptography and retention, which would cost every command (and a hook) hundreds of ms.
# tests/unit/cli/test_app.py proves this table matches what each module registers.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "audit_cmd": ("audit",),
    "redact_cmd": ("redact", "verify"),
    "archive_cmd": ("keygen", "archive"),
    "restore_cmd": ("restore", "decrypt"),
    "archives_cmd": ("archives",),
    "retention_cmd": ("retention",),
    "sessions_cmd": ("sessions",),
    "search_cmd": ("search",),
    "export_cmd": ("export",),
    "pins_cmd": ("pin", "unpin", "pins"),
    "undelete_cmd": ("undelete",),
    "install_cmd": ("install", "uninstall"),
    "doctor_cmd": ("doctor",),
    "hook_cmd": ("worker", "hook"),
    "completion_cmd": ("completion",),
    "policy_cmd": ("policy",),
}
# Set by the scripts `scrub completion SHELL` prints (completion_cmd.COMPLETE_VAR): this run
# answers a shell's completion request instead of running a command.
COMPLETE_VAR = "_SCRUB_COMPLETE"


def build_app(command: str | None = None, *, commands: bool = True) -> typer.Typer:
    """The typer app with every command, or only the group that holds `command` (none at all
    with `commands=False`, enough for `--version`)."""
    app = _new_app()
    modules = [m for m, names in COMMAND_MODULES.items() if command in names] or list(
        COMMAND_MODULES
    )
    if not commands:
        modules = []
    for module in modules:
        importlib.import_module(f"scrubber.cli.{module}").register(app)
    command_classes.apply(app)
    return app


def _new_app() -> typer.Typer:
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
    app.callback()(_root)
    return app


def _version(value: bool) -> None:
    if value:
        typer.echo(f"scrub {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    _quiet: bool = typer.Option(
        False,
        *quiet.QUIET_FLAGS,
        callback=quiet.remember,
        expose_value=False,
        help=quiet.QUIET_HELP,
    ),
) -> None:
    pass


def _command_in(argv: Sequence[str]) -> str | None:
    """The first argument that is not an option: the command's name, if any."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def __getattr__(name: str) -> typer.Typer:
    # `scrubber.cli.app.app`: the whole app, built on first use (tests, documentation tools).
    if name == "app":
        return build_app()
    raise AttributeError(name)


def fail(error: ScrubberError) -> NoReturn:
    # A message or hint can name a file, a folder or a title (terminal_text.py); a line break
    # of its own is kept.
    sys.stderr.write(terminal_lines(f"scrub: error: {error.message}".split("\n")) + "\n")
    if error.hint:
        sys.stderr.write(terminal_lines(f"hint: {error.hint}".split("\n")) + "\n")
    raise SystemExit(int(error.exit_code))


def run() -> NoReturn:
    """The console script (and `python -m scrubber.cli`): `main`, then a quick exit that
    skips the interpreter's teardown (cli/quick_exit.py)."""
    from scrubber.cli.quick_exit import run_and_exit

    run_and_exit(main)


def main(argv: list[str] | None = None) -> None:
    """Run the command `argv` (default: the process's arguments) as the console script does;
    ends by raising SystemExit for any status but 0."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if os.environ.get(COMPLETE_VAR):
            from scrubber.cli.completion_cmd import answer_completions, command_being_completed

            answer_completions()
            completing = build_app(command_being_completed(os.environ))
            completing(args=[], complete_var=COMPLETE_VAR, prog_name="scrub")
            return
        command = _command_in(args)
        wants_list = not args or any(a in ("-h", "--help") for a in args)
        build_app(command, commands=command is not None or wants_list)(
            args=args, standalone_mode=True
        )
    except ScrubberError as error:
        fail(error)
    except KeyboardInterrupt:
        sys.stderr.write("scrub: interrupted\n")
        raise SystemExit(130) from None
    except typer.Exit as done:  # what typer's own click raises for `ctx.exit`
        raise SystemExit(done.exit_code) from None
    except SystemExit:
        raise
    except OSError as error:
        from scrubber.cli.os_errors import os_error_as_scrubber_error

        told = os_error_as_scrubber_error(error)
        if told is None:
            _internal(error)
        if os.environ.get("SCRUB_DEBUG"):
            traceback.print_exc()
        fail(told)
    except OverflowError:
        from scrubber.cli.os_errors import overflow_as_scrubber_error

        if os.environ.get("SCRUB_DEBUG"):
            traceback.print_exc()
        fail(overflow_as_scrubber_error())
    except Exception as error:
        _internal(error)


def _internal(error: BaseException) -> NoReturn:
    if os.environ.get("SCRUB_DEBUG"):
        traceback.print_exc()
    # The type only: an exception's text might quote input, and input may hold secrets.
    sys.stderr.write(
        f"scrub: internal error ({type(error).__name__}); rerun with SCRUB_DEBUG=1 for details\n"
    )
    raise SystemExit(int(ExitCode.RUNTIME)) from None
