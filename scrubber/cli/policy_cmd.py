"""`scrub policy show` and `scrub policy init`: parse, call usecases.policy, render."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

import typer

from scrubber.cli import common, quiet
from scrubber.cli.common import PolicyOption
from scrubber.cli.retention_text import warn
from scrubber.policy.provenance import JSONValue, Origin, OriginKind, Setting
from scrubber.usecases.policy import PolicyView, init_policy, show_policy

POLICY_SCHEMA = "scrubber.policy/1"
_COMMENT_AT = 44  # the column origins start at in the text form


class ShowFormat(StrEnum):
    text = "text"
    json = "json"


class Template(StrEnum):
    default = "default"
    strict = "strict"
    vps = "vps"


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="policy",
        help=(
            "Show the policy in force, or write one from a template.\n\n"
            "Examples:\n\n"
            "  scrub policy show\n\n"
            "  scrub policy init --template vps"
        ),
        no_args_is_help=True,
    )
    group.command("show")(policy_show_command)
    group.command("init")(policy_init_command)
    app.add_typer(group)


def policy_show_command(
    output_format: Annotated[
        ShowFormat, typer.Option("--format", help="text (YAML-like) or json.")
    ] = ShowFormat.text,
    policy_path: PolicyOption = None,
) -> None:
    """Show the policy in force, and where each value came from.

    Each key with its value and its origin: the default, a line of the policy file, a pin
    made with `scrub pin` (state/pins.json), or Claude Code's settings (retention days when
    the policy sets none). The policy is found as every command finds it: --policy, then
    $SCRUB_POLICY, then $SCRUB_HOME/policy.yaml, else the built-in defaults. Values that may
    be credentials (the healthcheck URL, allowlist patterns) are not shown.

    Examples:

      scrub policy show

      scrub policy show --format json | jq '.settings[] | .origin.kind'

      scrub policy show --policy policies/strict.yaml
    """
    view = show_policy(common.env(), policy_path)
    if output_format is ShowFormat.json:
        typer.echo(json.dumps(_as_json(view), indent=2, ensure_ascii=False))
        return
    for note in view.loaded.warnings:
        warn(f"warning: {note}")
    typer.echo(_as_text(view))


def policy_init_command(
    template: Annotated[
        Template, typer.Option("--template", help="default, strict or vps (policies/*.yaml).")
    ] = Template.default,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace an existing policy.yaml; the old one is kept."),
    ] = False,
) -> None:
    """Write $SCRUB_HOME/policy.yaml from a commented template.

    Every key is written with a comment that says what it does. The file is 0600 in a 0700
    folder. An existing policy.yaml is never overwritten without --force, and with it the
    old file is kept beside the new one (policy.yaml.<time>.bak). The vps template needs
    your age1… recipient under archive.recipients before it loads.

    Examples:

      scrub policy init

      scrub policy init --template strict

      scrub policy init --template vps --force   # then add your age1… recipient
    """
    done = init_policy(common.env(), template=template.value, force=force, now=datetime.now(UTC))
    typer.echo(f"wrote {done.path} (template {done.template}, every key commented)")
    if done.backup is not None:
        typer.echo(f"the previous policy is kept as {done.backup}")
    if done.problem is not None:
        warn(f"warning: edit it before the next run, it does not load yet: {done.problem}")
    quiet.note(
        "the status line and live hooks read a compiled copy of the policy, refreshed when a "
        "session ends or by `scrub install`"
    )


def _value_text(value: JSONValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def _line(indent: int, text: str, origin: Origin, policy_file: str | None) -> str:
    body = f"{'  ' * indent}{text}"
    # The header names the policy file: its lines are `line N` here (JSON has the path).
    if origin.kind is OriginKind.POLICY_FILE and origin.path == policy_file and origin.line:
        said = f"line {origin.line}" + (f"; {origin.note}" if origin.note else "")
    else:
        said = origin.describe()
    return f"{body:<{_COMMENT_AT}} # {said}"


def _as_text(view: PolicyView) -> str:
    out = [f"# the policy in force: {view.loaded.describe()}"]
    policy_file = None if view.loaded.path is None else str(view.loaded.path)
    opened: list[str] = []
    for setting in view.settings:
        *sections, name = setting.key.split(".")
        depth = 0
        while depth < len(sections) and depth < len(opened) and opened[depth] == sections[depth]:
            depth += 1
        del opened[depth:]
        for section in sections[depth:]:
            out.append(f"{'  ' * len(opened)}{section}:")
            opened.append(section)
        out.extend(_setting_lines(setting, len(sections), name, policy_file))
    return "\n".join(out)


def _setting_lines(setting: Setting, indent: int, name: str, policy_file: str | None) -> list[str]:
    if not setting.items:
        text = f"{name}: {_value_text(setting.value)}"
        return [_line(indent, text, setting.origin, policy_file)]
    lines = [f"{'  ' * indent}{name}:"]
    for value, origin in setting.items:
        lines.append(_line(indent + 1, f"- {_value_text(value)}", origin, policy_file))
    return lines


def _as_json(view: PolicyView) -> dict[str, Any]:
    loaded = view.loaded
    return {
        "schema": POLICY_SCHEMA,
        "policy_file": None if loaded.path is None else str(loaded.path),
        "source": str(loaded.source),
        "warnings": list(loaded.warnings),
        "settings": [
            {
                "key": s.key,
                "value": s.value,
                "origin": s.origin.to_json(),
                **(
                    {"items": [{"value": v, "origin": o.to_json()} for v, o in s.items]}
                    if s.items
                    else {}
                ),
            }
            for s in view.settings
        ],
    }
