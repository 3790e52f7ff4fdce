"""Read a policy file into a `Policy`: the one module that imports yaml.

Where the policy comes from, first match wins: the `--policy` path, `$SCRUB_POLICY`,
`$SCRUB_HOME/policy.yaml`, else the built-in defaults. A file that was asked for (by flag or
variable) must exist; the one in `$SCRUB_HOME` is optional.

Every error is one line naming the file, the key path (`retention.days`,
`detection.allowlist.patterns[2]`) and what was expected. Errors never quote the file: at most a
key name, a number or a short enum word, because a policy can hold things worth keeping quiet
(a healthcheck URL with its token, an allowlist pattern with a literal value, a pasted identity).
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from scrubber import paths
from scrubber.errors import ConfigError, KeyMaterialError, UsageError
from scrubber.policy.model import (
    DEFAULT_CLEAR_MANIFEST_FIELDS,
    POLICY_VERSION,
    Allowlist,
    ArchivePolicy,
    DetectionPolicy,
    ManifestField,
    Pins,
    Policy,
    PolicyValueError,
    RedactionPolicy,
    RetentionPolicy,
    SessionEndAction,
    ThinkingMode,
)

ENV_POLICY = "SCRUB_POLICY"
TEMPLATE_NAMES: tuple[str, ...] = ("default", "strict", "vps")

# A policy is a page of settings; anything this large is the wrong file (or a YAML bomb).
MAX_POLICY_BYTES = 1 << 20

_KEYS_HINT = "every key, with what it does, is listed in scrubber's policies/default.yaml"


class PolicySource(StrEnum):
    FLAG = "--policy"
    ENVIRONMENT = "$SCRUB_POLICY"
    HOME = "$SCRUB_HOME/policy.yaml"
    BUILTIN = "built-in defaults"


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    policy: Policy
    source: PolicySource
    path: Path | None  # None for the built-in defaults
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.path is None:
            return "built-in defaults (no policy file)"
        return f"{self.path} (from {self.source})"


# ---------------------------------------------------------------------------------------------
# Finding the file


def load_policy(path: Path | None = None, env: Mapping[str, str] | None = None) -> LoadedPolicy:
    """The policy in force, and where it came from. Raises ConfigError with a one-line message."""
    env = os.environ if env is None else env
    if path is not None:
        return _load_file(Path(path), PolicySource.FLAG, env)
    configured = env.get(ENV_POLICY, "")
    if configured:
        return _load_file(Path(configured).expanduser(), PolicySource.ENVIRONMENT, env)
    home_policy = paths.policy_file(paths.scrub_home(env))
    # lexists, not exists: a dangling symlink (an unmounted volume) must be an error, not a
    # silent fall-back to defaults that would, for example, stop archiving on a server.
    if os.path.lexists(home_policy):
        return _load_file(home_policy, PolicySource.HOME, env)
    policy = Policy.default()
    return LoadedPolicy(policy, PolicySource.BUILTIN, None, policy.warnings())


def _load_file(path: Path, source: PolicySource, env: Mapping[str, str]) -> LoadedPolicy:
    text = _read_text(path, source)
    policy = parse_policy(text, origin=str(path), base_dir=path.absolute().parent, env=env)
    return LoadedPolicy(policy, source, path, policy.warnings())


def _read_text(path: Path, source: PolicySource) -> str:
    try:
        with paths.open_regular(path) as handle:  # a FIFO must not hang every command
            data = handle.read(MAX_POLICY_BYTES + 1)
    except FileNotFoundError:
        hint = {
            PolicySource.FLAG: "check the path given to --policy",
            PolicySource.ENVIRONMENT: f"${ENV_POLICY} names this file: fix the path or unset it",
        }.get(source)
        raise ConfigError(f"{path}: policy file not found", hint) from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, expected a policy file") from None
    except paths.NotRegularFileError as error:
        raise ConfigError(f"{path}: is {error.kind}, expected a policy file; not read") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the policy file ({error.strerror})") from None
    if len(data) > MAX_POLICY_BYTES:
        raise ConfigError(f"{path}: too large for a policy file (over {MAX_POLICY_BYTES} bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (bad byte at offset {error.start})") from None


# ---------------------------------------------------------------------------------------------
# YAML to plain data


@functools.cache
def _yaml() -> tuple[Any, type[Any]]:
    """PyYAML and our loader, imported on the first policy file read: with no policy file (the
    built-in defaults), a command does not pay for importing yaml (about 15 ms)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        """safe_load, except that a key given twice is an error (PyYAML silently keeps the
        last)."""

    def construct_mapping_once(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        loader.flatten_mapping(node)
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key; construct_mapping reports it properly
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {_show_key(key)}", key_node.start_mark
                )
            seen.add(key)
        return loader.construct_mapping(node)

    StrictLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping_once
    )
    return yaml, StrictLoader


def _parse_yaml(text: str, origin: str) -> object:
    yaml, loader = _yaml()
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as error:
        # Only the parser's problem and its position: str(error) would quote the offending line.
        mark = error.problem_mark or error.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = error.problem or error.context or "syntax error"
        raise ConfigError(f"{origin}{where}: not valid YAML: {problem}") from None
    except yaml.YAMLError:
        raise ConfigError(f"{origin}: not valid YAML") from None


# ---------------------------------------------------------------------------------------------
# Plain data to a Policy


def parse_policy(
    text: str, *, origin: str, base_dir: Path, env: Mapping[str, str] | None = None
) -> Policy:
    """Parse policy text. `origin` names it in errors; relative paths resolve from `base_dir`."""
    env = os.environ if env is None else env
    data = _parse_yaml(text, origin)
    try:
        return _build_policy(data, _Context(base_dir, env))
    except PolicyValueError as error:
        hint = error.hint or (_KEYS_HINT if error.problem.startswith("unknown key") else None)
        where = f"{error.key}: " if error.key else ""
        raise ConfigError(f"{origin}: {where}{error.problem}", hint) from None


@dataclass(frozen=True, slots=True)
class _Context:
    base_dir: Path
    env: Mapping[str, str]


_TOP_KEYS = ("version", "detection", "redaction", "archive", "on_session_end", "retention", "pins")


def _build_policy(data: object, ctx: _Context) -> Policy:
    if data is None:
        raise PolicyValueError(
            "", f"the file is empty; a policy starts with 'version: {POLICY_VERSION}'"
        )
    top = _mapping(data, "")
    # The version first: a newer file's new keys are not typos, and saying so would mislead.
    if "version" in top:
        version = top["version"]
        if type(version) is not int or version != POLICY_VERSION:
            raise PolicyValueError(
                "version",
                f"expected {POLICY_VERSION}, got {_describe(version)} "
                f"(this scrubber reads policy version {POLICY_VERSION})",
            )
    _check_keys(top, "", _TOP_KEYS)  # before "missing": 'versoin' gets its suggestion
    if "version" not in top:
        raise PolicyValueError(
            "version", f"missing; a policy starts with 'version: {POLICY_VERSION}'"
        )
    on_session_end = top.get("on_session_end")
    return _construct(
        "",
        Policy,
        detection=_detection(top.get("detection")),
        redaction=_redaction(top.get("redaction")),
        archive=_archive(top.get("archive"), ctx),
        on_session_end=None
        if on_session_end is None
        else _enum_list(on_session_end, "on_session_end", SessionEndAction),
        retention=_retention(top.get("retention")),
        pins=_pins(top.get("pins")),
    )


def _detection(value: object) -> DetectionPolicy:
    section = _section(value, "detection", ("allowlist", "disabled_detectors", "scan_side_files"))
    allowlist = _section(
        section.get("allowlist"), "detection.allowlist", ("patterns", "fingerprints")
    )
    return _construct(
        "detection",
        DetectionPolicy,
        allowlist=_construct(
            "detection.allowlist",
            Allowlist,
            patterns=_str_list(allowlist.get("patterns"), "detection.allowlist.patterns"),
            fingerprints=_str_list(
                allowlist.get("fingerprints"), "detection.allowlist.fingerprints"
            ),
        ),
        disabled_detectors=_str_list(
            section.get("disabled_detectors"), "detection.disabled_detectors"
        ),
        scan_side_files=_bool(section, "scan_side_files", "detection", default=True),
    )


def _redaction(value: object) -> RedactionPolicy:
    section = _section(value, "redaction", ("thinking",))
    thinking = section.get("thinking")
    if thinking is None:
        return RedactionPolicy()
    return RedactionPolicy(thinking=_enum(thinking, "redaction.thinking", ThinkingMode))


def _archive(value: object, ctx: _Context) -> ArchivePolicy:
    keys = ("recipients", "recipients_file", "destination", "clear_manifest_fields")
    section = _section(value, "archive", keys)
    fields = section.get("clear_manifest_fields")
    destination = _path(section.get("destination"), "archive.destination", ctx)
    if destination is not None:
        _refuse_inside_projects(destination, "archive.destination", ctx)
    return _construct(
        "archive",
        ArchivePolicy,
        recipients=_str_list(section.get("recipients"), "archive.recipients"),
        recipients_file=_path(section.get("recipients_file"), "archive.recipients_file", ctx),
        destination=destination,
        clear_manifest_fields=DEFAULT_CLEAR_MANIFEST_FIELDS
        if fields is None
        else _enum_list(fields, "archive.clear_manifest_fields", ManifestField),
    )


def _retention(value: object) -> RetentionPolicy:
    keys = (
        "days",
        "keep_newest_per_project",
        "min_idle_minutes",
        "max_deletions_per_run",
        "require_archive",
        "trash_days",
        "archive_days",
        "healthcheck_url",
    )
    section = _section(value, "retention", keys)
    defaults = RetentionPolicy()
    return _construct(
        "retention",
        RetentionPolicy,
        days=_int(section, "days", "retention", default=None),
        keep_newest_per_project=_int(
            section,
            "keep_newest_per_project",
            "retention",
            default=defaults.keep_newest_per_project,
        ),
        min_idle_minutes=_int(
            section, "min_idle_minutes", "retention", default=defaults.min_idle_minutes
        ),
        max_deletions_per_run=_int(
            section, "max_deletions_per_run", "retention", default=defaults.max_deletions_per_run
        ),
        require_archive=_bool(section, "require_archive", "retention", default=False),
        trash_days=_int(section, "trash_days", "retention", default=defaults.trash_days),
        archive_days=_int(section, "archive_days", "retention", default=None),
        healthcheck_url=_optional_str(section.get("healthcheck_url"), "retention.healthcheck_url"),
    )


def _pins(value: object) -> Pins:
    section = _section(value, "pins", ("sessions", "names", "tags", "projects"))
    return _construct(
        "pins",
        Pins,
        sessions=_str_list(section.get("sessions"), "pins.sessions"),
        names=_str_list(section.get("names"), "pins.names"),
        tags=_str_list(section.get("tags"), "pins.tags"),
        projects=_str_list(section.get("projects"), "pins.projects"),
    )


# ---------------------------------------------------------------------------------------------
# Checks shared by every section

_T = TypeVar("_T")
_E = TypeVar("_E", bound=StrEnum)


def _construct(section: str, cls: Callable[..., _T], **values: Any) -> _T:
    """Build a model value; its own range checks get the section's key path in front."""
    try:
        return cls(**values)
    except PolicyValueError as error:
        raise (error.within(section) if section else error) from None


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _mapping(value: object, key: str) -> dict[str, object]:
    if not isinstance(value, dict):
        what = "the file should be a mapping of keys" if not key else "expected a mapping of keys"
        raise PolicyValueError(key, f"{what}, got {_describe(value)}")
    for name in value:
        if not isinstance(name, str):
            raise PolicyValueError(key, f"keys must be text, got {_show_key(name)}")
    return value


def _section(value: object, key: str, allowed: Sequence[str]) -> dict[str, object]:
    # An empty section (every sub-key commented out) means "all defaults".
    section = {} if value is None else _mapping(value, key)
    _check_keys(section, key, allowed)
    return section


def _check_keys(section: Mapping[str, object], parent: str, allowed: Sequence[str]) -> None:
    for name in section:
        if name in allowed:
            continue
        full = _join(parent, name)
        close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
        suggestion = f" (did you mean {_join(parent, close[0])!r}?)" if close else ""
        raise PolicyValueError("", f"unknown key {_show_key(full)}{suggestion}")


# A key left empty is "not set", like a key left out: one rule for every key, as the template
# header says.


def _bool(section: Mapping[str, object], name: str, parent: str, *, default: bool) -> bool:
    value = section.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise PolicyValueError(
            _join(parent, name), f"expected true or false, got {_describe(value)}"
        )
    return value


def _int(
    section: Mapping[str, object], name: str, parent: str, *, default: int | None
) -> int | None:
    value = section.get(name)
    if value is None:
        return default
    if type(value) is not int:
        if isinstance(value, str) and value.strip().isdigit():
            raise PolicyValueError(
                _join(parent, name), "expected a whole number, got a text: write it without quotes"
            )
        raise PolicyValueError(
            _join(parent, name), f"expected a whole number, got {_describe(value)}"
        )
    return value


def _optional_str(value: object, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise PolicyValueError(key, f"expected a text, got {_describe(value)}")
    return value


def _str_list(value: object, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise PolicyValueError(key, f"expected a list, got {_describe(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            # Unquoted YAML turns 0123 into a number and `yes` into true: ask for quotes.
            raise PolicyValueError(
                f"{key}[{index}]", f"expected a text (quote it), got {_describe(item)}"
            )
    return tuple(value)


def _enum(value: object, key: str, enum: type[_E]) -> _E:
    choices = ", ".join(member.value for member in enum)
    if isinstance(value, str):
        try:
            return enum(value)
        except ValueError:
            pass
    raise PolicyValueError(key, f"expected one of {choices}, got {_describe(value, word=True)}")


def _enum_list(value: object, key: str, enum: type[_E]) -> tuple[_E, ...]:
    if not isinstance(value, list):
        choices = ", ".join(member.value for member in enum)
        raise PolicyValueError(
            key, f"expected a list from {choices}, got {_describe(value, word=True)}"
        )
    return tuple(_enum(item, f"{key}[{index}]", enum) for index, item in enumerate(value))


def _path(value: object, key: str, ctx: _Context) -> Path | None:
    text = _optional_str(value, key)
    if text is None:
        return None
    if not text.strip():
        raise PolicyValueError(key, "expected a path, got an empty text")
    if text == "~" or text.startswith("~/"):
        home = ctx.env.get("HOME") or str(Path.home())
        path = Path(home) / text[2:]
    else:
        try:
            path = Path(text).expanduser()
        except RuntimeError:
            raise PolicyValueError(key, "names an unknown user's home folder") from None
    return path if path.is_absolute() else ctx.base_dir / path


def _refuse_inside_projects(path: Path, key: str, ctx: _Context) -> None:
    # Claude Code's cleanup sweeps projects/; nothing of ours may live there.
    projects = paths.projects_dir(paths.config_dir(ctx.env)).resolve()
    resolved = path.resolve()
    if resolved == projects or projects in resolved.parents:
        raise PolicyValueError(
            key, "must not be inside Claude Code's projects/ folder, which its cleanup sweeps"
        )


_WORD = re.compile(r"[A-Za-z0-9_.+-]{1,24}")


def _describe(value: object, *, word: bool = False) -> str:
    """What a value is, without quoting text a user may not want echoed."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # A short word is shown only where a word was expected (an enum choice): enough to spot
        # a typo, never long enough to be a credential pasted in the wrong place.
        if word and _WORD.fullmatch(value):
            return repr(value)
        return "a text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def _show_key(key: object) -> str:
    if isinstance(key, str) and len(key) <= 60 and key.isprintable():
        return repr(key)
    if isinstance(key, str):
        return "(a long or unprintable key)"
    return _describe(key)


# ---------------------------------------------------------------------------------------------
# Templates


def read_template(name: str) -> str:
    """The text of a packaged template (default, strict or vps)."""
    if name not in TEMPLATE_NAMES:
        raise UsageError(
            f"unknown policy template {name!r}", f"choose from {', '.join(TEMPLATE_NAMES)}"
        )
    resource = resources.files("scrubber.policy").joinpath("templates", f"{name}.yaml")
    return resource.read_text(encoding="utf-8")


def load_template(name: str, env: Mapping[str, str] | None = None) -> Policy:
    """Parse a packaged template as it ships (vps.yaml refuses until recipients are added)."""
    return parse_policy(
        read_template(name), origin=f"policies/{name}.yaml", base_dir=Path.cwd(), env=env
    )


def render_default_policy(
    recipients: Sequence[str] | None = None,
    on_session_end: Sequence[str] | None = None,
    recipients_file: Path | None = None,
) -> str:
    """default.yaml's commented text with the installer's choices written in.

    The installer writes this text rather than dumping YAML, so the user keeps every comment.
    Values are checked before they are written, and the result is parsed back, so an installer
    can never leave behind a policy that does not load.
    """
    text = read_template("default")
    if recipients:
        try:
            ArchivePolicy(recipients=tuple(recipients))
        except PolicyValueError as error:
            raise KeyMaterialError(f"recipient {error.key}: {error.problem}") from None
        block = "".join(f"\n    - {recipient}" for recipient in recipients)
        text = _replace_line(text, "  recipients: []", f"  recipients:{block}")
    if recipients_file is not None:
        # A JSON string is a valid YAML double-quoted scalar: any path survives the round trip.
        quoted = json.dumps(str(Path(recipients_file).expanduser().absolute()), ensure_ascii=False)
        text = _replace_line(text, "  recipients_file:", f"  recipients_file: {quoted}")
    if on_session_end is not None:
        actions: list[str] = []
        for action in on_session_end:
            try:
                actions.append(SessionEndAction(action).value)
            except ValueError:
                choices = ", ".join(member.value for member in SessionEndAction)
                raise UsageError(
                    f"unknown on-session-end action {action!r}", f"choose from {choices}"
                ) from None
        text = _replace_line(text, "on_session_end:", f"on_session_end: [{', '.join(actions)}]")
    parse_policy(text, origin="the policy to be written", base_dir=Path.cwd(), env={})
    return text


def _replace_line(text: str, line: str, replacement: str) -> str:
    pattern = re.compile(rf"^{re.escape(line)}$", re.MULTILINE)
    if len(pattern.findall(text)) != 1:
        # The template and this function are shipped together; a test keeps them in step.
        raise RuntimeError(f"default.yaml has no single line {line!r} to fill in")
    return pattern.sub(lambda _: replacement, text)
