"""Plain data, as a policy file's YAML gives it, to a `Policy`: every key checked, every error a
`PolicyValueError` naming its key path (`retention.days`, `detection.allowlist.patterns[2]`).

No yaml here (`load.py` parses the file). Errors never quote a value: at most a key name, a
number or a short enum word, because a policy can hold things worth keeping quiet.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from scrubber import paths
from scrubber.policy.model import (
    DEFAULT_CLEAR_MANIFEST_FIELDS,
    POLICY_VERSION,
    Allowlist,
    ArchivePolicy,
    DetectionPolicy,
    LiveMode,
    LiveOnError,
    LivePolicy,
    ManifestField,
    Pins,
    Policy,
    PolicyValueError,
    RedactionPolicy,
    RetentionPolicy,
    SessionEndAction,
    ThinkingMode,
)
from scrubber.policy.object_store import (
    S3_SCHEME,
    AddressingStyle,
    S3Destination,
    S3ValueError,
    parse_s3_url,
)


def build_policy(data: object, *, base_dir: Path, env: Mapping[str, str]) -> Policy:
    """The policy `data` describes; relative paths resolve from `base_dir`, `~` from the
    environment's HOME. Raises PolicyValueError."""
    return _build_policy(data, _Context(base_dir, env))


@dataclass(frozen=True, slots=True)
class _Context:
    base_dir: Path
    env: Mapping[str, str]


_TOP_KEYS = (
    "version",
    "detection",
    "redaction",
    "archive",
    "live",
    "on_session_end",
    "retention",
    "pins",
)


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
        live=_live(top.get("live")),
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


def _live(value: object) -> LivePolicy:
    section = _section(
        value, "live", ("post_tool_use", "user_prompt_submit", "detectors", "on_error")
    )
    values: dict[str, Any] = {}
    for name in ("post_tool_use", "user_prompt_submit"):
        if section.get(name) is not None:
            values[name] = _enum(section[name], f"live.{name}", LiveMode)
    if section.get("on_error") is not None:
        values["on_error"] = _enum(section["on_error"], "live.on_error", LiveOnError)
    values["detectors"] = _str_list(section.get("detectors"), "live.detectors")
    return _construct("live", LivePolicy, **values)


def _archive(value: object, ctx: _Context) -> ArchivePolicy:
    keys = ("recipients", "recipients_file", "destination", "clear_manifest_fields", "s3")
    section = _section(value, "archive", keys)
    fields = section.get("clear_manifest_fields")
    raw_destination = section.get("destination")
    s3: S3Destination | None = None
    destination: Path | None = None
    if isinstance(raw_destination, str) and raw_destination.startswith(S3_SCHEME):
        s3 = _s3(raw_destination, section.get("s3"))
    else:
        if section.get("s3") is not None:
            raise PolicyValueError(
                "archive.s3", "is set, but archive.destination is not an s3://bucket/prefix URL"
            )
        destination = _path(raw_destination, "archive.destination", ctx)
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
        s3=s3,
    )


# No key for credentials, on purpose: they come from the standard AWS chain only.
_S3_KEYS = (
    "endpoint_url",
    "region",
    "addressing_style",
    "profile",
    "host",
    "remove_local_after_upload",
)


def _s3(url: str, value: object) -> S3Destination:
    section = _section(value, "archive.s3", _S3_KEYS)
    style = section.get("addressing_style")
    try:
        bucket, prefix = parse_s3_url(url)
        return S3Destination(
            bucket=bucket,
            prefix=prefix,
            endpoint_url=_optional_str(section.get("endpoint_url"), "archive.s3.endpoint_url"),
            region=_optional_str(section.get("region"), "archive.s3.region"),
            addressing_style=AddressingStyle.AUTO
            if style is None
            else _enum(style, "archive.s3.addressing_style", AddressingStyle),
            profile=_optional_str(section.get("profile"), "archive.s3.profile"),
            host=_optional_str(section.get("host"), "archive.s3.host"),
            remove_local_after_upload=_bool(
                section, "remove_local_after_upload", "archive.s3", default=False
            ),
        )
    except S3ValueError as error:
        raise PolicyValueError(f"archive.{error.key}", error.problem) from None


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
            raise PolicyValueError(key, f"keys must be text, got {show_key(name)}")
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
        raise PolicyValueError("", f"unknown key {show_key(full)}{suggestion}")


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


def show_key(key: object) -> str:
    """A key as an error may show it: a short printable key shaped like a policy key (words
    of letters) as written, else what it is. A value pasted where a key goes (`ghp_…: 1`) is
    not echoed: the error would print a secret."""
    if isinstance(key, str) and len(key) <= 60 and key.isprintable():
        if not any(_looks_like_a_value(word) for word in _KEY_WORDS.split(key)):
            return repr(key)
        return f"(a {len(key)}-character key that looks like a value, not shown)"
    if isinstance(key, str):
        return "(a long or unprintable key)"
    return _describe(key)


_KEY_WORDS = re.compile(r"[._\- ]+")


def _looks_like_a_value(word: str) -> bool:
    """Longer than any word of a policy key, or a long mix of letters and digits."""
    mixed = any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
    return len(word) > 24 or (mixed and len(word) >= 12)
