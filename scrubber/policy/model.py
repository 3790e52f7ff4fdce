"""What a policy says, as values: version 1, snake_case keys exactly as the Contracts list them.

Standard library only: detection, retention and the status line read these values without paying
for a YAML parser (the one yaml import lives in `load.py`). Every dataclass checks its own ranges
in `__post_init__` and raises `PolicyValueError` naming the key relative to itself, so a policy
built in code (`dataclasses.replace(policy.retention, days=0)` from a `--days 0` flag) is refused
exactly like one read from a file; the loader only adds the file name and the section prefix.

Choices are StrEnums whose values are the spelling users write in YAML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from scrubber import paths
from scrubber.policy.detectors import NAMES_HINT, unknown_detector
from scrubber.policy.object_store import S3Destination

POLICY_VERSION = 1

# Upper bound for every count of days. `now - timedelta(days=N)` leaves what a datetime holds
# (year 1) once N passes about 739,000, so the old bound of 1,000,000 ended retention in an
# OverflowError. 100,000 days (about 274 years) keeps every date sum in range while still
# accepting 99999, the usual "never" workaround for cleanupPeriodDays, which
# `--take-over-cleanup` copies into the policy and sets itself (retention.settings.TAKE_OVER_DAYS).
MAX_DAYS = 100_000

# An age X25519 recipient is the Bech32 encoding of a 32-byte key with HRP "age": "age1" plus 52
# data characters and a 6-character checksum, 62 in all (C2SP age spec, "X25519 recipient type").
# This is a shape check for a helpful early error; archive/keys.py verifies the checksum.
# The Bech32 alphabet (BIP-173), written in pieces so that secret scanners (ours included) do not
# take a 32-character run of distinct symbols for a high-entropy token.
BECH32_CHARSET = "".join(("qpzry9x8", "gf2tvdw0", "s3jn54kh", "ce6mua7l"))
AGE_RECIPIENT_RE = re.compile(rf"age1[{BECH32_CHARSET}]{{58}}")
AGE_IDENTITY_PREFIX = "AGE-SECRET-KEY-1"

# Fingerprints are hex HMAC-SHA256 (64 digits); audit shows the first 8.
_FINGERPRINT_RE = re.compile(r"[0-9a-fA-F]{8,64}")


class PolicyValueError(ValueError):
    """A value outside what the policy allows. `key` is a dotted path relative to the raiser."""

    def __init__(self, key: str, problem: str, hint: str | None = None) -> None:
        super().__init__(f"{key}: {problem}" if key else problem)
        self.key = key
        self.problem = problem
        self.hint = hint

    def within(self, section: str) -> PolicyValueError:
        """The same error with `section.` in front of its key."""
        return PolicyValueError(f"{section}.{self.key}", self.problem, self.hint)


class ThinkingMode(StrEnum):
    """What redacted copies do with thinking blocks (in-place rewrites never touch them)."""

    REDACT = "redact"  # secrets in thinking are replaced; the copy may no longer resume
    KEEP = "keep"  # thinking stays byte-identical, so its signature stays valid and it resumes


class SessionEndAction(StrEnum):
    """What the worker does after a session ends; always applied in declaration order."""

    ARCHIVE = "archive"
    REDACT_COPY = "redact-copy"
    REDACT_IN_PLACE = "redact-in-place"


# Archive first so the original is kept (encrypted) before anything rewrites it in place.
SESSION_END_ORDER: tuple[SessionEndAction, ...] = tuple(SessionEndAction)


class ManifestField(StrEnum):
    """Manifest fields an archive's sidecar and the archive index may hold in clear."""

    SESSION_ID = "session_id"
    PROJECT = "project"
    CWD = "cwd"
    TITLE = "title"
    TAGS = "tags"
    FIRST_TIMESTAMP = "first_timestamp"
    LAST_TIMESTAMP = "last_timestamp"
    SIZES = "sizes"


# Enough to list and date archives without decrypting them. Titles, tags and working directories
# often name customers or projects, so they stay inside the encryption unless the user opts in.
DEFAULT_CLEAR_MANIFEST_FIELDS: tuple[ManifestField, ...] = (
    ManifestField.SESSION_ID,
    ManifestField.FIRST_TIMESTAMP,
    ManifestField.LAST_TIMESTAMP,
    ManifestField.SIZES,
)


def _require_unique(key: str, values: Iterable[object]) -> None:
    seen: set[object] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise PolicyValueError(f"{key}[{index}]", f"'{value}' is listed twice")
        seen.add(value)


def _require_strings(key: str, values: tuple[str, ...]) -> None:
    for index, value in enumerate(values):
        if not value or value != value.strip():
            raise PolicyValueError(
                f"{key}[{index}]", "expected a non-empty text without surrounding spaces"
            )


def _require_days(key: str, value: int | None, *, minimum: int, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= MAX_DAYS:
        raise PolicyValueError(
            key, f"expected a whole number from {minimum} to {MAX_DAYS}, got {value!r}"
        )


def _require_count(key: str, value: int, *, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise PolicyValueError(key, f"expected a whole number >= {minimum}, got {value!r}")


@dataclass(frozen=True, slots=True)
class Allowlist:
    """Known false positives, silenced by the scanner.

    A pattern silences a finding when it matches the secret's *whole* value (`re.fullmatch`):
    a stray `test` then cannot silence every token that merely contains "test". Write `.*` where
    a part should be free. Fingerprints are the keyed fingerprints audit prints (hex HMAC-SHA256,
    see detection/fingerprint.py), so a value can be silenced without writing it into the
    policy; a leading part of at least 8 hex digits is enough, since audit shows the first 8.
    """

    patterns: tuple[str, ...] = ()
    fingerprints: tuple[str, ...] = ()
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for index, fingerprint in enumerate(self.fingerprints):
            if not _FINGERPRINT_RE.fullmatch(fingerprint):
                raise PolicyValueError(
                    f"fingerprints[{index}]",
                    "expected a fingerprint as audit prints it: 8 to 64 hex digits",
                )
        object.__setattr__(self, "fingerprints", tuple(f.lower() for f in self.fingerprints))
        compiled: list[re.Pattern[str]] = []
        for index, pattern in enumerate(self.patterns):
            if not pattern:
                raise PolicyValueError(f"patterns[{index}]", "expected a non-empty pattern")
            try:
                compiled.append(re.compile(pattern))
            except re.error as error:
                # re.error's own message quotes no input, only what is wrong and where.
                raise PolicyValueError(
                    f"patterns[{index}]", f"not a valid regular expression ({error.msg})"
                ) from None
        object.__setattr__(self, "compiled", tuple(compiled))

    def allows_value(self, value: str) -> bool:
        return any(pattern.fullmatch(value) for pattern in self.compiled)

    def allows_fingerprint(self, fingerprint: str) -> bool:
        return any(fingerprint.startswith(listed) for listed in self.fingerprints)

    def allows(self, value: str, fingerprint: str) -> bool:
        return self.allows_fingerprint(fingerprint) or self.allows_value(value)


@dataclass(frozen=True, slots=True)
class DetectionPolicy:
    allowlist: Allowlist = Allowlist()
    disabled_detectors: tuple[str, ...] = ()  # detector names as findings report them
    scan_side_files: bool = True  # subagents/, tool-results/, file-history/ of each session

    def __post_init__(self) -> None:
        _require_strings("disabled_detectors", self.disabled_detectors)
        # A misspelt name would leave the detector running while the user believes it off.
        for index, name in enumerate(self.disabled_detectors):
            problem = unknown_detector(name)
            if problem is not None:
                raise PolicyValueError(f"disabled_detectors[{index}]", problem, NAMES_HINT)

    def is_enabled(self, detector: str) -> bool:
        return detector not in self.disabled_detectors


@dataclass(frozen=True, slots=True)
class RedactionPolicy:
    thinking: ThinkingMode = ThinkingMode.REDACT  # Contracts: default redact for copies


@dataclass(frozen=True, slots=True)
class ArchivePolicy:
    recipients: tuple[str, ...] = ()  # age X25519 recipients, "age1…"
    recipients_file: Path | None = None  # age's recipients-file format: one per line, # comments
    destination: Path | None = None  # None: <SCRUB_HOME>/archives
    clear_manifest_fields: tuple[ManifestField, ...] = DEFAULT_CLEAR_MANIFEST_FIELDS
    # `destination: s3://…`: archives are written to <SCRUB_HOME>/archives, then uploaded.
    s3: S3Destination | None = None

    def __post_init__(self) -> None:
        for index, recipient in enumerate(self.recipients):
            key = f"recipients[{index}]"
            # The value is never echoed: someone who pastes the identity here by mistake must
            # not see their secret key printed back into a terminal or a log.
            if recipient.upper().startswith(AGE_IDENTITY_PREFIX):
                raise PolicyValueError(
                    key,
                    "this is an age identity (a secret key), not a recipient: put its public "
                    "age1… recipient here and keep the identity off this machine",
                )
            if not AGE_RECIPIENT_RE.fullmatch(recipient):
                raise PolicyValueError(
                    key,
                    "expected an age X25519 recipient: 'age1' and 58 more lowercase characters, "
                    "as printed by `age-keygen` or `scrub keygen`",
                )
        _require_unique("recipients", self.recipients)
        _require_unique("clear_manifest_fields", self.clear_manifest_fields)

    @property
    def has_recipients(self) -> bool:
        """Recipients are configured (the file's contents are checked where it is read)."""
        return bool(self.recipients) or self.recipients_file is not None

    def destination_in(self, home: Path) -> Path:
        """Where archives go, given scrubber's own folder."""
        return self.destination if self.destination is not None else paths.archives_dir(home)


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    days: int | None = None  # None: Claude Code's effective cleanupPeriodDays
    keep_newest_per_project: int = 1
    min_idle_minutes: int = 60  # never touch a session written to this recently: it may be live
    max_deletions_per_run: int = 50  # above this a run needs --force
    require_archive: bool = False  # delete only sessions whose newest archive verifies
    trash_days: int = 7  # grace period in trash; 0 purges on the next run
    archive_days: int | None = None  # None: keep archives forever
    # The URL of a ping service is often its own credential, so it stays out of reprs.
    healthcheck_url: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # Claude Code treats cleanupPeriodDays 0 as "delete everything"; we refuse it outright.
        _require_days("days", self.days, minimum=1, optional=True)
        _require_count("keep_newest_per_project", self.keep_newest_per_project, minimum=0)
        _require_count("min_idle_minutes", self.min_idle_minutes, minimum=1)
        _require_count("max_deletions_per_run", self.max_deletions_per_run, minimum=1)
        _require_days("trash_days", self.trash_days, minimum=0, optional=False)
        _require_days("archive_days", self.archive_days, minimum=1, optional=True)
        if self.healthcheck_url is not None and not _is_http_url(self.healthcheck_url):
            raise PolicyValueError(
                "healthcheck_url", "expected an http:// or https:// URL with a host"
            )


def _is_http_url(url: str) -> bool:
    scheme, sep, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    return bool(sep) and scheme.lower() in {"http", "https"} and bool(host) and " " not in url


@dataclass(frozen=True, slots=True)
class Pins:
    """Sessions retention must never delete, however old."""

    sessions: tuple[str, ...] = ()  # session ids
    names: tuple[str, ...] = ()  # custom titles (/rename), matched exactly
    tags: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()  # globs, matched against the project folder name and the cwd

    def __post_init__(self) -> None:
        for key in ("sessions", "names", "tags", "projects"):
            _require_strings(key, getattr(self, key))

    def merged(self, other: Pins) -> Pins:
        """Both sets of pins (the policy's and `state/pins.json`), first occurrences kept."""

        def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(dict.fromkeys((*a, *b)))

        return Pins(
            sessions=union(self.sessions, other.sessions),
            names=union(self.names, other.names),
            tags=union(self.tags, other.tags),
            projects=union(self.projects, other.projects),
        )

    def covers(
        self,
        *,
        session_id: str,
        title: str | None = None,
        tags: Iterable[str] = (),
        project: str | None = None,
        cwd: str | None = None,
    ) -> bool:
        if session_id in self.sessions:
            return True
        if title is not None and title in self.names:
            return True
        if self.tags and any(tag in self.tags for tag in tags):
            return True
        places = [p for p in (project, cwd) if p]
        return any(fnmatchcase(place, glob) for glob in self.projects for place in places)


class LiveMode(StrEnum):
    """What a live hook does with a secret it finds."""

    MASK = "mask"  # PostToolUse: replace it by its placeholder; UserPromptSubmit: block
    WARN = "warn"  # let it through, log the finding (kind and fingerprint only)
    OFF = "off"  # do not scan


class LiveOnError(StrEnum):
    """What a live hook does when it fails (bad input, an internal error)."""

    PASS = "pass"  # noqa: S105 - a mode, not a password; the output goes through unchanged (a hook never breaks Claude Code)
    BLOCK = "block"  # the output is withheld: the model sees a notice instead


@dataclass(frozen=True, slots=True)
class LivePolicy:
    """The live hooks (PostToolUse, UserPromptSubmit). `detectors` narrows the live set (empty:
    all of it)."""

    post_tool_use: LiveMode = LiveMode.MASK
    user_prompt_submit: LiveMode = LiveMode.MASK
    detectors: tuple[str, ...] = ()
    on_error: LiveOnError = LiveOnError.PASS

    def __post_init__(self) -> None:
        _require_strings("detectors", self.detectors)
        _require_unique("detectors", self.detectors)
        for index, name in enumerate(self.detectors):
            problem = unknown_detector(name)
            if problem is not None:
                raise PolicyValueError(f"detectors[{index}]", problem, NAMES_HINT)


# The compiled live settings the live hooks read from state/ (they must not import yaml).
LIVE_JSON_FORMAT = 1


def compile_live_json(policy: Policy) -> dict[str, Any]:
    """A JSON-serialisable form of `policy.live`, with the allowlist the hooks honour."""
    live = policy.live
    return {
        **compile_allowlist_json(policy),
        "live_format": LIVE_JSON_FORMAT,
        "post_tool_use": live.post_tool_use.value,
        "user_prompt_submit": live.user_prompt_submit.value,
        "detectors": list(live.detectors),
        "on_error": live.on_error.value,
    }


def live_from_json(data: Mapping[str, Any]) -> LivePolicy:
    """Read back what `compile_live_json` wrote. Raises PolicyValueError when malformed."""
    if data.get("live_format") != LIVE_JSON_FORMAT:
        raise PolicyValueError("live_format", f"expected {LIVE_JSON_FORMAT}")
    detectors = data.get("detectors", [])
    if not isinstance(detectors, list) or not all(isinstance(d, str) for d in detectors):
        raise PolicyValueError("detectors", "expected a list of strings")
    try:
        return LivePolicy(
            post_tool_use=LiveMode(data.get("post_tool_use", "mask")),
            user_prompt_submit=LiveMode(data.get("user_prompt_submit", "mask")),
            detectors=tuple(detectors),
            on_error=LiveOnError(data.get("on_error", "pass")),
        )
    except ValueError as error:
        if isinstance(error, PolicyValueError):
            raise
        raise PolicyValueError("live", "unknown mode") from None


@dataclass(frozen=True, slots=True)
class Policy:
    detection: DetectionPolicy = DetectionPolicy()
    redaction: RedactionPolicy = RedactionPolicy()
    archive: ArchivePolicy = ArchivePolicy()
    live: LivePolicy = LivePolicy()
    # None means "not set": the Contracts default depends on whether recipients exist.
    on_session_end: tuple[SessionEndAction, ...] | None = None
    retention: RetentionPolicy = RetentionPolicy()
    pins: Pins = Pins()

    def __post_init__(self) -> None:
        if self.on_session_end is None:
            return
        _require_unique("on_session_end", self.on_session_end)
        if SessionEndAction.ARCHIVE in self.on_session_end and not self.archive.has_recipients:
            # A hook has no terminal and no flags: without recipients in the policy an archive
            # job could only fail later, in the background. Say so now.
            raise PolicyValueError(
                "on_session_end",
                "'archive' needs archive.recipients or archive.recipients_file",
                "put your age1… recipient under archive.recipients (`age-keygen` or `scrub "
                "keygen`, run on a machine you trust, prints one), or remove 'archive'",
            )

    @classmethod
    def default(cls) -> Policy:
        return cls()

    @property
    def session_end_actions(self) -> tuple[SessionEndAction, ...]:
        """The actions to run, in the fixed order: archive, redact-copy, redact-in-place."""
        if self.on_session_end is None:
            return (SessionEndAction.ARCHIVE,) if self.archive.has_recipients else ()
        chosen = set(self.on_session_end)
        return tuple(action for action in SESSION_END_ORDER if action in chosen)

    def with_pins(self, extra: Pins) -> Policy:
        return replace(self, pins=self.pins.merged(extra))

    def warnings(self) -> tuple[str, ...]:
        """Settings that are valid but probably not what the user meant."""
        notes: list[str] = []
        if self.retention.require_archive and not self.archive.has_recipients:
            notes.append(
                "retention.require_archive is true but archive.recipients is empty: retention "
                "will keep every session that has no archive yet"
            )
        if self.archive.recipients and self.archive.recipients_file is not None:
            notes.append(
                "archive.recipients and archive.recipients_file are both set: archives are "
                "encrypted to the recipients of both"
            )
        return tuple(notes)


# The compiled allowlist the status line reads from state/ (it must not import yaml). Patterns
# travel as strings; the reader compiles them and matches with re.fullmatch, as `Allowlist` does.
ALLOWLIST_JSON_FORMAT = 1


def compile_allowlist_json(policy: Policy) -> dict[str, Any]:
    """A JSON-serialisable form of what detection silences."""
    detection = policy.detection
    return {
        "format": ALLOWLIST_JSON_FORMAT,
        "match": "fullmatch",  # a pattern must match the whole value
        "fingerprint_match": "prefix",  # a listed fingerprint matches any that starts with it
        "patterns": list(detection.allowlist.patterns),
        "fingerprints": list(detection.allowlist.fingerprints),
        "disabled_detectors": list(detection.disabled_detectors),
    }


def allowlist_from_json(data: Mapping[str, Any]) -> tuple[Allowlist, tuple[str, ...]]:
    """Read back what `compile_allowlist_json` wrote: the allowlist and the disabled detectors.

    Raises PolicyValueError when the data is from another format or malformed; the status line
    then runs without an allowlist rather than failing.
    """
    if data.get("format") != ALLOWLIST_JSON_FORMAT:
        raise PolicyValueError("format", f"expected {ALLOWLIST_JSON_FORMAT}")

    def strings(key: str) -> tuple[str, ...]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PolicyValueError(key, "expected a list of strings")
        return tuple(value)

    allowlist = Allowlist(patterns=strings("patterns"), fingerprints=strings("fingerprints"))
    return allowlist, strings("disabled_detectors")
