"""`scrub keygen`, `scrub archive`, `scrub archives list|verify`, `scrub restore`, `scrub decrypt`.

Keys follow age's conventions (identity files as `age-keygen` writes them, `age1…`
recipients), so archives open with `age -d -i KEY FILE | tar xz` without scrubber. Passphrases
are never taken from the command line (shell history, `ps`): from a terminal, or from a file
named by `--passphrase-file` / `$SCRUB_PASSPHRASE_FILE` for scripts.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from scrubber.archive.decrypt import decrypt_file
from scrubber.archive.keys import (
    generate_identity,
    identity_file_text,
    write_identity_file,
)
from scrubber.archive.layout import list_archives
from scrubber.archive.restore import restore_archive
from scrubber.cli import common
from scrubber.cli.archive_common import (
    ENV_PASSPHRASE_FILE,
    OutputFormat,
    archives_root,
    exit_for,
    human_bytes,
    new_passphrase,
    read_identities,
    warn,
)
from scrubber.cli.common import PolicyOption
from scrubber.cli.durations import DURATION_HELP, parse_moment
from scrubber.cli.progress import ProgressLine
from scrubber.errors import UsageError
from scrubber.usecases.archive import (
    ArchiveOutcome,
    Selection,
    archive_sessions,
    bundle_bytes,
    resolve_encryption,
    select_sessions,
)

# The archive command's arguments and options (module-level, so the command reads as its work).
SessionsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[SESSION]...",
        help="Sessions to archive: id, id prefix (4+ characters) or title.",
        show_default=False,
    ),
]

AllOption = Annotated[bool, typer.Option("--all", help="Every session in the config directory.")]

OlderThanOption = Annotated[
    str | None,
    typer.Option(
        "--older-than",
        metavar="AGE",
        help=f"Sessions whose last activity is older than AGE: {DURATION_HELP}.",
    ),
]

ProjectOption = Annotated[
    str | None,
    typer.Option("--project", help="Sessions whose project folder contains this."),
]

EncryptOption = Annotated[
    bool,
    typer.Option("--encrypt", help="Require encryption: fail when no recipient is known."),
]

RecipientOption = Annotated[
    list[str] | None,
    typer.Option("--recipient", "-r", help="Encrypt to this age1… recipient (repeatable)."),
]

RecipientsFileOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--recipients-file",
        "-R",
        help="Encrypt to the recipients in this file (age format; repeatable).",
    ),
]

PassphraseOption = Annotated[
    bool,
    typer.Option(
        "--passphrase",
        help="Encrypt to a passphrase, typed twice at the terminal (or read from "
        f"--passphrase-file / ${ENV_PASSPHRASE_FILE}).",
    ),
]

PassphraseFileOption = Annotated[
    Path | None,
    typer.Option(
        "--passphrase-file",
        help="Read the passphrase from this file (implies --passphrase).",
    ),
]

RedactOption = Annotated[
    bool,
    typer.Option(
        "--redact",
        help="Archive redacted copies (without recipients: in clear, as .tar.gz).",
    ),
]

ArchiveFolderOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        help="Archive folder (default: archive.destination, else $SCRUB_HOME/archives).",
    ),
]

FormatOption = Annotated[OutputFormat, typer.Option("--format", help="text or json.")]


# -------------------------------------------------------------------------------- commands


def register(app: typer.Typer) -> None:
    # In this order: `scrub --help` lists the commands as they are registered.
    _register_keygen(app)
    _register_archive(app)
    _register_restore(app)
    _register_decrypt(app)


def _register_keygen(app: typer.Typer) -> None:
    @app.command("keygen")
    def keygen_command(
        output: Annotated[
            Path | None,
            typer.Option(
                "--output",
                "-o",
                help="Write the identity to this file (0600; an existing file is never "
                "overwritten). Default: stdout.",
            ),
        ] = None,
    ) -> None:
        """Make an age X25519 key pair, as age-keygen does.

        The identity (secret key) goes to -o FILE or stdout; the recipient (public key) is
        printed on stderr. Put the recipient in the policy (archive.recipients) on the machine
        that archives; keep the identity somewhere else. Works with `age -i` / `age -r`.
        """
        identity = generate_identity()
        created = datetime.now(UTC).astimezone()
        if output is not None:
            write_identity_file(output, identity, created)
        else:
            sys.stdout.write(identity_file_text(identity, created))
            sys.stdout.flush()
        sys.stderr.write(f"Public key: {identity.recipient().encode()}\n")


def _register_archive(app: typer.Typer) -> None:
    @app.command("archive")
    def archive_command(
        sessions: SessionsArgument = None,
        all_sessions: AllOption = False,
        older_than: OlderThanOption = None,
        project: ProjectOption = None,
        encrypt: EncryptOption = False,
        recipient: RecipientOption = None,
        recipients_file: RecipientsFileOption = None,
        passphrase: PassphraseOption = False,
        passphrase_file: PassphraseFileOption = None,
        redact: RedactOption = False,
        output: ArchiveFolderOption = None,
        policy_path: PolicyOption = None,
        output_format: FormatOption = OutputFormat.text,
    ) -> None:
        """Archive sessions: one age-encrypted gzip tar per session version.

        Each archive holds the transcript, its side folder (subagents, tool-results), its
        file-history and the other files of the session, with manifest.json first. It opens
        without scrubber: age -d -i KEY FILE | tar xz (inside a config directory).

        Archives are encrypted whenever recipients are known (-r, -R, --passphrase, or
        archive.recipients in the policy). Without any, only --redact archives are written.

        Examples:

          scrub archive --all --encrypt -r age1…

          scrub archive 3f9a2c1e --passphrase

          scrub archive --older-than 20d --project shop-api
        """
        loaded = common.policy(policy_path)
        for warning in loaded.warnings:
            warn(warning)
        home = common.scrub_home()
        now = datetime.now(UTC)
        selection = Selection(
            sessions=tuple(sessions or ()),
            all=all_sessions,
            active_before=(
                None if older_than is None else parse_moment(older_than, "--older-than", now)
            ),
            project=project,
        )
        # Keys first: a typo in a recipient must fail before any work.
        encryption = resolve_encryption(
            loaded.policy,
            recipients=recipient or (),
            recipients_files=recipients_file or (),
            passphrase=new_passphrase(passphrase, passphrase_file),
            encrypt=encrypt,
            redact=redact,
        )
        chosen = select_sessions(common.config_dir(), selection, now=now)
        if not chosen:
            sys.stderr.write("scrub: no session matches; nothing archived\n")
            if output_format is OutputFormat.json:
                typer.echo(json.dumps({"schema": "scrubber.archive-run/1", "archives": []}))
            return
        progress = ProgressLine(bundle_bytes(chosen), "archiving")
        try:
            outcomes = archive_sessions(
                chosen,
                policy=loaded.policy,
                home=home,
                encryption=encryption,
                now=now,
                destination=output,
                redact=redact,
                progress=progress,
            )
        finally:
            progress.close()
        _print_archive_run(outcomes, output_format)
        exit_for([o.error for o in outcomes if o.error is not None])


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
        identity: Annotated[
            list[Path] | None, typer.Option("--identity", "-i", help="Identity file.")
        ] = None,
        passphrase_file: Annotated[
            Path | None, typer.Option("--passphrase-file", help="Passphrase file.")
        ] = None,
        passphrase: Annotated[
            bool, typer.Option("--passphrase", help="Type the passphrase at the terminal.")
        ] = False,
        to: Annotated[
            Path | None,
            typer.Option(
                "--to",
                metavar="CONFIG_DIR",
                help="Config directory to restore into (default: $CLAUDE_CONFIG_DIR / ~/.claude).",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Replace the session's files if they exist.")
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
        """Put an archived session back where Claude Code finds it (claude --resume works).

        Everything is decrypted and checked before anything is moved into place; an existing
        session is never overwritten without --force.
        """
        # A redacted archive in clear needs no key; an encrypted one fails on the missing key.
        identities = read_identities(identity, passphrase_file, passphrase, required=False)
        path = _resolve_archive(archive, directory, policy_path)
        config = to if to is not None else common.config_dir()
        result = restore_archive(
            path,
            identities,
            config,
            home=common.scrub_home(),
            force=force,
            keep_mtime=keep_mtime,
        )
        facts = result.manifest.session
        replaced = f", {len(result.replaced)} replaced" if result.replaced else ""
        typer.echo(
            f"restored session {facts.session_id} ({result.files} files{replaced}) into {config}"
        )
        typer.echo(f"resume it with: claude --resume {facts.session_id}")


def _register_decrypt(app: typer.Typer) -> None:
    @app.command("decrypt")
    def decrypt_command(
        source: Annotated[Path, typer.Argument(metavar="FILE", help="An age-encrypted file.")],
        output: Annotated[
            Path, typer.Option("--output", "-o", help="Where to write the plaintext (0600).")
        ],
        identity: Annotated[
            list[Path] | None, typer.Option("--identity", "-i", help="Identity file.")
        ] = None,
        passphrase_file: Annotated[
            Path | None, typer.Option("--passphrase-file", help="Passphrase file.")
        ] = None,
        passphrase: Annotated[
            bool, typer.Option("--passphrase", help="Type the passphrase at the terminal.")
        ] = False,
        force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
    ) -> None:
        """Decrypt any age file (as `age -d`), through a temp file removed on failure: a
        damaged or truncated file leaves no partial output."""
        identities = read_identities(identity, passphrase_file, passphrase, required=True)
        size = decrypt_file(source, output, identities, force=force)
        sys.stderr.write(f"scrub: decrypted {human_bytes(size)} to {output}\n")


def _print_archive_run(outcomes: Sequence[ArchiveOutcome], output_format: OutputFormat) -> None:
    if output_format is OutputFormat.json:
        items = []
        for outcome in outcomes:
            item: dict[str, Any] = {
                "session_id": outcome.session.id,
                "project": outcome.session.project,
            }
            if outcome.written is not None:
                written = outcome.written
                item["status"] = "archived" if written.created else "unchanged"
                item["path"] = str(written.entry.path)
                item["size"] = written.entry.sidecar.size if written.entry.sidecar else None
                item["encrypted"] = written.entry.encrypted
                item["redacted"] = written.manifest.redacted
                item["files"] = len(written.manifest.files)
                item["recipients"] = list(written.manifest.recipients)
            else:
                item["status"] = "failed"
                item["error"] = outcome.error.message if outcome.error else None
            items.append(item)
        typer.echo(json.dumps({"schema": "scrubber.archive-run/1", "archives": items}, indent=2))
    else:
        for outcome in outcomes:
            name = f"{outcome.session.project}/{outcome.session.id}"
            error = outcome.error
            if error is not None:
                sys.stderr.write(f"scrub: failed: {name}: {error.message}\n")
                if error.hint:
                    sys.stderr.write(f"hint: {error.hint}\n")
                continue
            done = outcome.written
            if done is None:  # pragma: no cover - an outcome has one or the other
                continue
            manifest = done.manifest
            if not done.created:
                typer.echo(f"unchanged  {name}: already archived at {done.entry.path}")
                continue
            how = (
                "in clear"
                if not manifest.encrypted
                else "encrypted to a passphrase"
                if manifest.recipients == ("passphrase",)
                else f"encrypted to {len(manifest.recipients)} recipient(s)"
            )
            if manifest.redacted:
                how = "redacted, " + how
            size = done.entry.sidecar.size if done.entry.sidecar else 0
            typer.echo(
                f"archived   {name} -> {done.entry.path}  "
                f"({len(manifest.files)} files, {human_bytes(manifest.total_size)} -> "
                f"{human_bytes(size)}, {how})"
            )


def _resolve_archive(value: str, directory: Path | None, policy_path: Path | None) -> Path:
    """An archive path as given, else the newest archive of the session it names."""
    path = Path(value)
    if path.exists() or os.sep in value or value.endswith((".age", ".gz")):
        if not path.is_file():
            raise UsageError(f"{value}: archive file not found")
        return path
    root = archives_root(directory, policy_path)
    entries = [e for e in list_archives(root) if e.session_id.startswith(value)]
    sessions = {e.session_id for e in entries}
    if not entries:
        raise UsageError(
            f"no archive file or archived session matches {value!r} in {root}",
            hint="`scrub archives list` shows what is there",
        )
    if len(sessions) > 1:
        raise UsageError(f"{len(sessions)} archived sessions match {value!r}; give more of the id")
    usable = [e for e in entries if e.path.is_file()]
    if not usable:
        raise UsageError(f"the archives of {value!r} are missing their files")
    return usable[-1].path
