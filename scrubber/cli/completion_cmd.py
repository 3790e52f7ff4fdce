"""`scrub completion bash|zsh|fish`: the shell completion script, printed.

The script asks `scrub` itself for the candidates (it runs `scrub` with `_SCRUB_COMPLETE` set,
which `app.main` hands to typer's completion), so commands, options and choices added later
complete without a new script. Only typer's own script templates speak that protocol, so they
are used as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated

import typer
from typer._completion_shared import get_completion_script

PROG_NAME = "scrub"
COMPLETE_VAR = "_SCRUB_COMPLETE"  # what the scripts set; app.main checks it


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def answer_completions() -> None:
    """Make typer's completion classes known, for a run that a completion script started."""
    from typer._completion_classes import completion_init

    completion_init()


def command_being_completed(env: Mapping[str, str]) -> str | None:
    """The command word a completion request is past (`audit` in `scrub audit --f`), so
    that only its module is loaded: a Tab then costs what that command's start-up costs.
    None while the command word itself is being typed (every command is a candidate)."""
    if "COMP_WORDS" in env:  # bash: the words and the index of the one being completed
        words = env["COMP_WORDS"].split()
        done = int(env.get("COMP_CWORD", "0") or 0)
    else:  # zsh and fish: the line up to the cursor
        line = env.get("_TYPER_COMPLETE_ARGS", "")
        words = line.split()
        done = len(words) if line[-1:].isspace() else len(words) - 1
    return words[1] if done >= 2 and len(words) > 1 else None


def completion_script(shell: Shell) -> str:
    return get_completion_script(prog_name=PROG_NAME, complete_var=COMPLETE_VAR, shell=shell.value)


def register(app: typer.Typer) -> None:
    @app.command("completion")
    def completion_command(
        shell: Annotated[Shell, typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
    ) -> None:
        """Print the shell completion script for scrub (bash, zsh or fish).

        Load it in your shell's start-up file, or write it where the shell looks for
        completions. It completes commands, options and their choices; the candidates come
        from scrub itself, so the script never goes stale.

        Examples:

          source <(scrub completion bash)   # this shell; put it in ~/.bashrc

          scrub completion bash > ~/.local/share/bash-completion/completions/scrub

          scrub completion zsh > ~/.zfunc/_scrub   # fpath+=(~/.zfunc) in ~/.zshrc

          scrub completion fish > ~/.config/fish/completions/scrub.fish
        """
        typer.echo(completion_script(shell))
