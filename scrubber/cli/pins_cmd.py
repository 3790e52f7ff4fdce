"""`scrub pin`, `scrub unpin`, `scrub pins`: parse, call `usecases.pins`, render."""

from __future__ import annotations

from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.cli.common import PolicyOption
from scrubber.cli.retention_text import FormatOption, OutputFormat, dumps
from scrubber.usecases.pins import (
    PinListing,
    SessionState,
    list_pins,
    pin_session,
    unpin_session,
)


def register(app: typer.Typer) -> None:
    @app.command("pin")
    def pin_command(
        session: Annotated[
            str, typer.Argument(metavar="SESSION|NAME", help="Id, id prefix or title.")
        ],
        reason: Annotated[str | None, typer.Option("--reason", help="Why it is kept.")] = None,
    ) -> None:
        """Pin a session: retention never removes it.

        Claude Code's own sweep, which ignores pins, still can until
        `scrub install --take-over-cleanup`.

        Examples:

          scrub pin 3f9a2c1e --reason "incident notes"

          scrub pin "fix the login bug"
        """
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
        """Remove a pin made with `scrub pin`.

        Pins in the policy are edited there.

        When nothing is unpinned it says why: the session is not pinned, the policy pins it,
        or no session goes by that name.

        Examples:

          scrub unpin 3f9a2c1e
        """
        for record in unpin_session(common.env(), session):
            typer.echo(f"unpinned: {record.project or '?'}/{record.session_id}")

    @app.command("pins")
    def pins_command(
        output_format: FormatOption = OutputFormat.text,
        policy_path: PolicyOption = None,
    ) -> None:
        """List pins: those made with `scrub pin` and those in the policy.

        A pin whose session is gone (neither under the config dir nor in the trash) is marked
        "(session gone)", one in the trash "(in the trash)"; JSON says `session_state`
        (present, in-trash, gone). A pin of a gone session still keeps its archives from
        being purged.

        Examples:

          scrub pins

          scrub pins --format json
        """
        listing = list_pins(common.env(), policy_path)
        if output_format is OutputFormat.json:
            typer.echo(dumps(_as_json(listing)))
        else:
            typer.echo(_as_text(listing))


def _state(listing: PinListing, session_id: str) -> str | None:
    state = listing.state(session_id)
    return None if state is None else str(state)


def _as_json(listing: PinListing) -> dict[str, object]:
    titles, policy_pins = listing.titles, listing.policy_pins
    return {
        "cli": [
            {
                **r.to_json(),
                "project": listing.folders.project(r.project, r.session_id),
                "name": titles.show(r.name, None) or None,
                "reason": r.reason,
                "session_state": _state(listing, r.session_id),
            }
            for r in listing.records
        ],
        "policy": {
            "source": listing.policy_source,
            "sessions": list(policy_pins.sessions),
            "session_states": {s: _state(listing, s) for s in policy_pins.sessions},
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
            f"  {listing.folders.project(record.project, record.session_id) or '?'}/"
            f"{record.session_id}{_marker(listing, record.session_id)}"
            f"  pinned {when}" + (f"  {name}" if name else "") + (f"  ({reason})" if reason else "")
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
            marker = _marker(listing, value) if label == "session" else ""
            lines.append(f"  {label}: {value}{marker}")
    if not any_policy:
        lines.append("  none")
    gone = sum(1 for s in listing.states.values() if s is SessionState.GONE)
    if gone:
        lines.append(
            f"{gone} pin(s) name a session that is gone (neither under the config dir nor in "
            "the trash): such a pin still keeps the session's archives from being purged; "
            "`scrub unpin ID` removes one made with `scrub pin`"
        )
    return "\n".join(lines)


def _marker(listing: PinListing, session_id: str) -> str:
    return {
        SessionState.GONE: " (session gone)",
        SessionState.IN_TRASH: " (in the trash)",
    }.get(listing.state(session_id) or SessionState.PRESENT, "")
