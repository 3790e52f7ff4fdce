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
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from scrubber.archive.age import Identity
from scrubber.archive.decrypt import decrypt_file
from scrubber.archive.keys import (
    ScryptIdentity,
    generate_identity,
    has_loose_permissions,
    identity_file_text,
    read_identities_file,
    write_identity_file,
)
from scrubber.archive.layout import ArchiveEntry, list_archives
from scrubber.archive.restore import restore_archive
from scrubber.archive.verify import verify_archive
from scrubber.cli import common
from scrubber.cli.common import PolicyOption
from scrubber.cli.progress import ProgressLine
from scrubber.errors import KeyMaterialError, ScrubberError, UsageError
from scrubber.usecases.archive import (
    Selection,
    archive_sessions,
    bundle_bytes,
    resolve_encryption,
    select_sessions,
)

ENV_PASSPHRASE_FILE = "SCRUB_PASSPHRASE_FILE"  # noqa: S105 - a variable name, no secret
_MAX_PASSPHRASE_FILE = 64 * 1024


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


# ------------------------------------------------------------------------------ key helpers


def _warn(message: str) -> None:
    sys.stderr.write(f"scrub: warning: {message}\n")


def _warn_if_loose(path: Path, what: str) -> None:
    try:
        loose = has_loose_permissions(path)
    except OSError:
        return  # the reader reports a missing file
    if loose:
        _warn(f"{what} {path} is readable by group or others; run: chmod 600 {path}")


def _read_passphrase_file(path: Path) -> str:
    _warn_if_loose(path, "passphrase file")
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_PASSPHRASE_FILE + 1)
    except FileNotFoundError:
        raise KeyMaterialError(f"passphrase file not found: {path}") from None
    except OSError as exc:
        raise KeyMaterialError(f"cannot read passphrase file {path}: {exc.strerror}") from None
    if len(data) > _MAX_PASSPHRASE_FILE:
        raise KeyMaterialError(f"passphrase file {path} is too large to hold a passphrase")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyMaterialError(f"passphrase file {path} is not UTF-8 text") from None
    # One trailing line break is how editors and `echo` end a file; it is not part of it.
    text = text.removesuffix("\n").removesuffix("\r")
    if not text:
        raise KeyMaterialError(f"passphrase file {path} is empty")
    return text


def _prompt_passphrase(*, confirm: bool) -> str:
    """Read a passphrase from the terminal (never from stdin or argv)."""
    import getpass

    # getpass falls back to echoing stdin when there is no terminal: probe for one first.
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
    except OSError:
        raise KeyMaterialError(
            "--passphrase needs a terminal to type it in",
            hint=f"for scripts, put it in a 0600 file: --passphrase-file F or ${ENV_PASSPHRASE_FILE}",
        ) from None
    first = getpass.getpass("Passphrase: ")
    if not first:
        raise KeyMaterialError("the passphrase is empty")
    if confirm and getpass.getpass("Confirm passphrase: ") != first:
        raise KeyMaterialError("the passphrases do not match")
    return first


def _passphrase_file_from_env() -> Path | None:
    value = common.env().get(ENV_PASSPHRASE_FILE, "")
    return Path(value).expanduser() if value else None


def _identities(
    identity_files: Sequence[Path] | None,
    passphrase_file: Path | None,
    passphrase: bool,
    *,
    required: bool,
) -> list[Identity]:
    found: list[Identity] = []
    for path in identity_files or ():
        _warn_if_loose(path, "identity file")
        found.extend(read_identities_file(path))
    chosen_file = passphrase_file
    if chosen_file is None and not found and not passphrase:
        chosen_file = _passphrase_file_from_env()
    if chosen_file is not None:
        found.append(ScryptIdentity(_read_passphrase_file(chosen_file)))
    elif passphrase:
        found.append(ScryptIdentity(_prompt_passphrase(confirm=False)))
    if required and not found:
        raise KeyMaterialError(
            "no key given to decrypt with",
            hint="pass -i IDENTITY_FILE, or --passphrase-file F for a passphrase archive",
        )
    return found


def _archives_root(directory: Path | None, policy_path: Path | None) -> Path:
    if directory is not None:
        return directory
    loaded = common.policy(policy_path)
    return loaded.policy.archive.destination_in(common.scrub_home())


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1000
        if value < 1000 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


def _exit_for(errors: Sequence[ScrubberError]) -> None:
    if errors:
        raise typer.Exit(int(max(error.exit_code for error in errors)))


# ------------------------------------------------------------------------------- rendering


def _entry_json(entry: ArchiveEntry) -> dict[str, Any]:
    sidecar = entry.sidecar
    last = entry.last_timestamp
    item: dict[str, Any] = {
        "path": str(entry.path),
        "project": entry.project,
        "session_id": entry.session_id,
        "version": entry.version,
        "last_timestamp": last.isoformat() if last else None,
        "encrypted": entry.encrypted,
    }
    if sidecar is not None:
        item.update(
            {
                "redacted": sidecar.redacted,
                "size": sidecar.size,
                "created": sidecar.created.isoformat(),
                "ciphertext_sha256": sidecar.ciphertext_sha256,
                "content_sha256": sidecar.content_sha256,
                "recipients": list(sidecar.recipients),
                "manifest": dict(sidecar.manifest),
            }
        )
    if entry.problem:
        item["problem"] = entry.problem
    return item


def _entry_line(entry: ArchiveEntry) -> str:
    last = entry.last_timestamp
    when = last.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if last else "?"
    sidecar = entry.sidecar
    kind = "encrypted" if entry.encrypted else "clear"
    if sidecar is not None and sidecar.redacted:
        kind += ",redacted"
    size = _size(sidecar.size) if sidecar is not None else "?"
    title = ""
    if sidecar is not None and isinstance(sidecar.manifest.get("title"), str):
        title = "  " + str(sidecar.manifest["title"])[:60]
    problem = f"  ({entry.problem})" if entry.problem else ""
    return (
        f"{when}  {size:>9}  {kind:<18} {entry.project}/{entry.session_id}{title}{problem}\n"
        f"    {entry.path}"
    )


# -------------------------------------------------------------------------------- commands


def register(app: typer.Typer) -> None:
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

    @app.command("archive")
    def archive_command(
        sessions: Annotated[
            list[str] | None,
            typer.Argument(
                metavar="[SESSION]...",
                help="Sessions to archive: id, id prefix (4+ characters) or title.",
                show_default=False,
            ),
        ] = None,
        all_sessions: Annotated[
            bool, typer.Option("--all", help="Every session in the config directory.")
        ] = False,
        older_than: Annotated[
            int | None,
            typer.Option(
                "--older-than",
                metavar="DAYS",
                help="Sessions whose last activity is older than DAYS days.",
            ),
        ] = None,
        project: Annotated[
            str | None,
            typer.Option("--project", help="Sessions whose project folder contains this."),
        ] = None,
        encrypt: Annotated[
            bool,
            typer.Option("--encrypt", help="Require encryption: fail when no recipient is known."),
        ] = False,
        recipient: Annotated[
            list[str] | None,
            typer.Option("--recipient", "-r", help="Encrypt to this age1… recipient (repeatable)."),
        ] = None,
        recipients_file: Annotated[
            list[Path] | None,
            typer.Option(
                "--recipients-file",
                "-R",
                help="Encrypt to the recipients in this file (age format; repeatable).",
            ),
        ] = None,
        passphrase: Annotated[
            bool,
            typer.Option(
                "--passphrase",
                help="Encrypt to a passphrase, typed twice at the terminal (or read from "
                f"--passphrase-file / ${ENV_PASSPHRASE_FILE}).",
            ),
        ] = False,
        passphrase_file: Annotated[
            Path | None,
            typer.Option(
                "--passphrase-file",
                help="Read the passphrase from this file (implies --passphrase).",
            ),
        ] = None,
        redact: Annotated[
            bool,
            typer.Option(
                "--redact",
                help="Archive redacted copies (without recipients: in clear, as .tar.gz).",
            ),
        ] = False,
        output: Annotated[
            Path | None,
            typer.Option(
                "--output",
                help="Archive folder (default: archive.destination, else $SCRUB_HOME/archives).",
            ),
        ] = None,
        policy_path: PolicyOption = None,
        output_format: Annotated[
            OutputFormat, typer.Option("--format", help="text or json.")
        ] = OutputFormat.text,
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

          scrub archive --older-than 20 --project shop-api
        """
        loaded = common.policy(policy_path)
        for warning in loaded.warnings:
            _warn(warning)
        home = common.scrub_home()
        now = datetime.now(UTC)
        selection = Selection(
            sessions=tuple(sessions or ()),
            all=all_sessions,
            older_than_days=older_than,
            project=project,
        )
        # Keys first: a typo in a recipient must fail before any work.
        secret: str | None = None
        if passphrase_file is not None:
            secret = _read_passphrase_file(passphrase_file)
        elif passphrase:
            env_file = _passphrase_file_from_env()
            secret = (
                _read_passphrase_file(env_file)
                if env_file is not None
                else _prompt_passphrase(confirm=True)
            )
        encryption = resolve_encryption(
            loaded.policy,
            recipients=recipient or (),
            recipients_files=recipients_file or (),
            passphrase=secret,
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
        errors = [o.error for o in outcomes if o.error is not None]
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
            typer.echo(
                json.dumps({"schema": "scrubber.archive-run/1", "archives": items}, indent=2)
            )
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
                    f"({len(manifest.files)} files, {_size(manifest.total_size)} -> "
                    f"{_size(size)}, {how})"
                )
        _exit_for(errors)

    archives = typer.Typer(
        name="archives",
        help="List and verify archives.",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    app.add_typer(archives, name="archives")

    @archives.command("list")
    def list_command(
        directory: Annotated[
            Path | None,
            typer.Option(
                "--dir",
                help="Archive folder (default: archive.destination, else $SCRUB_HOME/archives).",
            ),
        ] = None,
        session: Annotated[
            str | None, typer.Option("--session", help="Only this session id (or id prefix).")
        ] = None,
        policy_path: PolicyOption = None,
        output_format: Annotated[
            OutputFormat, typer.Option("--format", help="text or json.")
        ] = OutputFormat.text,
    ) -> None:
        """List archives from their sidecars, without decrypting anything.

        Shows what the policy let into the sidecars in clear (by default session id, dates
        and sizes; archive.clear_manifest_fields adds title, tags, cwd, project).
        """
        root = _archives_root(directory, policy_path)
        entries = list_archives(root)
        if session:
            entries = [e for e in entries if e.session_id.startswith(session)]
        if output_format is OutputFormat.json:
            payload = {
                "schema": "scrubber.archives/1",
                "root": str(root),
                "archives": [_entry_json(e) for e in entries],
            }
            typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
            return
        if not entries:
            typer.echo(f"no archives in {root}")
            return
        for entry in entries:
            typer.echo(_entry_line(entry))
        typer.echo(f"{len(entries)} archive(s) in {root}")

    @archives.command("verify")
    def verify_command(
        paths_: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="[ARCHIVE]...",
                help="Archive files (default: every archive in the archive folder).",
                show_default=False,
            ),
        ] = None,
        identity: Annotated[
            list[Path] | None,
            typer.Option("--identity", "-i", help="Identity file: decrypt and check every file."),
        ] = None,
        passphrase_file: Annotated[
            Path | None,
            typer.Option("--passphrase-file", help="Passphrase file: decrypt and check."),
        ] = None,
        directory: Annotated[
            Path | None, typer.Option("--dir", help="Archive folder (default: the policy's).")
        ] = None,
        policy_path: PolicyOption = None,
        output_format: Annotated[
            OutputFormat, typer.Option("--format", help="text or json.")
        ] = OutputFormat.text,
    ) -> None:
        """Check archives. Without a key: the age header, the recipients and the SHA-256
        recorded at write time (this catches corruption, not tampering). With -i: a full
        decrypt, every file checked against its manifest hash.

        Exit 0 when all pass, 3 when one is damaged, 2 for a wrong key or a newer format.
        """
        identities = _identities(identity, passphrase_file, False, required=False)
        targets: list[Path] = []
        if paths_:
            for path in paths_:
                if path.is_dir():
                    targets.extend(e.path for e in list_archives(path))
                else:
                    targets.append(path)
        else:
            root = _archives_root(directory, policy_path)
            targets = [e.path for e in list_archives(root)]
            if not targets:
                typer.echo(f"no archives in {root}")
                return
        errors: list[ScrubberError] = []
        results: list[dict[str, Any]] = []
        for path in targets:
            try:
                report = verify_archive(path, identities)
            except ScrubberError as error:
                errors.append(error)
                results.append({"path": str(path), "ok": False, "error": error.message})
                if output_format is OutputFormat.text:
                    typer.echo(f"FAILED  {path}: {error.message}")
                continue
            level = "full" if report.full else "keyless"
            results.append({"path": str(path), "ok": True, "level": level})
            if output_format is OutputFormat.text:
                what = (
                    "decrypted, every file matches the manifest"
                    if report.full
                    else "header, recipients and SHA-256 match the sidecar"
                )
                typer.echo(f"ok      {path}  ({level}: {what})")
        if output_format is OutputFormat.json:
            typer.echo(
                json.dumps({"schema": "scrubber.archives-verify/1", "results": results}, indent=2)
            )
        elif len(targets) > 1:
            typer.echo(f"{len(targets) - len(errors)} of {len(targets)} archive(s) verified")
        _exit_for(errors)

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
        identities = _identities(identity, passphrase_file, passphrase, required=False)
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
        identities = _identities(identity, passphrase_file, passphrase, required=True)
        size = decrypt_file(source, output, identities, force=force)
        sys.stderr.write(f"scrub: decrypted {_size(size)} to {output}\n")


def _resolve_archive(value: str, directory: Path | None, policy_path: Path | None) -> Path:
    """An archive path as given, else the newest archive of the session it names."""
    path = Path(value)
    if path.exists() or os.sep in value or value.endswith((".age", ".gz")):
        if not path.is_file():
            raise UsageError(f"{value}: archive file not found")
        return path
    root = _archives_root(directory, policy_path)
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
