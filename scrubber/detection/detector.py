"""The seam every detector fits: a name, prefilter anchors, and `find(text, context)`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, TypeGuard, runtime_checkable

from scrubber.detection.finding import Hit


class SourceKind(StrEnum):
    """What the text is known to be, from the tool call that produced it."""

    UNKNOWN = "unknown"
    DOTENV = "dotenv"  # .env files, *.env, env dumps (printenv, env, docker inspect Env)
    CREDENTIAL_FILE = "credential-file"  # AWS credentials, .netrc, .pgpass, kubeconfig, tfvars…
    PRIVATE_KEY_FILE = "private-key-file"  # *.pem, id_rsa, *.key; pragma: allowlist secret
    SECRET_DUMP = "secret-dump"  # noqa: S105 - kubectl get secret -o yaml, aws configure export-credentials…; pragma: allowlist secret


@dataclass(frozen=True, slots=True)
class ScanContext:
    """What we know about a string before scanning it.

    `key` is the JSON key or name the string sits under (for a tool input field, "command" or
    "content"); `source` says whether the string came from reading a credential file or from a
    command that dumps secrets, in which case values are caught even when they look ordinary.
    """

    key: str | None = None
    source: SourceKind = SourceKind.UNKNOWN
    file_name: str | None = None  # the file a Read/Write/Edit touched, when known

    @property
    def sensitive(self) -> bool:
        return self.source is not SourceKind.UNKNOWN


PLAIN = ScanContext()


class Detector(Protocol):
    """A detector finds secrets in one string and reports exact spans.

    `anchors` are lower-case literals; a string that contains none of them (case-insensitively)
    cannot hold a match, which lets the scanner skip most text without running the detector.
    Anchors must contain no character that JSON escapes (`"`, `\\`, control characters), so the
    same test works on a raw JSONL line. A detector with no anchors runs only where the context
    is sensitive (`context_only`).

    Optional abilities, each a Protocol below that the scanner checks with `isinstance`, or
    for the protocols of methods with `finds_near` and its siblings at the end of this module
    (decided once per class); either way mypy sees them: `gates` (gates.py: necessary
    conditions that replace anchors that are common words or punctuation), `Reaches`,
    `FindsNear`, `ConfirmsRaw`, `ReadsFiles`, `NeedsPreparing`, `ShowsPublicPrefix`.
    """

    @property
    def name(self) -> str: ...

    @property
    def anchors(self) -> tuple[str, ...]: ...

    @property
    def context_only(self) -> bool: ...

    def find(self, text: str, context: ScanContext) -> Iterable[Hit]: ...


# Where a gate matched (see gate_index.py): the offset its match ends at, and which of the
# detector's gates it is.
GateEvent = tuple[int, int]


@runtime_checkable
class Reaches(Protocol):
    """How far from a gate match (before, after) the detector's hits may reach; without it the
    scanner assumes a token's reach for a one-regex rule and a long one for others."""

    @property
    def reach_before(self) -> int: ...

    @property
    def reach_after(self) -> int: ...


@runtime_checkable
class FindsNear(Protocol):
    """`find`, told where (and which of) its gates matched in the text: it reads only there,
    whatever the text's length."""

    def find_near(
        self, text: str, context: ScanContext, events: Sequence[GateEvent]
    ) -> Iterable[Hit]: ...


@runtime_checkable
class ConfirmsRaw(Protocol):
    """A cheap, exact look at a raw JSONL line (with where its gates matched there) before the
    line is parsed for this detector: False means it cannot match anywhere in the line."""

    def may_match_raw(self, data: bytes, ends: Iterable[GateEvent]) -> bool: ...


@runtime_checkable
class ReadsFiles(Protocol):
    """The detector reads only the output or input of tool calls on certain files."""

    def reads_file(self, file_name: str | None) -> bool: ...


@runtime_checkable
class NeedsPreparing(Protocol):
    """One-time work (an import, a compile) to do before a scan forks its processes, so that
    they share it."""

    def prepare(self) -> None: ...


@runtime_checkable
class ShowsPublicPrefix(Protocol):
    """A regex for the start of the detector's matches that names the vendor, not the secret
    (`ghp_`, `sk-proj-`): a masked preview of any finding may show it. "" for none."""

    @property
    def public_prefix(self) -> str: ...


_IMPLEMENTS: dict[tuple[type, type], bool] = {}


def _class_is(detector: object, protocol: type) -> bool:
    """`isinstance(detector, protocol)` for a protocol of methods, decided once per class: a
    method is the class's, the same for each instance. typing's own check lists the protocol's
    members again on every call, and the scanner's set-up asks it of every detector at each
    start (about 10 ms of a command's 0.3 s)."""
    key = (type(detector), protocol)
    known = _IMPLEMENTS.get(key)
    if known is None:
        known = _IMPLEMENTS[key] = isinstance(detector, protocol)
    return known


def finds_near(detector: object) -> TypeGuard[FindsNear]:
    return _class_is(detector, FindsNear)


def confirms_raw(detector: object) -> TypeGuard[ConfirmsRaw]:
    return _class_is(detector, ConfirmsRaw)


def reads_files(detector: object) -> TypeGuard[ReadsFiles]:
    return _class_is(detector, ReadsFiles)


def needs_preparing(detector: object) -> TypeGuard[NeedsPreparing]:
    return _class_is(detector, NeedsPreparing)
