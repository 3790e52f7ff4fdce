"""`scrub undelete`: parses, calls `usecases.retention.undelete_session`, says what came back.

A module of its own (not in retention_cmd) so that `scrub --help` lists the commands in the
order it always has: retention, sessions, pin, unpin, pins, undelete."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.cli.retention_text import warn
from scrubber.usecases.retention import undelete_session


def register(app: typer.Typer) -> None:
    @app.command("undelete")
    def undelete_command(
        session: Annotated[str, typer.Argument(metavar="SESSION", help="Id, id prefix or title.")],
        keep_mtime: Annotated[
            bool,
            typer.Option(
                "--keep-mtime",
                help="Keep the files' old mtimes (Claude Code's sweep may then delete the "
                "session again at its next start).",
            ),
        ] = False,
        version: Annotated[
            int | None,
            typer.Option(
                "--version",
                min=1,
                metavar="N",
                help="Which trashed version of the session to bring back (default: the "
                "newest); `scrub retention` and the warning after an undelete number them.",
            ),
        ] = None,
    ) -> None:
        """Put a session back from scrubber's trash, for Claude Code.

        SESSION is its id, an id prefix, or its title as `scrub sessions` showed it (the
        custom title, then Claude Code's own; exact first, then ignoring case). Refuses,
        changing nothing, when a file is in the way. The restored files' mtimes become now,
        so Claude Code's sweep gives a full period to resume the session.

        The trash keeps every version of a session that went there (each `restore --force`
        trashes the one it replaces): the newest comes back unless --version names another,
        and a warning says which versions remain.

        Examples:

          scrub undelete 3f9a2c1e

          scrub undelete "Rotate deploy key"

          scrub undelete 3f9a2c1e --version 1
        """
        result = undelete_session(
            common.env(),
            session,
            keep_mtime=keep_mtime,
            now=datetime.now(UTC),
            warn=warn,
            version=version,
        )
        typer.echo(
            f"restored {result.project_shown}/{result.session_id} ({len(result.result.restored)}"
            " paths)"
            f"{'' if keep_mtime else '; mtimes set to now'}: claude --resume {result.session_id}"
        )
        # Retention ages a session by the timestamps inside it, not by mtime.
        typer.echo(
            "note: its last activity is unchanged, so the next retention run removes it "
            f"again unless it is resumed or pinned (scrub pin {result.session_id})"
        )
