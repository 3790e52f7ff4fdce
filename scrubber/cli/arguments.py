"""What every command line must satisfy before a command runs, and how its options read in help.

Two refusals, for every command (command.py applies them, so a new command is covered too):

- A single-value option given twice (`--format json --format sarif`, `--days 7 --days 70`) is a
  usage error naming the option. click keeps the last one silently, and the user may have meant
  the first. Options that take several values say so (`multiple=True`: `--session`, `-r`).
- An empty value (`--session ''`, `--project ''`, `scrub pin ''`) is a usage error. An empty
  id prefix or project part matches every session, and an empty path is the current folder:
  an unset shell variable must never widen a command to everything (EMPTY_ALLOWED lists the
  options where empty is a choice of its own).

And one default: an option's metavar names what it takes (`SESSION`, `DIR`, `DAYS`, `FILE`),
never the generic `<str>` or `<path>` typer derives from its type. A module may pass
`metavar=` itself; otherwise the names below apply, by option, then by command and option.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from typer import _click as click
from typer._click.exceptions import UsageError

# The few options where an empty value says something: `--on-session-end ''` is "no action,
# audit only" (install's help says so).
EMPTY_ALLOWED: frozenset[tuple[str, str]] = frozenset({("install", "--on-session-end")})

# By an option's first long name.
METAVARS: dict[str, str] = {
    "--session": "SESSION",
    "--project": "PROJECT",
    "--since": "WHEN",
    "--older-than": "AGE",
    "--policy": "FILE",
    "--format": "<text|json>",
    "--check": "FILE",
    "--original": "FILE",
    "--output": "FILE",
    "--recipient": "RECIPIENT",
    "--recipients-file": "FILE",
    "--passphrase-file": "FILE",
    "--identity": "IDENTITY_FILE",
    "--dir": "DIR",
    "--host": "HOST",
    "--to": "CONFIG_DIR",
    "--days": "DAYS",
    "--reason": "REASON",
    "--on-session-end": "ACTIONS",
    "--session-end-timeout": "SECONDS",
    "--wrap": "COMMAND",
    "--budget-ms": "MILLISECONDS",
}
# Where one command's option takes something else than the same option elsewhere.
COMMAND_METAVARS: dict[tuple[str, str], str] = {
    ("redact", "--output"): "OUT|DEST",
    ("archive", "--output"): "DIR",
}


def long_name(param: click.Parameter) -> str:
    """`--session` for an option (its first long spelling), `SESSION` for an argument."""
    names = [*param.opts, *param.secondary_opts]
    if param.param_type_name == "argument":
        return param.human_readable_name
    return next((n for n in names if n.startswith("--")), names[0] if names else "?")


def default_metavars(command: click.Command) -> None:
    """Give each option that takes a value and names no metavar the one it takes."""
    for param in command.params:
        if param.param_type_name != "option" or param.metavar is not None:
            continue
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            continue
        if getattr(param.type, "choices", None):
            continue  # typer shows the choices: `<text|json|sarif>`
        name = long_name(param)
        chosen = COMMAND_METAVARS.get((command.name or "", name), METAVARS.get(name))
        if chosen is not None:
            param.metavar = chosen


def takes_one(param: click.Parameter) -> bool:
    """Whether the parameter is an option that may be given only once."""
    if param.param_type_name != "option":
        return False
    return not param.multiple and not getattr(param, "count", False)


def refuse_repeats_and_empties(
    command: click.Command, ctx: click.Context, args: Sequence[str]
) -> None:
    """Raise a usage error (exit 2) for a repeated single-value option or an empty value."""
    parser = command.make_parser(ctx)
    values, _, order = parser.parse_args(args=list(args))
    times = Counter(id(param) for param in order)
    for param in dict.fromkeys(order):
        if takes_one(param) and not param.is_eager and times[id(param)] > 1:
            takes = "" if getattr(param, "is_flag", False) else "it takes one value; "
            raise UsageError(
                f"{long_name(param)} was given {times[id(param)]} times; {takes}give it once",
                ctx,
            )
    for param in command.get_params(ctx):
        if (command.name or "", long_name(param)) in EMPTY_ALLOWED:
            continue
        value = values.get(param.name) if param.name else None
        given = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(item, str) and not item.strip() for item in given):
            what = long_name(param)
            raise UsageError(
                f"{what} was given an empty value; name what you mean (an empty one would "
                "match every session, or name the current folder)",
                ctx,
            )
