"""`scrub policy show` and `scrub policy init`: the policy in force with where each value came
from, and a commented policy file written from a template.

Both refuse a folder that is not a Claude Code config dir (exit 2), as every command reading
scrubber's own folder does: `$SCRUB_HOME` defaults to a folder inside it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from scrubber import paths
from scrubber.activity import append_activity
from scrubber.durable import atomic_write, fsync_dir
from scrubber.errors import ConfigError, ScrubberError, UsageError
from scrubber.policy.load import (
    TEMPLATE_NAMES,
    LoadedPolicy,
    key_lines,
    load_policy,
    parse_policy,
    read_template,
)
from scrubber.policy.provenance import ClaudePeriod, Setting, TraceInputs, trace_policy
from scrubber.retention import pins as pin_store
from scrubber.retention.settings import MANAGED_SETTINGS, effective_cleanup_periods
from scrubber.usecases.retention import ENV_MANAGED_SETTINGS

_CONFIG_HINT = "set CLAUDE_CONFIG_DIR to the folder Claude Code uses (default ~/.claude)"


@dataclass(frozen=True, slots=True)
class PolicyView:
    loaded: LoadedPolicy
    settings: tuple[Setting, ...]


def show_policy(env: Mapping[str, str], policy_path: Path | None) -> PolicyView:
    """The policy in force (as every command would load it) and the origin of each value."""
    config = paths.config_dir(env)
    paths.require_config_dir(config, _CONFIG_HINT)
    home = paths.scrub_home(env)
    loaded = load_policy(policy_path, env)
    inputs = TraceInputs(
        file=loaded.path,
        lines=key_lines(loaded),
        cli_pins=tuple(dict.fromkeys(r.session_id for r in pin_store.read_pins(home))),
        pins_file=pin_store.pins_file(home),
        claude=_claude_period(config, env),
        archives_default=paths.archives_dir(home),
    )
    return PolicyView(loaded, trace_policy(loaded.policy, inputs))


def _claude_period(config: Path, env: Mapping[str, str]) -> ClaudePeriod:
    managed = Path(env.get(ENV_MANAGED_SETTINGS) or MANAGED_SETTINGS)
    try:
        found = effective_cleanup_periods(config, (), managed=managed).default
    except ConfigError as error:
        return ClaudePeriod(None, None, error.message)
    return ClaudePeriod(found.days, found.source)


@dataclass(frozen=True, slots=True)
class PolicyInit:
    path: Path
    template: str
    backup: Path | None  # the file that was there, kept (with --force)
    problem: str | None  # why the new file does not load yet (vps: no recipients)


def init_policy(env: Mapping[str, str], *, template: str, force: bool, now: datetime) -> PolicyInit:
    """Write `$SCRUB_HOME/policy.yaml` (0600, in a 0700 folder) from a commented template.

    An existing file is kept unless `force`; then it is first linked to a backup beside it
    (`policy.yaml.<time>.bak`), checked, and only then replaced, atomically."""
    if template not in TEMPLATE_NAMES:
        raise UsageError(f"unknown template {template!r}", f"choose {', '.join(TEMPLATE_NAMES)}")
    config = paths.config_dir(env)
    paths.require_config_dir(config, _CONFIG_HINT)
    home = paths.scrub_home(env)
    target = paths.policy_file(home)
    text = read_template(template)
    if not force and os.path.lexists(target):
        raise UsageError(
            f"{target} already exists; not overwritten",
            "`scrub policy show` says what it holds; `--force` replaces it and keeps a backup",
        )
    paths.ensure_private_dir(home, home)  # ours, 0700, whoever made it
    backup = _keep_existing(target, now) if force else None
    atomic_write(target, [text.encode()], mode=0o600)
    problem = None
    try:
        parse_policy(text, origin=str(target), base_dir=home, env=env)
    except ScrubberError as error:
        problem = error.message
    append_activity(
        home,
        {"at": now.isoformat(), "action": "policy-init", "template": template,
         "path": str(target), "backup": None if backup is None else str(backup)},
    )  # fmt: skip
    return PolicyInit(target, template, backup, problem)


def _keep_existing(target: Path, now: datetime) -> Path | None:
    """Link what is at `target` to a backup beside it; None when nothing is there."""
    try:
        st = target.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{target} is a folder; not replaced", "move it away first")
    stamp = now.strftime("%Y%m%dT%H%M%S")
    # A hard link of the entry itself (a planted symlink stays a link, never followed): the
    # old policy stays whole under its new name, and nothing is copied or read.
    for attempt in range(100):
        backup = target.with_name(f"{target.name}.{stamp}{f'-{attempt}' if attempt else ''}.bak")
        try:
            os.link(target, backup, follow_symlinks=False)
            break
        except FileExistsError:
            continue  # two inits in one second
    else:
        raise ScrubberError(f"{target}: no free backup name; nothing replaced")
    if not os.path.samestat(backup.lstat(), st):
        raise ScrubberError(f"{backup}: the backup does not match {target}; nothing replaced")
    fsync_dir(target.parent)
    return backup
