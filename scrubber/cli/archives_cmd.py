"""`scrub archives list` and `scrub archives verify`: what is archived (from the sidecars) and
whether it is intact (keyless, or a full decryption with -i)."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from typing import Annotated, Any

import typer

from scrubber.archive.age import Identity
from scrubber.archive.layout import ArchiveEntry, key_needed
from scrubber.archive.s3_queue import read_receipt
from scrubber.archive.verify import verify_archive
from scrubber.cli import common
from scrubber.cli.archive_common import (
    OutputFormat,
    archives_root,
    exit_for,
    human_bytes,
    read_identities,
)
from scrubber.cli.archives_s3 import (
    AllHostsOption,
    HostOption,
    RemoteOption,
    list_bucket,
    register_s3,
    verify_bucket,
)
from scrubber.cli.common import PolicyOption
from scrubber.cli.terminal_text import terminal_lines, terminal_safe
from scrubber.detection.registry import build_scanner
from scrubber.errors import ScrubberError
from scrubber.usecases.archive_listing import (
    ArchiveListing,
    archive_at_shown_path,
    list_archives_shown,
)


def _entry_json(entry: ArchiveEntry, listing: ArchiveListing) -> dict[str, Any]:
    sidecar = entry.sidecar
    last = entry.last_timestamp
    item: dict[str, Any] = {
        "path": listing.path(entry),
        "project": listing.project(entry),
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
    receipt = read_receipt(entry.path)
    if receipt is not None:
        item["uploaded"] = {
            "url": receipt.url,
            "key": receipt.key,
            "verified_by": receipt.proven_by,
        }
    return item


def _entry_line(entry: ArchiveEntry, listing: ArchiveListing) -> str:
    last = entry.last_timestamp
    when = last.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if last else "?"
    sidecar = entry.sidecar
    kind = "encrypted" if entry.encrypted else "clear"
    if sidecar is not None and sidecar.redacted:
        kind += ",redacted"
    size = human_bytes(sidecar.size) if sidecar is not None else "?"
    title = ""
    if sidecar is not None and isinstance(sidecar.manifest.get("title"), str):
        title = "  " + str(sidecar.manifest["title"])[:60]
    problem = f"  ({entry.problem})" if entry.problem else ""
    receipt = read_receipt(entry.path)
    if receipt is not None:
        # After a verified upload the local file may be gone on purpose (the policy says so).
        gone = "local copy removed, " if not entry.path.exists() else ""
        bucket = receipt.url.removeprefix("s3://").split("/")[0]
        problem = f"  ({gone}uploaded to s3://{bucket}/{receipt.key})"
    # Which key opens it (issue 14): the fingerprints `scrub keygen -y KEY` prints.
    opens = f"  (opens with {key_needed(entry)})" if entry.encrypted else ""
    # The folder's name, the title and the path come from a session (terminal_text.py).
    return terminal_lines(
        [
            f"{when}  {size:>9}  {kind:<18} {listing.project(entry)}/{entry.session_id}{title}"
            f"{problem}",
            f"    {listing.path(entry)}{opens}",
        ]
    )


def register(app: typer.Typer) -> None:
    archives = typer.Typer(
        name="archives",
        help=(
            "List, verify, upload and restore archives.\n\nExamples:\n\n  scrub archives list\n\n"
            "  scrub archives verify -i ~/scrub-key.txt\n\n  scrub archives push\n\n"
            "  scrub archives list --remote --all-hosts"
        ),
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    app.add_typer(archives, name="archives")
    _register_list(archives)
    _register_verify(archives)
    register_s3(archives)


def _register_list(archives: typer.Typer) -> None:
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
            list[str] | None,
            typer.Option("--session", help="Only this session id (or id prefix); repeatable."),
        ] = None,
        policy_path: PolicyOption = None,
        output_format: Annotated[
            OutputFormat, typer.Option("--format", help="text or json.")
        ] = OutputFormat.text,
        remote: RemoteOption = False,
        host: HostOption = None,
        all_hosts: AllHostsOption = False,
    ) -> None:
        """List archives from their sidecars, without decrypting anything.

        Shows what the policy let into the sidecars in clear (by default session id, dates
        and sizes; archive.clear_manifest_fields adds title, tags, cwd, project), and which
        key opens each one: the recipients' fingerprints (`scrub keygen -y KEY` prints a
        key's) or a passphrase.

        Examples:

          scrub archives list --session 3f9a

          scrub archives list --format json

          scrub archives list --remote --all-hosts
        """
        if remote or host or all_hosts:
            list_bucket(policy_path, session, host, all_hosts, output_format)
            return
        root = archives_root(directory, policy_path)
        listing = _listing(root, policy_path, tuple(session or ()))
        entries = listing.entries
        if output_format is OutputFormat.json:
            payload = {
                "schema": "scrubber.archives/1",
                "root": str(root),
                "archives": [_entry_json(e, listing) for e in entries],
            }
            typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
            return
        if not entries:
            typer.echo(f"no archives in {root}")
            return
        for entry in entries:
            typer.echo(_entry_line(entry, listing))
        typer.echo(f"{len(entries)} archive(s) in {root}")


def _register_verify(archives: typer.Typer) -> None:
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
        remote: RemoteOption = False,
        host: HostOption = None,
        all_hosts: AllHostsOption = False,
    ) -> None:
        """Check archives: keyless, or a full decrypt with -i.

        Without a key: the age header, the recipients and the SHA-256 recorded at write time
        (corruption, not tampering). With -i: every file against its manifest hash. Exit 0
        when all pass, 3 when one is damaged, 2 for a wrong key or a newer format.

        Examples:
          scrub archives verify
          scrub archives verify -i ~/scrub-key.txt --format json
          scrub archives verify --remote
        """
        identities = read_identities(identity, passphrase_file, False, required=False)
        if remote or host or all_hosts:
            verify_bucket(policy_path, identities, host, all_hosts, output_format)
            return
        # (the archive, how it is named: a file named here as given, a listed one with its
        # project folder as every report shows it)
        targets: list[tuple[Path, str]] = []
        if paths_:
            for path in paths_:
                if path.is_dir():
                    targets.extend(_listed(path, policy_path))
                elif not path.exists() and (real := archive_at_shown_path(path)) is not None:
                    targets.append((real, str(path)))  # pasted as a report shows it
                else:
                    targets.append((path, str(path)))
        else:
            root = archives_root(directory, policy_path)
            targets = _listed(root, policy_path)
            if not targets:
                typer.echo(f"no archives in {root}")
                return
        _verify_files(targets, identities, output_format)


def _listing(
    root: Path, policy_path: Path | None, sessions: tuple[str, ...] = ()
) -> ArchiveListing:
    """The archives under `root`, with the paths and projects to show (redacted)."""
    home = common.scrub_home()
    return list_archives_shown(
        root,
        config_dir=common.config_dir(),
        home=home,
        scanner=build_scanner(common.policy(policy_path).policy, home),
        sessions=sessions,
    )


def _listed(root: Path, policy_path: Path | None) -> list[tuple[Path, str]]:
    listing = _listing(root, policy_path)
    return [(entry.path, listing.path(entry)) for entry in listing.entries]


def _verify_files(
    targets: list[tuple[Path, str]], identities: list[Identity], output_format: OutputFormat
) -> None:
    errors: list[ScrubberError] = []
    results: list[dict[str, Any]] = []
    for path, shown in targets:
        try:
            report = verify_archive(path, identities)
        except ScrubberError as error:
            errors.append(error)
            message = error.message.replace(str(path), shown)  # it may name the file
            results.append({"path": shown, "ok": False, "error": message})
            if output_format is OutputFormat.text:
                typer.echo(terminal_safe(f"FAILED  {shown}: {message}"))
            continue
        level = "full" if report.full else "keyless"
        results.append({"path": shown, "ok": True, "level": level})
        if output_format is OutputFormat.text:
            what = (
                "decrypted, every file matches the manifest"
                if report.full
                else "header, recipients and SHA-256 match the sidecar"
            )
            typer.echo(terminal_safe(f"ok      {shown}  ({level}: {what})"))
    if output_format is OutputFormat.json:
        typer.echo(
            json.dumps({"schema": "scrubber.archives-verify/1", "results": results}, indent=2)
        )
    elif len(targets) > 1:
        typer.echo(f"{len(targets) - len(errors)} of {len(targets)} archive(s) verified")
    exit_for(errors)
