"""Secrets in well-known credential files, recognised by the file's own syntax.

- `.netrc`: `machine … login … password …` tokens (GNU inetutils, "The .netrc file").
- `.pgpass`: `hostname:port:database:username:password` lines (PostgreSQL libpq "The Password
  File").
- Docker `config.json`: `auths.<registry>.auth` is base64 of `user:password`; `identitytoken`
  and `registrytoken` are bearer credentials (docs.docker.com "docker login", credential stores).
- `.npmrc`: `//registry/:_authToken=…`, `_auth=…` (base64 user:password), `_password=…`
  (docs.npmjs.com "npmrc", auth-related configuration).

AWS `credentials` keys are in aws.py, kubeconfig `client-key-data` in private_key.py, and
`token:`/`password:` lines of kubeconfig, `.pypirc`, `.my.cnf` and `.s3cfg` in assignment/; URLs of
`.git-credentials` in connection_string.py.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext, SourceKind
from scrubber.detection.finding import Hit
from scrubber.detection.gates import WS, Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_trivial, looks_token_like

# A value token: no whitespace, and stops before a JSON escape (`\n`, `\"`) when the text is a
# raw, escaped line.
_VALUE = r"(?:[^\s\\\"'`]|\\(?![nrt\"]))+"
# Between netrc tokens: whitespace, JSON newline escapes, Read-tool line-number prefixes.
_GAP = r"(?:\s|\\[nrt]|(?<=\s)\d{1,7}(?:→|\t))+"


_CLAUSE = _GAP + r"(?:login|account|port)" + _GAP + _VALUE


def _reject_value(value: str) -> bool:
    return is_trivial(value)


NETRC_PASSWORD = PatternRule(
    name="netrc-password",
    kind="netrc-password",
    pattern=rf"(?:(?<![\w-])|(?<=\\[nrt]))(?:machine{_GAP}{_VALUE}(?:{_CLAUSE}){{0,4}}|"
    rf"default(?:{_CLAUSE}){{1,4}}){_GAP}password{_GAP}(?P<secret>{_VALUE})",
    anchors=("password",),
    reference="GNU inetutils manual, 'The .netrc file'; curl --netrc",
    reject=_reject_value,
    # `password` is common in prose; after `machine` or `default` it is rare.
    gates=(
        Gate(rf"(?:machine|default)[\s\S]*password{WS}", raw=rf"(?:machine|default).*password{WS}"),
    ),
)

# A grep hit in a netrc file (`~/.netrc:3:  password …`) has lost its `machine` line.
NETRC_GREP_PASSWORD = PatternRule(
    name="netrc-grep-password",
    kind="netrc-password",
    pattern=r"netrc[:-]\d{1,7}[:-]\s*(?:(?:machine|login|account)\s+\S+\s+)*password\s+"
    r"(?P<secret>" + _VALUE + r")",
    anchors=("netrc",),
    reference="GNU inetutils manual, 'The .netrc file'; grep -n output format",
    reject=_reject_value,
)

_NETRC_CONTEXT_PATTERN = re.compile(r"(?<![\w-])password" + _GAP + r"(?P<secret>" + _VALUE + r")")


@dataclass(frozen=True, slots=True)
class NetrcContextRule:
    """In a file known to be a netrc, every `password X` pair, with or without `machine`."""

    name: str = "netrc-context-password"
    kind: str = "netrc-password"
    anchors: tuple[str, ...] = ()
    context_only: bool = True
    reference: str = "GNU inetutils manual, 'The .netrc file'"

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        if context.source is not SourceKind.CREDENTIAL_FILE:
            return
        if "netrc" not in (context.file_name or "").lower():
            return
        for match in _NETRC_CONTEXT_PATTERN.finditer(text):
            if not is_trivial(match.group("secret")):
                yield Hit(match.start("secret"), match.end("secret"), self.kind, self.name)


NETRC_CONTEXT_PASSWORD = NetrcContextRule()

# `host:port:database:user:password`, whole on its line. The line may start after a real
# newline, a JSON `\n`, a Read-tool prefix (`     3→`, `3\t`) or a grep prefix (`.pgpass:3:`).
_PGPASS_LINE = re.compile(
    r"(?:\*|[A-Za-z0-9_.\[\]-]*[A-Za-z.\[][A-Za-z0-9_.\[\]-]*):(?:\d{1,5}|\*):"
    r"[^:\s\\]{1,128}:[^:\s\\]{1,128}:(?P<secret>" + _VALUE + r")[ \t]*(?:\r?\n|\\[rn]|$)"
)
_PGPASS_PORT = re.compile(r":(?:\d{1,5}|\*):")
# What may stand before the host on its line: a JSON `\n`, a Read-tool prefix, a grep prefix,
# or the `+`/`-` of a unified diff line (an Edit's structuredPatch).
_LINE_PREFIX = re.compile(r"(?:\\n|→|\d\t|pgpass[:-]\d{1,7}[:-]|^[+-])[ \t]*$")


@dataclass(frozen=True, slots=True)
class PgpassRule:
    """Lines of a PostgreSQL password file, found from their `:port:` field."""

    name: str = "pgpass-password"
    kind: str = "pgpass-password"
    anchors: tuple[str, ...] = (":",)
    # `:` is in every line; `:port:db:user:` is not. On a raw line a field may hold JSON
    # escapes (`\uXXXX`, `\"`) but never a bare `"`, which ends the string: without that
    # rule every tool result Claude Code writes woke it (`"timestamp":"…T09:00:01.000Z",
    # "toolUseResult":{"stdout":` reads as `:00:` and two fields).
    gates: tuple[Gate, ...] = (
        Gate(
            r":(?:[0-9]{1,5}|\*):[^:\s\\]+:[^:\s\\]+:",
            raw=r':(?:[0-9]{1,5}|\*):(?:[^:\s"\\]|\\.)+:(?:[^:\s"\\]|\\.)+:',
        ),
    )
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = "postgresql.org/docs/current/libpq-pgpass.html"

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        # Searching for the port first is much faster than trying a line pattern everywhere:
        # `re` has no fast path for a pattern that starts with an alternation of line starts.
        resume = 0
        for port in _PGPASS_PORT.finditer(text):
            if port.start() < resume:
                continue
            line_start = text.rfind("\n", 0, port.start()) + 1
            host_start = self._host_start(text, line_start, port.start())
            if host_start < 0:
                continue
            line = _PGPASS_LINE.match(text, host_start)
            if line is None:
                continue
            resume = line.end()
            if not is_trivial(line.group("secret")):
                yield Hit(line.start("secret"), line.end("secret"), self.kind, self.name)

    @staticmethod
    def _host_start(text: str, line_start: int, port_at: int) -> int:
        """Where the host field begins, if what precedes it on the line is a line prefix."""
        host_at = port_at
        while host_at > line_start and text[host_at - 1] not in " \t:→\\+":
            host_at -= 1
        if host_at > line_start and text[host_at - 1] == "\\" and text[host_at] in "nrt":
            host_at += 1  # the `n` of a JSON `\n`
        prefix = text[line_start:host_at]
        if not prefix.strip() or _LINE_PREFIX.search(prefix):
            return host_at
        return -1


PGPASS_PASSWORD = PgpassRule()


def _not_docker_auth(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return True
    return b":" not in decoded


DOCKER_CONFIG_AUTH = PatternRule(
    name="docker-config-auth",
    kind="docker-registry-auth",
    pattern=r'(?<![\w-])\\?"auth\\?"\s*:\s*\\?"(?P<secret>[A-Za-z0-9+/]{6,8192}={0,2})\\?"',
    anchors=("auth",),
    reference="docs.docker.com/reference/cli/docker/login (config.json auths.*.auth is "
    "base64 user:password)",
    reject=_not_docker_auth,
    # "auth" is common; a JSON `"auth": "<base64>"` member is not.
    gates=(
        Gate(
            rf"auth\\?\"{WS}*:{WS}*\\?\"[A-Za-z0-9+/]{{6}}",
            raw=rf"auth\\*\"{WS}*:{WS}*\\*\"[A-Za-z0-9+/]{{6}}",
        ),
    ),
)


def _not_a_token(value: str) -> bool:
    return is_trivial(value) or not looks_token_like(value, min_length=12)


DOCKER_CONFIG_TOKEN = PatternRule(
    name="docker-config-token",
    kind="docker-registry-auth",
    pattern=r'\\?"(?:identitytoken|registrytoken)\\?"\s*:\s*\\?"(?P<secret>[^"\\\s]{12,8192})\\?"',
    flags=re.IGNORECASE,
    anchors=("identitytoken", "registrytoken"),
    reference="docs.docker.com/reference/cli/docker/login (identitytoken)",
    reject=_not_a_token,
)


def _npmrc_placeholder(value: str) -> bool:
    return is_trivial(value) or re.fullmatch(r"[A-Z][A-Z0-9_]{0,19}", value) is not None


NPMRC_AUTH = PatternRule(
    name="npmrc-auth",
    kind="npmrc-auth",
    pattern=r"(?<![\w-])_(?:authToken|auth|password)[ \t]{0,4}=[ \t]{0,4}[\"']?(?P<secret>"
    + r"(?:[^\s\\\"'`,;]|\\(?![nrt\"]))+"
    + r")",
    anchors=("_auth", "_password"),
    reference="docs.npmjs.com/cli/v10/configuring-npm/npmrc (auth-related configuration)",
    reject=_npmrc_placeholder,  # `_authToken=MYTOKEN` in documentation
    # `_auth` and `_password` start many names; followed by `=` they are rare.
    gates=(
        Gate(
            r"_(?:authtoken|auth|password)[ \t]{0,4}=",
            raw=r"_(?:authtoken|auth|password)(?:[ \t]|\\t){0,4}=",
        ),
    ),
)

RULES = (
    NETRC_PASSWORD,
    NETRC_GREP_PASSWORD,
    NETRC_CONTEXT_PASSWORD,
    PGPASS_PASSWORD,
    DOCKER_CONFIG_AUTH,
    DOCKER_CONFIG_TOKEN,
    NPMRC_AUTH,
)
