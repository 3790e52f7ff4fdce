"""`--quiet` (`-q`), on every command: errors, warnings and data only.

One option, added to every command by `command.py`, and one place that decides what it keeps:

- stdout is dropped, unless it carries data: a `--format` other than text (JSON, SARIF), or a
  command whose output is its product (`keygen`'s identity, `decrypt`'s plaintext, a
  completion script, the hooks' answers to Claude Code);
- stderr keeps errors, hints and warnings; progress lines (progress.py) and the notes said
  through `note()` are dropped;
- exit codes never change: `scrub audit -q` still exits 1 when it found secrets.

The flag lives in the click context's `meta`, which a group shares with its subcommands, so
`scrub -q archives list`, `scrub archives -q list` and `scrub archives list -q` agree, and no
state outlives one run (tests run many in one process).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any

from typer import _click as click
from typer._click.globals import get_current_context
from typer.core import TyperOption

QUIET_KEY = "scrubber.quiet"
QUIET_FLAGS = ("--quiet", "-q")
QUIET_HELP = (
    "Print only errors, warnings and data (JSON/SARIF, keys, plaintext); exit codes unchanged."
)

# Commands whose stdout is what they were run for: dropping it would lose a key, a file, a
# script, or break a hook's answer to Claude Code.
STDOUT_IS_PRODUCT = frozenset(
    {"keygen", "decrypt", "completion", "session-end", "status-line", "post-tool-use",
     "user-prompt-submit"}
)  # fmt: skip


def remember(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
    if value:
        ctx.meta[QUIET_KEY] = True


def quiet_option() -> TyperOption:
    """A fresh `--quiet/-q` parameter (each command gets its own object)."""
    return TyperOption(
        param_decls=list(QUIET_FLAGS),
        is_flag=True,
        default=False,
        expose_value=False,
        callback=remember,
        help=QUIET_HELP,
    )


def is_quiet() -> bool:
    """Whether the command running now was given `--quiet`."""
    ctx = get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(QUIET_KEY))


def note(text: str) -> None:
    """An informational line on stderr (`scrub: …`), which `--quiet` drops."""
    if not is_quiet():
        sys.stderr.write(f"scrub: {text}\n")


def _stdout_is_data(ctx: click.Context) -> bool:
    if ctx.info_name in STDOUT_IS_PRODUCT:
        return True
    for param in ctx.command.params:
        if "--format" in param.opts:
            value = ctx.params.get(param.name or "")
            return value is not None and str(value) != "text"
    return False


class _Discard(io.TextIOBase):
    """Where informational stdout goes under --quiet."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def applied(ctx: click.Context) -> Iterator[None]:
    """Run a command's body with --quiet's rules in force (nothing changes without it)."""
    if not ctx.meta.get(QUIET_KEY) or _stdout_is_data(ctx):
        yield
        return
    with contextlib.redirect_stdout(_Discard()):
        yield
