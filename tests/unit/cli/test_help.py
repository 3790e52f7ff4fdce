"""Every command's `--help`: examples, readable metavars, short help not cut, internals hidden."""

from __future__ import annotations

from collections.abc import Iterator

import typer.main
from typer import _click as click

from scrubber.cli.app import build_app
from scrubber.cli.common import plural

INTERNAL = {"worker", "hook"}


def _walk(
    command: click.Command, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        if True:
            yield from _walk(sub, (*path, name))


def _help(command: click.Command, path: tuple[str, ...]) -> str:
    ctx = click.Context(command, info_name=" ".join(("scrub", *path)), terminal_width=80)
    return command.get_help(ctx)


def test_every_command_has_examples_and_no_brace_metavar() -> None:
    root = typer.main.get_command(build_app())
    commands = list(_walk(root, ()))
    assert len(commands) > 15
    for path, command in commands[1:]:
        internal = path[0] in INTERNAL
        assert command.hidden == (internal and len(path) == 1), path
        text = _help(command, path)
        assert "{" not in text.split("\n\n")[0], (path, text.splitlines()[0])
        if not internal and not hasattr(command, "commands"):
            assert "Examples:" in text, path
        for line in text.splitlines():
            assert len(line) <= 80, (path, line)


def test_the_command_list_cuts_no_description() -> None:
    root = typer.main.get_command(build_app())
    text = _help(root, ())
    listed = text.split("Commands:")[1]
    assert "..." not in listed
    assert all(line.startswith("  ") and line[2] != " " for line in listed.strip("\n").splitlines())
    assert not {"worker", "hook"} & {line.split()[0] for line in listed.strip().splitlines()}
    for group in ("archives",):
        sub = root.commands[group]  # type: ignore[attr-defined]
        assert "..." not in _help(sub, (group,)).split("Commands:")[1]


def test_plural() -> None:
    assert plural(1, "file") == "1 file"
    assert plural(0, "file") == "0 files"
    assert plural(2, "secret") == "2 secrets"
    assert plural(1, "session") == "1 session"
    assert plural(3, "entry", "entries") == "3 entries"
