"""`scrub completion bash|zsh|fish` (issue 14, item 22): the script loads in its shell, and
completing a word asks a real `scrub` process for the candidates."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from scrubber.cli import app, completion_cmd
from tests.conftest import CliResult, Sandbox


@pytest.fixture
def on_path(sandbox: Sandbox) -> dict[str, str]:
    """An environment whose PATH has a `scrub` that runs this working tree."""
    bin_dir = sandbox.root / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "scrub"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m scrubber.cli "$@"\n')
    launcher.chmod(0o700)
    env = sandbox.environ()
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def _shell(shell: str, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shell, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_scripts_ask_the_variable_main_answers() -> None:
    assert completion_cmd.COMPLETE_VAR == app.COMPLETE_VAR
    for shell in completion_cmd.Shell:
        assert app.COMPLETE_VAR in completion_cmd.completion_script(shell)


def test_bash_loads_the_script_and_completes_commands_and_options(
    on_path: dict[str, str], sandbox: Sandbox
) -> None:
    script = sandbox.root / "scrub.bash"
    # One bash: print the script with the real `scrub`, check its syntax, load it, and ask
    # what a Tab after `scrub au`, `scrub audit --for`, `scrub audit --format ` and `scrub `
    # would offer.
    asked = _shell(
        "bash",
        f"scrub completion bash > {script} && bash -n {script} && source {script} || exit 9\n"
        "complete -p scrub\n"
        'COMP_WORDS=(scrub au); COMP_CWORD=1; _scrub_completion scrub; echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(scrub audit --for); COMP_CWORD=2; _scrub_completion scrub; echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(scrub audit --format ""); COMP_CWORD=3; _scrub_completion scrub; '
        'echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(scrub ""); COMP_CWORD=1; _scrub_completion scrub; echo "${COMPREPLY[*]}"',
        on_path,
    )
    assert asked.returncode == 0, asked.stderr
    registered, commands, option, choices, everything = asked.stdout.splitlines()
    assert "-F _scrub_completion scrub" in registered
    assert commands.split() == ["audit"]
    assert option.split() == ["--format"]
    assert set(choices.split()) == {"text", "json", "sarif"}
    offered = set(everything.split())
    assert {"audit", "policy", "completion", "archives"} <= offered
    assert not {"worker", "hook"} & offered  # internal commands stay hidden


@pytest.mark.parametrize(
    ("shell", "check"),
    [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])],
)
def test_zsh_and_fish_scripts_parse(
    on_path: dict[str, str], sandbox: Sandbox, shell: str, check: list[str]
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"install {shell} (apt-get install {shell}) to check its completion script")
    script = sandbox.root / f"scrub.{shell}"
    script.write_text(completion_cmd.completion_script(completion_cmd.Shell(shell)) + "\n")
    parsed = subprocess.run(
        [*check, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert parsed.returncode == 0, parsed.stderr


def test_fish_completes_with_the_script(on_path: dict[str, str], sandbox: Sandbox) -> None:
    if shutil.which("fish") is None:
        pytest.skip("install fish (apt-get install fish) to run its completion")
    script = sandbox.root / "scrub.fish"
    script.write_text(completion_cmd.completion_script(completion_cmd.Shell.fish) + "\n")
    done = _shell("fish", f"source {script}; complete -C 'scrub policy '", on_path)
    assert done.returncode == 0, done.stderr
    offered = {line.split("\t")[0] for line in done.stdout.splitlines()}
    assert offered == {"init", "show"}


def test_an_unknown_shell_is_a_usage_error(scrub_cli: Callable[..., CliResult]) -> None:
    done = scrub_cli("completion", "tcsh")
    assert done.returncode == 2
    assert "tcsh" in done.stderr and "bash" in done.stderr
    assert done.stdout == ""


def test_help_shows_how_to_load_it(scrub_cli: Callable[..., CliResult]) -> None:
    done = scrub_cli("completion", "--help")
    assert "source <(scrub completion bash)" in done.stdout
    assert Path(".config/fish/completions/scrub.fish").as_posix() in done.stdout


@pytest.mark.parametrize(
    ("env", "command"),
    [
        ({"COMP_WORDS": "scrub au", "COMP_CWORD": "1"}, None),
        ({"COMP_WORDS": "scrub audit --for", "COMP_CWORD": "2"}, "audit"),
        ({"COMP_WORDS": "scrub policy ", "COMP_CWORD": "2"}, "policy"),
        ({"COMP_WORDS": "scrub", "COMP_CWORD": "1"}, None),
        ({"_TYPER_COMPLETE_ARGS": "scrub archives"}, None),
        ({"_TYPER_COMPLETE_ARGS": "scrub archives "}, "archives"),
        ({"_TYPER_COMPLETE_ARGS": "scrub audit --se"}, "audit"),
        ({}, None),
    ],
)
def test_a_request_past_the_command_word_loads_only_that_command(
    env: dict[str, str], command: str | None
) -> None:
    assert completion_cmd.command_being_completed(env) == command
