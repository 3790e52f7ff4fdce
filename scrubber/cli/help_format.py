"""How `--help` reads: examples kept line for line, `PATH` not `{PATH}`, short help never cut.

`build_app` gives every command and group these classes, so a command module only writes its
docstring: a first sentence short enough for `scrub --help`, and an `Examples:` section whose
lines (`scrub ...  # comment`) are printed as written, never rewrapped.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer import _click as click
from typer.core import TyperCommand, TyperGroup

_EXAMPLES = "Examples:"


def _unbraced(piece: str) -> str:
    # typer writes a required argument `{PATH}`; the convention (and click's) is a bare `PATH`.
    return piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece


def _format_help_text(command: click.Command, formatter: click.HelpFormatter) -> None:
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


def _short_help(command: click.Command) -> str:
    if command.short_help:
        return inspect.cleandoc(command.short_help)
    first = inspect.cleandoc(command.help or "").split("\n\n")[0]
    return " ".join(first.split())


class ScrubCommand(TyperCommand):
    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [_unbraced(piece) for piece in super().collect_usage_pieces(ctx)]

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_help_text(self, formatter)

    def get_short_help_str(self, limit: int = 45) -> str:
        return _short_help(self)


class ScrubGroup(TyperGroup):
    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_help_text(self, formatter)

    def get_short_help_str(self, limit: int = 45) -> str:
        return _short_help(self)


def apply(app: typer.Typer) -> None:
    """Give `app`'s commands and groups, at every depth, the classes above."""
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = ScrubCommand
    for group in app.registered_groups:
        group.cls = ScrubGroup
        instance: Any = group.typer_instance
        if instance is not None:
            apply(instance)
