"""`scrub archives push`, `scrub archives restore` and the `--remote` views of `list` and
`verify`: archives in object storage (`archive.destination: s3://bucket/prefix`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from scrubber.archive.age import Identity
from scrubber.cli import common
from scrubber.cli.archive_common import (
    OutputFormat,
    exit_for,
    human_bytes,
    print_upload,
    read_identities,
    upload_json,
    warn,
)
from scrubber.cli.common import PolicyOption
from scrubber.errors import ScrubberError
from scrubber.usecases.archive_push import push_uploads
from scrubber.usecases.archive_remote import (
    RemoteArchive,
    list_bucket_archives,
    restore_from_bucket,
    verify_bucket_archives,
)

RemoteOption = Annotated[
    bool, typer.Option("--remote", help="The bucket of archive.destination (s3://…), not disk.")
]
HostOption = Annotated[
    str | None,
    typer.Option("--host", help="Another host's archives in the bucket (implies --remote)."),
]
AllHostsOption = Annotated[
    bool, typer.Option("--all-hosts", help="Every host's archives in the bucket.")
]


def _remote_json(archive: RemoteArchive) -> dict[str, Any]:
    name = archive.name
    item: dict[str, Any] = {
        "url": archive.url,
        "host": name.host,
        "project": name.project,
        "session_id": name.session_id,
        "name": name.name,
        "size": archive.size,
    }
    if archive.sidecar is not None:
        item["ciphertext_sha256"] = archive.sidecar.ciphertext_sha256
        item["recipients"] = list(archive.sidecar.recipients)
        item["manifest"] = dict(archive.sidecar.manifest)
    if archive.problem:
        item["problem"] = archive.problem
    return item


def list_bucket(
    policy_path: Path | None,
    sessions: list[str] | None,
    host: str | None,
    all_hosts: bool,
    output_format: OutputFormat,
) -> None:
    loaded = common.policy(policy_path)
    listing = list_bucket_archives(
        loaded.policy, common.env(), host=host, all_hosts=all_hosts, sessions=sessions or ()
    )
    if output_format is OutputFormat.json:
        payload = {
            "schema": "scrubber.archives/1",
            "root": listing.url,
            "host": listing.host,
            "archives": [_remote_json(a) for a in listing.archives],
        }
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    where = f"{listing.url} (host {listing.host or 'any'})"
    for archive in listing.archives:
        last = archive.last_timestamp
        when = last.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if last else "?"
        problem = f"  ({archive.problem})" if archive.problem else ""
        name = archive.name
        typer.echo(
            f"{when}  {human_bytes(archive.size):>9}  {name.host}/{name.project}/"
            f"{name.session_id}{problem}\n    {archive.url}"
        )
    typer.echo(f"{len(listing.archives)} archive(s) in {where}")


def verify_bucket(
    policy_path: Path | None,
    identities: list[Identity],
    host: str | None,
    all_hosts: bool,
    output_format: OutputFormat,
) -> None:
    loaded = common.policy(policy_path)
    listing, verdicts = verify_bucket_archives(
        loaded.policy,
        common.env(),
        common.scrub_home(),
        identities,
        host=host,
        all_hosts=all_hosts,
    )
    failed = [v for v in verdicts if v.problem is not None]
    if output_format is OutputFormat.json:
        results = [
            {
                "url": v.archive.url,
                "ok": v.problem is None,
                "level": "full" if v.full else "keyless",
            }
            | ({"error": v.problem} if v.problem else {})
            for v in verdicts
        ]
        typer.echo(
            json.dumps({"schema": "scrubber.archives-verify/1", "results": results}, indent=2)
        )
    else:
        for verdict in verdicts:
            if verdict.problem is not None:
                typer.echo(f"FAILED  {verdict.archive.url}: {verdict.problem}")
            elif verdict.full:
                typer.echo(
                    f"ok      {verdict.archive.url}  (full: downloaded, decrypted, every file matches)"
                )
            else:
                typer.echo(
                    f"ok      {verdict.archive.url}  (keyless: size and store checksum match the sidecar)"
                )
        typer.echo(
            f"{len(verdicts) - len(failed)} of {len(verdicts)} archive(s) verified in {listing.url}"
        )
    if failed:
        raise typer.Exit(3)


def register_s3(archives: typer.Typer) -> None:
    _register_push(archives)
    _register_restore(archives)


def _register_push(archives: typer.Typer) -> None:
    @archives.command("push")
    def push_command(
        policy_path: PolicyOption = None,
        output_format: Annotated[
            OutputFormat, typer.Option("--format", help="text or json.")
        ] = OutputFormat.text,
    ) -> None:
        """Upload every archive that waits for object storage, now.

        Archives are written to $SCRUB_HOME/archives first; their upload to the bucket of
        archive.destination (s3://…) is a job in $SCRUB_HOME/spool/uploads/ that the worker
        runs and retries. This runs them all at once, failed ones too. An upload counts only
        when the store confirmed its size and SHA-256. Exit 0 when nothing is left waiting.

        Examples:

          scrub archives push

          AWS_PROFILE=archiver scrub archives push --format json
        """
        loaded = common.policy(policy_path)
        report = push_uploads(
            loaded.policy, common.scrub_home(), common.env(), now=datetime.now(UTC)
        )
        errors: list[ScrubberError] = [o.error for o in report.outcomes if o.error is not None]
        if output_format is OutputFormat.json:
            payload = {
                "schema": "scrubber.archives-push/1",
                "destination": report.destination,
                "uploads": [{"archive": str(o.archive)} | upload_json(o) for o in report.outcomes],
                "waiting": report.waiting,
            }
            typer.echo(json.dumps(payload, indent=2))
        else:
            for outcome in report.outcomes:
                print_upload(outcome, outcome.archive)
            typer.echo(
                f"{sum(1 for o in report.outcomes if o.error is None)} uploaded to "
                f"{report.destination}; {report.waiting} waiting"
            )
        exit_for(errors)


def _register_restore(archives: typer.Typer) -> None:
    @archives.command("restore")
    def restore_command(
        session: Annotated[str, typer.Argument(help="Session id or id prefix (4+ characters).")],
        identity: Annotated[
            list[Path] | None, typer.Option("--identity", "-i", help="Identity file.")
        ] = None,
        passphrase_file: Annotated[
            Path | None, typer.Option("--passphrase-file", help="Passphrase file.")
        ] = None,
        host: HostOption = None,
        all_hosts: AllHostsOption = False,
        to: Annotated[
            Path | None, typer.Option("--to", help="Config directory to restore into.")
        ] = None,
        create: Annotated[bool, typer.Option("--create", help="Create --to.")] = False,
        force: Annotated[
            bool, typer.Option("--force", help="Replace a differing session (trashed first).")
        ] = False,
        keep_mtime: Annotated[
            bool, typer.Option("--keep-mtime", help="Keep the archived mtime.")
        ] = False,
        policy_path: PolicyOption = None,
    ) -> None:
        """Restore a session from the bucket (archive.destination: s3://…).

        Downloads the session's archives (this host's, another's with --host, or whichever
        host has it with --all-hosts), checks them against their sidecars, then restores
        the newest one the key opens, as `scrub restore` does. Needs read access.

        Examples:

          scrub archives restore 3f9a2c1e -i ~/scrub-key.txt

          scrub archives restore 3f9a2c1e -i KEY --host web1 --to /srv/claude --create
        """
        identities = read_identities(identity, passphrase_file, False, required=False)
        loaded = common.policy(policy_path)
        outcome = restore_from_bucket(
            loaded.policy,
            common.env(),
            common.scrub_home(),
            session,
            identities,
            host=host,
            all_hosts=all_hosts,
            to=to,
            create=create,
            force=force,
            keep_mtime=keep_mtime,
            warn=warn,
        )
        result = outcome.result
        session_id = result.manifest.session.session_id
        typer.echo(
            f"restored session {session_id} ({common.plural(result.files, 'file')}) "
            f"from the bucket into {result.config_dir}"
        )
        typer.echo(f"resume it with: claude --resume {session_id}")
