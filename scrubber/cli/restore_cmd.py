"""`scrub restore` (a session back from its archive) and `scrub decrypt` (any age file, as
`age -d`). They parse, call `usecases.restore` or `archive.decrypt`, and say what came back."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from scrubber.archive.decrypt import decrypt_file, decrypt_to_stream
from scrubber.cli import common, quiet
from scrubber.cli.archive_common import archives_root, human_bytes, read_identities, warn
from scrubber.cli.common import PolicyOption
from scrubber.errors import ScrubberError, UsageError
from scrubber.usecases.restore import RestoreOutcome, restore_session

IdentityOption = Annotated[
    list[Path] | None,
    typer.Option("--identity", "-i", help="Identity file (repeatable)."),
]
PassphraseFileOption = Annotated[
    Path | None, typer.Option("--passphrase-file", help="Passphrase file.")
]
PassphraseOption = Annotated[
    bool, typer.Option("--passphrase", help="Type the passphrase at the terminal.")
]


def register(app: typer.Typer) -> None:
    # In this order: `scrub --help` lists the commands as they are registered.
    _register_restore(app)
    _register_decrypt(app)


def _register_restore(app: typer.Typer) -> None:
    @app.command("restore")
    def restore_command(
        archive: Annotated[
            str,
            typer.Argument(
                metavar="ARCHIVE",
                help="An archive file, or a session id (prefix): its newest archive.",
            ),
        ],
        identity: IdentityOption = None,
        passphrase_file: PassphraseFileOption = None,
        passphrase: PassphraseOption = False,
        to: Annotated[
            Path | None,
            typer.Option(
                "--to",
                metavar="CONFIG_DIR",
                help="Config directory to restore into (default: $CLAUDE_CONFIG_DIR / "
                "~/.claude); it must be one already, unless --create.",
            ),
        ] = None,
        create: Annotated[
            bool,
            typer.Option("--create", help="Make --to a new config directory if it is not one."),
        ] = False,
        force: Annotated[
            bool,
            typer.Option(
                "--force",
                help="Replace the session if it is there and differs; what it replaces goes "
                "to the trash first (scrub undelete brings it back).",
            ),
        ] = False,
        keep_mtime: Annotated[
            bool,
            typer.Option(
                "--keep-mtime",
                help="Keep the archived mtimes (default: now, so Claude Code's cleanup gives a "
                "full period to resume).",
            ),
        ] = False,
        directory: Annotated[
            Path | None, typer.Option("--dir", help="Archive folder, to find a session id.")
        ] = None,
        policy_path: PolicyOption = None,
    ) -> None:
        """Put an archived session back where `claude --resume` finds it.

        Everything is decrypted and checked before anything is moved into place; an existing
        session is never overwritten without --force, and with it the version that was there
        goes to scrubber's trash first.

        Examples:

          scrub restore 3f9a2c1e -i ~/scrub-key.txt

          scrub restore 3f9a2c1e -i ~/scrub-key.txt --force

          scrub restore FILE.tar.gz.age -i KEY --to /srv/other-claude --create
        """
        # A redacted archive in clear needs no key; an encrypted one fails on the missing key.
        identities = read_identities(identity, passphrase_file, passphrase, required=False)
        outcome = restore_session(
            common.env(),
            archive,
            identities,
            archives_root=lambda: archives_root(directory, policy_path),
            to=to,
            create=create,
            force=force,
            keep_mtime=keep_mtime,
            warn=warn,
        )
        _say_restored(outcome, default_config=to is None)


def _say_restored(outcome: RestoreOutcome, *, default_config: bool) -> None:
    result = outcome.result
    session = result.manifest.session.session_id
    replaced = f", {len(result.replaced)} replaced" if result.replaced else ""
    typer.echo(
        f"restored session {session} ({common.plural(result.files, 'file')}{replaced}) into {result.config_dir}"
    )
    prefix = "" if default_config else f"CLAUDE_CONFIG_DIR={result.config_dir} "
    if outcome.trashed is not None:
        typer.echo(
            f"the version that was there is in the trash ({outcome.trashed}): to switch back, "
            f"move the restored session aside, then run: {prefix}scrub undelete {session}"
        )
    typer.echo(f"resume it with: {prefix}claude --resume {session}")


def _register_decrypt(app: typer.Typer) -> None:
    @app.command("decrypt")
    def decrypt_command(
        source: Annotated[Path, typer.Argument(metavar="FILE", help="An age-encrypted file.")],
        output: Annotated[
            str | None,
            typer.Option(
                "--output",
                "-o",
                metavar="OUT",
                help="Where to write the plaintext (0600); - or none: stdout, as age -d.",
            ),
        ] = None,
        identity: IdentityOption = None,
        passphrase_file: PassphraseFileOption = None,
        passphrase: PassphraseOption = False,
        force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
    ) -> None:
        """Decrypt any age file (as `age -d`).

        To a file (-o OUT): through a temp file removed on failure, so a damaged or truncated
        file leaves no partial output. To stdout (no -o, or -o -): chunk by chunk, each one
        written once it authenticated; a damaged file stops with an error (exit 3). Plaintext
        is never written to a terminal.

        Examples:

          scrub decrypt ARCHIVE.tar.gz.age -i ~/scrub-key.txt -o session.tar.gz

          cd ~/.claude && scrub decrypt FILE.tar.gz.age -i ~/scrub-key.txt | tar xz
        """
        to_stdout = output is None or output == "-"
        if to_stdout and sys.stdout.isatty():
            # age refuses too: an archive's plaintext holds the secrets it was made to keep.
            raise UsageError(
                "refusing to write the plaintext to a terminal",
                hint="pipe it (scrub decrypt FILE -i KEY | tar xz), or write a file with -o OUT",
            )
        identities = read_identities(identity, passphrase_file, passphrase, required=True)
        if not to_stdout:
            size = decrypt_file(source, Path(str(output)), identities, force=force)
            quiet.note(f"decrypted {human_bytes(size)} to {output}")
            return
        try:
            decrypt_to_stream(source, sys.stdout.buffer, identities)
        except BrokenPipeError:
            # Nothing more can reach the reader; keep the exit-time flush from failing again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise ScrubberError(
                "stdout was closed before the end of the plaintext",
                hint="the command reading it stopped early; nothing else was written",
            ) from None
