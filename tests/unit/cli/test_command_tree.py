"""Rules every command follows, checked over the whole command tree (new commands included):
a single-value option refuses repetition, no value may be empty, every option's metavar names
what it takes, and every command accepts --quiet."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer.main
from typer import _click as click
from typer._click.exceptions import UsageError
from typer.exceptions import Exit

from scrubber.cli.app import build_app
from scrubber.cli.arguments import EMPTY_ALLOWED, long_name, takes_one

# What typer derives from a type when nobody named the value: `<str>`, `<path>`, `<int>`.
GENERIC_METAVAR = re.compile(r"<[a-z_]+>|TEXT|PATH|INTEGER|FLOAT|FILENAME|DIRECTORY")
NAMED_METAVAR = re.compile(r"[A-Z][A-Z_]*(\|[A-Z][A-Z_]*)*|<[a-z-]+(\|[a-z-]+)+>")


def _leaves(
    command: click.Command, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    subs = getattr(command, "commands", {})
    if not subs and path:
        yield path, command
    for name, sub in subs.items():
        yield from _leaves(sub, (*path, name))


ROOT = typer.main.get_command(build_app())
LEAVES = list(_leaves(ROOT))
IDS = [" ".join(path) for path, _ in LEAVES]


def _options(command: click.Command) -> list[click.Parameter]:
    return [p for p in command.params if p.param_type_name == "option"]


def _takes_value(param: click.Parameter) -> bool:
    return not getattr(param, "is_flag", False) and not getattr(param, "count", False)


def _parse(path: tuple[str, ...], command: click.Command, args: list[str]) -> None:
    command.make_context(" ".join(("scrub", *path)), args)


def test_the_tree_holds_every_command() -> None:
    names = {" ".join(path) for path, _ in LEAVES}
    assert {"audit", "redact", "archive", "archives list", "policy show", "completion"} <= names


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_single_value_options_refuse_repetition(
    path: tuple[str, ...], command: click.Command
) -> None:
    for param in _options(command):
        if param.is_eager:
            continue  # --help
        flag = param.opts[0]
        once = [flag, "x"] if _takes_value(param) else [flag]
        if takes_one(param):
            with pytest.raises(UsageError, match=f"{re.escape(long_name(param))} was given 2"):
                _parse(path, command, once + once)
        else:
            try:
                _parse(path, command, once + once)
            except UsageError as error:  # a missing argument, a bad value: not the repeat
                assert "was given 2" not in error.format_message(), (path, flag)
            except Exit:
                pass


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_no_option_or_argument_takes_an_empty_value(
    path: tuple[str, ...], command: click.Command
) -> None:
    for param in command.params:
        if (path[-1], long_name(param)) in EMPTY_ALLOWED:
            continue
        if param.param_type_name == "option":
            if not _takes_value(param):
                continue
            args = [param.opts[0], ""]
        else:
            args = [""]
        with pytest.raises(UsageError, match="empty value"):
            _parse(path, command, args)


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_every_option_names_what_it_takes(path: tuple[str, ...], command: click.Command) -> None:
    ctx = click.Context(command, info_name=" ".join(("scrub", *path)))
    for param in _options(command):
        if not _takes_value(param):
            continue
        metavar = param.make_metavar(ctx)
        assert not GENERIC_METAVAR.fullmatch(metavar), (path, param.opts, metavar)
        assert NAMED_METAVAR.fullmatch(metavar), (path, param.opts, metavar)
    help_text = command.get_help(ctx)
    assert not re.search(r"<(str|path|int|float|text)>", help_text), path


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=IDS)
def test_every_command_accepts_quiet(path: tuple[str, ...], command: click.Command) -> None:
    for spelling in ("--quiet", "-q"):
        with pytest.raises(Exit) as done:  # --help, eager, ends the parse once -q was taken
            _parse(path, command, [spelling, "--help"])
        assert done.value.exit_code == 0


def test_an_empty_on_session_end_still_means_audit_only() -> None:
    install = ROOT.commands["install"]  # type: ignore[attr-defined]
    ctx = install.make_context("scrub install", ["--on-session-end", ""])
    assert ctx.params["on_session_end"] == ""


def test_repeats_are_refused_with_the_name_the_user_did_not_type() -> None:
    # `-o a -o b`: the message names the option by its long name, which help lists.
    keygen = ROOT.commands["keygen"]  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match="--output was given 2 times"):
        _parse(("keygen",), keygen, ["-o", "a", "--output", "b"])
