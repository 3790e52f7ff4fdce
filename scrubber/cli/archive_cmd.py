"""`scrub keygen` and `scrub archive` (`scrub restore` and `scrub decrypt` are in restore_cmd,
`scrub archives list|verify` in archives_cmd).

Keys follow age's conventions (identity files as `age-keygen` writes them, `age1…`
recipients), so archives open with `age -d -i KEY FILE | tar xz` without scrubber. Passphrases
are never taken from the command line (shell history, `ps`): from a terminal, or from a file
named by `--passphrase-file` / `$SCRUB_PASSPHRASE_FILE` for scripts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from scrubber.archive.keys import (
    generate_identity,
    identity_file_text,
    read_identities_file,
    recipient_fingerprint,
    write_identity_file,
)
from scrubber.cli import common
from scrubber.cli.archive_common import (
    ENV_PASSPHRASE_FILE,
    OutputFormat,
    exit_for,
    human_bytes,
    new_passphrase,
    print_upload,
    upload_json,
    warn,
    warn_if_loose,
)
from scrubber.cli.common import PolicyOption
from scrubber.cli.progress import ProgressLine
from scrubber.cli.terminal_text import terminal_safe
from scrubber.errors import KeyMaterialError, ScrubberError, UsageError, path_error_hint
from scrubber.usecases.archive import (
    ArchiveOutcome,
    Selection,
    archive_sessions,
    bundle_bytes,
    resolve_encryption,
    select_sessions,
)
from scrubber.usecases.durations import DURATION_HELP, parse_moment

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
    list[str] | None,
    typer.Option("--project", help="Sessions whose project folder contains this; repeatable."),
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
        "-o",
        help="Archive folder, created if missing (default: archive.destination, else "
        "$SCRUB_HOME/archives).",
    ),
]

FormatOption = Annotated[OutputFormat, typer.Option("--format", help="text or json.")]


# -------------------------------------------------------------------------------- commands


def register(app: typer.Typer) -> None:
    # In this order: `scrub --help` lists the commands as they are registered.
    _register_keygen(app)
    _register_archive(app)


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
        show: Annotated[
            Path | None,
            typer.Option(
                "-y",
                "--show-recipient",
                metavar="IDENTITY_FILE",
                help="Make no key: print the recipient of each identity in this file (stdout, "
                "as age-keygen -y) and its fingerprint (stderr, as `scrub archives list` "
                "and restore name keys).",
            ),
        ] = None,
    ) -> None:
        """Make an age X25519 key pair, as age-keygen does.

        The identity (secret key) goes to -o FILE or stdout; the recipient (public key) is
        printed on stderr. Put the recipient in the policy (archive.recipients) on the machine
        that archives; keep the identity somewhere else. Works with `age -i` / `age -r`.

        Examples:

          scrub keygen -o ~/scrub-key.txt

          scrub keygen -y ~/scrub-key.txt      # which archives does this key open?
        """
        if show is not None:
            if output is not None:
                raise UsageError("-y prints a recipient; it makes no key to write with -o")
            warn_if_loose(show, "identity file")
            for identity in read_identities_file(show):
                recipient = identity.recipient()
                sys.stdout.write(f"{recipient.encode()}\n")
                sys.stderr.write(f"Fingerprint: {recipient_fingerprint(recipient)}\n")
            return
        identity = generate_identity()
        created = datetime.now(UTC).astimezone()
        if output is not None:
            if output.is_dir():
                raise KeyMaterialError(
                    f"{output} is a folder; not writing a key file there",
                    hint=f"name a file inside it: -o {output / 'scrub-key.txt'}",
                )
            try:
                write_identity_file(output, identity, created)
            except OSError as exc:
                raise ScrubberError(
                    f"cannot write the identity to {output}: {exc.strerror}; no key was made",
                    hint=path_error_hint(exc),
                ) from None
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
        """Archive sessions: an age-encrypted gzip tar per session version.

        Each archive holds the transcript, its side folder (subagents, tool-results), its
        file-history and the other files of the session, with manifest.json first. It opens
        without scrubber: age -d -i KEY FILE | tar xz (inside a config directory).

        Archives are encrypted whenever recipients are known (-r, -R, --passphrase, or
        archive.recipients in the policy). Without any, only --redact archives are written.

        Examples:

          scrub archive --all --encrypt -r age1…

          scrub archive 3f9a2c1e --passphrase

          scrub archive --older-than 20d --project shop-api
          scrub archive --all -r age1… -o /mnt/backup/claude-archives
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
            projects=tuple(project or ()),
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
                upload_env=common.env(),
            )
        finally:
            progress.close()
        _print_archive_run(outcomes, output_format)
        exit_for([e for o in outcomes for e in (o.error, o.upload and o.upload.error) if e])


def _print_archive_run(outcomes: Sequence[ArchiveOutcome], output_format: OutputFormat) -> None:
    if output_format is OutputFormat.json:
        items = []
        for outcome in outcomes:
            item: dict[str, Any] = {
                "session_id": outcome.session.id,
                "project": outcome.project_shown or outcome.session.project,
            }
            if outcome.written is not None:
                written = outcome.written
                item["status"] = "archived" if written.created else "unchanged"
                item["path"] = outcome.path_shown
                item["size"] = written.entry.sidecar.size if written.entry.sidecar else None
                item["encrypted"] = written.entry.encrypted
                item["redacted"] = written.manifest.redacted
                item["files"] = len(written.manifest.files)
                item["recipients"] = list(written.manifest.recipients)
                if outcome.upload_queued:
                    item["upload"] = upload_json(outcome.upload)
            else:
                item["status"] = "failed"
                item["error"] = outcome.error.message if outcome.error else None
            items.append(item)
        typer.echo(json.dumps({"schema": "scrubber.archive-run/1", "archives": items}, indent=2))
    else:
        for outcome in outcomes:
            name = f"{outcome.project_shown or outcome.session.project}/{outcome.session.id}"
            error = outcome.error
            if error is not None:
                sys.stderr.write(terminal_safe(f"scrub: failed: {name}: {error.message}") + "\n")
                if error.hint:
                    sys.stderr.write(terminal_safe(f"hint: {error.hint}") + "\n")
                continue
            done = outcome.written
            if done is None:  # pragma: no cover - an outcome has one or the other
                continue
            manifest = done.manifest
            if not done.created:
                typer.echo(
                    terminal_safe(f"unchanged  {name}: already archived at {outcome.path_shown}")
                )
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
            # The folder's name and the path come from the session's cwd (terminal_text.py).
            typer.echo(
                terminal_safe(
                    f"archived   {name} -> {outcome.path_shown}  "
                    f"({common.plural(len(manifest.files), 'file')}, "
                    f"{human_bytes(manifest.total_size)} -> {human_bytes(size)}, {how})"
                )
            )
        for outcome in outcomes:
            if outcome.upload_queued:
                print_upload(
                    outcome.upload, Path(outcome.path_shown) if outcome.path_shown else None
                )
