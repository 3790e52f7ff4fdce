"""How `--help` reads: examples kept line for line, `PATH` not `{PATH}`, short help never cut.

command.py gives every command and group these, so a command module only writes its
docstring: a first sentence short enough for `scrub --help`, and an `Examples:` section whose
lines (`scrub ...  # comment`) are printed as written, never rewrapped.
"""

from __future__ import annotations

import inspect

from typer import _click as click

_EXAMPLES = "Examples:"


def _unbraced(piece: str) -> str:
    # typer writes a required argument `{PATH}`; the convention (and click's) is a bare `PATH`.
    return piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece


def format_help_text(command: click.Command, formatter: click.HelpFormatter) -> None:
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    head, found, examples = text.partition(_EXAMPLES)
    if head.strip():
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(head.strip())
    if not found:
        return
    formatter.write_paragraph()
    with formatter.indentation():
        formatter.write_text(_EXAMPLES)
        with formatter.indentation():
            for line in examples.strip().splitlines():
                if line.strip():
                    formatter.write(f"{'':>{formatter.current_indent}}{line.strip()}\n")


def short_help(command: click.Command) -> str:
    if command.short_help:
        return inspect.cleandoc(command.short_help)
    first = inspect.cleandoc(command.help or "").split("\n\n")[0]
    return " ".join(first.split())


def usage_pieces(pieces: list[str]) -> list[str]:
    return [_unbraced(piece) for piece in pieces]
