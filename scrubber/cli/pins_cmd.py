"""`scrub pin`, `scrub unpin`, `scrub pins`: parse, call `usecases.pins`, render."""

from __future__ import annotations

from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.cli.common import PolicyOption
from scrubber.cli.retention_text import FormatOption, OutputFormat, dumps
from scrubber.usecases.pins import PinListing, list_pins, pin_session, unpin_session


def register(app: typer.Typer) -> None:
    @app.command("pin")
    def pin_command(
        session: Annotated[
            str, typer.Argument(metavar="SESSION|NAME", help="Id, id prefix or title.")
        ],
        reason: Annotated[str | None, typer.Option("--reason", help="Why it is kept.")] = None,
    ) -> None:
        """Pin a session: retention never removes it (Claude Code's own sweep, which ignores
        pins, still can until `scrub install --take-over-cleanup`)."""
        pinned = pin_session(common.env(), session, reason)
        label = pinned.titles.show(pinned.title)
        typer.echo(
            f"{'pinned' if pinned.added else 'already pinned'}: {pinned.shown}"
            + (f"  {label}" if label else "")
        )

    @app.command("unpin")
    def unpin_command(
        session: Annotated[
            str, typer.Argument(metavar="SESSION|NAME", help="Id, id prefix or name.")
        ],
    ) -> None:
        """Remove a pin made with `scrub pin` (pins in the policy are edited there)."""
        for record in unpin_session(common.env(), session):
            typer.echo(f"unpinned: {record.project or '?'}/{record.session_id}")

    @app.command("pins")
    def pins_command(
        output_format: FormatOption = OutputFormat.text,
        policy_path: PolicyOption = None,
    ) -> None:
        """List pins: those made with `scrub pin` and those in the policy."""
        listing = list_pins(common.env(), policy_path)
        if output_format is OutputFormat.json:
            typer.echo(dumps(_as_json(listing)))
        else:
            typer.echo(_as_text(listing))


def _as_json(listing: PinListing) -> dict[str, object]:
    titles, policy_pins = listing.titles, listing.policy_pins
    return {
        "cli": [
            {**r.to_json(), "name": titles.show(r.name, None) or None, "reason": r.reason}
            for r in listing.records
        ],
        "policy": {
            "source": listing.policy_source,
            "sessions": list(policy_pins.sessions),
            "names": [titles.show(n, None) for n in policy_pins.names],
            "tags": list(policy_pins.tags),
            "projects": list(policy_pins.projects),
        },
    }


def _as_text(listing: PinListing) -> str:
    titles, policy_pins = listing.titles, listing.policy_pins
    lines = [f"pins made with `scrub pin` ({listing.pins_file}):"]
    if not listing.records:
        lines.append("  none")
    for record in listing.records:
        when = record.pinned_at.date().isoformat() if record.pinned_at else "?"
        name = titles.show(record.name)
        reason = titles.show(record.reason, 60)
        lines.append(
            f"  {record.project or '?'}/{record.session_id}  pinned {when}"
            + (f"  {name}" if name else "")
            + (f"  ({reason})" if reason else "")
        )
    lines.append(f"pins in the policy ({listing.policy_source}):")
    any_policy = False
    for label, values in (
        ("session", policy_pins.sessions),
        ("name", tuple(titles.show(n) for n in policy_pins.names)),
        ("tag", policy_pins.tags),
        ("project", policy_pins.projects),
    ):
        for value in values:
            any_policy = True
            lines.append(f"  {label}: {value}")
    if not any_policy:
        lines.append("  none")
    return "\n".join(lines)
