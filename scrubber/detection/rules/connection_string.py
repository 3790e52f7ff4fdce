"""Passwords in URLs: `scheme://user:password@host` for databases, brokers, caches, mail and
file servers, and HTTP basic auth; and credentials passed as URL query parameters.

Only the password is the secret: the user name and host stay readable. The userinfo syntax is
RFC 3986 §3.2.1; vendors document the same shape for their connection strings (PostgreSQL
libpq "Connection URIs", MySQL "Connecting Using URI-Like Strings", MongoDB "Connection String
Formats" incl. mongodb+srv, Redis `redis://:password@host`, RabbitMQ "URI Specification").
People paste passwords with raw `@`, `#` or `!` in them, so the password runs to the last `@`
that is followed by a plausible host. An empty password (`user:@host`) and references such as
`${DB_PASSWORD}` are not secrets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_trivial, looks_token_like

_SCHEMES = (
    r"postgres(?:ql)?|pgsql|mysql(?:x|2)?|mariadb|mongodb(?:\+srv)?|rediss?|valkeys?|amqps?|"
    r"mssql|sqlserver|jdbc:[a-z0-9]{2,20}|clickhouse|cockroachdb|oracle|db2|redshift|snowflake|"
    r"neo4j(?:\+s)?|bolt|couchbases?|cassandra|influxdb|elasticsearch|opensearch|memcached|nats|"
    r"mqtts?|kafka|ftps?|sftp|ssh|smtps?|imaps?|pop3s?|ldaps?|svn|webdavs?|davs?|socks[45]h?|"
    r"git\+https?|https?|wss?"
)

# The scheme, just before `://`, at a word start (or after a JSON `\n`). A `+` may precede it:
# the first character of a diff line in an Edit's patch.
_SCHEME_BEFORE = re.compile(
    r"(?:^|(?<=[^A-Za-z0-9.-])|(?<=\\[nrt]))(?:" + _SCHEMES + r")\Z", re.IGNORECASE
)
_SCHEME_LOOKBACK = 40
# After `://`: the user, a colon, the password up to the last `@` that is followed by a host and
# the end of the authority (greedy: a raw `@` or `#` inside the password, as in a generated
# `.git-credentials` line, is part of it).
_USERINFO = re.compile(
    r"://[^\s:@/?#\"'<>`\\]{0,256}:(?P<secret>[^\s/?\"'<>`\\]{1,256})@"
    r"(?=[A-Za-z0-9_.\[\]-]{1,253}(?:[:/?#;,)}\]\s\"'`<>\\]|$))"
)


@dataclass(frozen=True, slots=True)
class ConnectionStringRule:
    """The password of `scheme://user:password@host`.

    Found from each `://` (a literal `re` finds fast) rather than with one pattern that starts
    with an alternation of schemes, which `re` would try at every position of the text.
    """

    name: str = "connection-string-password"
    kind: str = "connection-string-password"
    anchors: tuple[str, ...] = ("://",)
    # Every URL has `://`; only one with `user:password@` can hold a password. The user part
    # holds no `"` or `\\` (so none on a raw line either), the password no `/`.
    gates: tuple[Gate, ...] = (Gate(r'://[^\s@/"]*:[^\s/]+@'),)
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = (
        "RFC 3986 §3.2.1 (userinfo); postgresql.org libpq 'Connection URIs'; mongodb.com "
        "'Connection String Formats'; gitleaks generic URL-credential rules"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        at = text.find("://")
        while at >= 0:
            userinfo = _USERINFO.match(text, at)
            if userinfo is not None and _SCHEME_BEFORE.search(
                text, max(0, at - _SCHEME_LOOKBACK), at
            ):
                secret = userinfo.group("secret")
                if not is_trivial(secret):
                    yield Hit(
                        userinfo.start("secret"), userinfo.end("secret"), self.kind, self.name
                    )
            at = text.find("://", at + 3)


CONNECTION_STRING_PASSWORD = ConnectionStringRule()

_QUERY_NAMES = (
    "password", "passwd", "pwd", "pass", "secret", "client_secret", "access_token",
    "refresh_token", "id_token", "auth_token", "api_key", "apikey", "api-key", "token", "key",
    "sig", "x-amz-signature", "x-amz-security-token", "x-goog-signature",
)  # fmt: skip


def _not_a_query_secret(value: str) -> bool:
    return is_trivial(value) or not looks_token_like(value, min_length=6)


# `?password=…`, `&access_token=…`, Azure SAS `&sig=…`, S3 presigned `X-Amz-Signature=…`: the
# parameter must be a whole name (`page_token=` and `next_token=` are pagination cursors).
URL_QUERY_SECRET = PatternRule(
    name="url-query-secret",
    kind="url-query-secret",
    pattern=r"[?&;](?:"
    + "|".join(re.escape(n) for n in sorted(_QUERY_NAMES, key=len, reverse=True))
    + r")=(?P<secret>[^&#;\s\"'<>`\\]{4,2048})",
    flags=re.IGNORECASE,
    anchors=tuple(n + "=" for n in _QUERY_NAMES),
    reference="RFC 6750 §2.3 (access_token query parameter); Azure Storage 'Create a service "
    "SAS' (sig); AWS SigV4 query authentication (X-Amz-Signature)",
    reject=_not_a_query_secret,
)

RULES = (CONNECTION_STRING_PASSWORD, URL_QUERY_SECRET)
