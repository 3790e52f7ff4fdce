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

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import is_trivial, looks_token_like

_SCHEMES = (
    r"postgres(?:ql)?|pgsql|mysql(?:x|2)?|mariadb|mongodb(?:\+srv)?|rediss?|valkeys?|amqps?|"
    r"mssql|sqlserver|jdbc:[a-z0-9]{2,20}|clickhouse|cockroachdb|oracle|db2|redshift|snowflake|"
    r"neo4j(?:\+s)?|bolt|couchbases?|cassandra|influxdb|elasticsearch|opensearch|memcached|nats|"
    r"mqtts?|kafka|ftps?|sftp|ssh|smtps?|imaps?|pop3s?|ldaps?|svn|webdavs?|davs?|socks[45]h?|"
    r"git\+https?|https?|wss?"
)

CONNECTION_STRING_PASSWORD = PatternRule(
    name="connection-string-password",
    kind="connection-string-password",
    pattern=r"(?:(?<![A-Za-z0-9+.-])|(?<=\\[nrt]))(?:"
    + _SCHEMES
    + r")://[^\s:@/?#\"'<>`\\]{0,256}:(?P<secret>[^\s/?\"'<>`\\]{1,256}?)@"
    # The host: a name or an address, then the end of the authority.
    + r"(?=[A-Za-z0-9_.\[\]-]{1,253}(?:[:/?#;,)}\]\s\"'`<>\\]|$))",
    flags=re.IGNORECASE,
    anchors=("://",),
    reference="RFC 3986 §3.2.1 (userinfo); postgresql.org libpq 'Connection URIs'; "
    "mongodb.com 'Connection String Formats'; gitleaks rules generic URL credentials",
    reject=is_trivial,
)

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
