"""The seam every detector fits: a name, prefilter anchors, and `find(text, context)`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

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

    Optional, looked up by the scanner (scan.py):
    - `gates`: a tuple of `gates.Gate`, necessary conditions that replace the anchors when
      those are common words or punctuation;
    - `reach_before` / `reach_after`: how far from a gate match its hits may reach;
    - `find_near(text, context, events)`: `find`, told where (and which of) its gates matched;
    - `may_match_raw(data, events)`: a cheap, exact look at a raw line before it is parsed;
    - `reads_file(file_name)`: the detector reads only output or input of calls on such files;
    - `prepare()`: one-time work to do before a scan forks its processes.
    """

    @property
    def name(self) -> str: ...

    @property
    def anchors(self) -> tuple[str, ...]: ...

    @property
    def context_only(self) -> bool: ...

    def find(self, text: str, context: ScanContext) -> Iterable[Hit]: ...
