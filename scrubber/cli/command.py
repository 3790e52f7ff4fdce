"""The click classes every `scrub` command and group is built with (`build_app` applies them).

They add what each command would otherwise have to repeat, so a new command gets it too:
readable help (help_format.py), the refusal of repeated single-value options and of empty
values, metavars that name what an option takes (arguments.py), and `--quiet` (quiet.py).
"""

from __future__ import annotations

from typing import Any

import typer
from typer import _click as click
from typer.core import TyperCommand, TyperGroup

from scrubber.cli import arguments, help_format, quiet


class ScrubCommand(TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not any(set(quiet.QUIET_FLAGS) & set(p.opts) for p in self.params):
            self.params.append(quiet.quiet_option())
        arguments.default_metavars(self)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:  # shell completion parses half-typed lines
            arguments.refuse_repeats_and_empties(self, ctx, args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        with quiet.applied(ctx):
            return super().invoke(ctx)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return help_format.usage_pieces(super().collect_usage_pieces(ctx))

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        help_format.format_help_text(self, formatter)

    def get_short_help_str(self, limit: int = 45) -> str:
        return help_format.short_help(self)


class ScrubGroup(TyperGroup):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(quiet.quiet_option())

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        help_format.format_help_text(self, formatter)

    def get_short_help_str(self, limit: int = 45) -> str:
        return help_format.short_help(self)


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
