"""Passwords and tokens given on a command line: `mysql -p'…'`, `--password=…`, `--token …`,
`curl -u user:pass`, `sshpass -p …`, `redis-cli -a …`, `docker login -p …`, `sqlcmd -P …`,
`ldapsearch -w …`, `openssl … -passin pass:…`, `keytool -storepass …`, `echo … | sudo -S`,
`zip -P …`, `7z -p…`, `openssl enc -k …`, `mosquitto_pub -P …`, `smbclient -U user%…`,
`sqlplus user/…@db`.

Short flags mean a password only for the tools that define them so (`-p` is a port for ssh and
psql, a parent flag for mkdir): each tool's manual is the reference. Long flags are matched for
any command. Only the value is the secret; `--password-stdin`, `--token-file` and references
(`$PASS`, `"$(cat token)"`) are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scrubber.detection.gates import WS, Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import (
    has_char_classes,
    is_trivial,
    looks_like_code,
    looks_like_locator,
    looks_token_like,
)

# The rest of one shell command: no newline (unless escaped), no `|`, `;` or `&&`.
_SAME_COMMAND = r"(?:[^\n|;&]|&(?!&)|\\\r?\n){0,600}?"
_VALUE = r"""(['"]?)(?P<secret>[^\s'"`]{1,512})\1(?=[\s;&|)]|$)"""


def _not_a_password(value: str) -> bool:
    # `--password -u x`: the next flag, not a value.
    flag = re.fullmatch(r"-[A-Za-z]|--[A-Za-z][\w-]*", value) is not None
    bracketed = value[0] in "<[{" or value[-1] in ">]}"  # `<password>`, `[PASSWORD]`
    wordless = not any(c.isalnum() for c in value)
    # Prose and manuals end a placeholder with punctuation: "-P password;", "[%PASSWORD]).".
    core = value.rstrip(".,;:)]}")
    trivial = is_trivial(value) or (core != value and (not core or is_trivial(core)))
    return trivial or flag or bracketed or wordless or "=" in value.rstrip("=")


def _not_a_flag_value(value: str) -> bool:
    # A lone lower-case word after `--password` is prose more often than a password
    # ("credentials via the --username and --password options", "the --api-key flag,"); a
    # path or a URL names where the secret is (`--token ./token.txt`).
    word = value.rstrip(",.;:!?")
    prose = word.isalpha() and word.islower()
    return _not_a_password(value) or prose or looks_like_locator(value)


def _word_gate(tools: str) -> Gate:
    """A tool's name standing as a word (what the patterns' look-arounds demand), case as
    written: after the start, a non-word character or a JSON escape (`\\n7z`), and before a
    character that is no word's (timestamps end in `7Z"`, base64 holds `7z/`)."""
    return Gate(
        r"(?:^|[^A-Za-z0-9_/.\\-]|\\[nrt])(?:" + tools + r")[^A-Za-z0-9_/-]", caseless=False
    )


def _phrase_gate(tools: str) -> Gate:
    """A tool named in two words (`docker login`): both words, with the whitespace between them
    as decoded text or a raw JSON line writes it. The second word alone (`login`) is in every
    web app's code and logs: it woke the rule on a fifth of the lines of real transcripts."""
    return Gate("(?:" + tools.replace(r"\s+", WS + "+") + ")")


def _tool_flag(
    name: str, tools: str, flag: str, anchors: tuple[str, ...], reference: str
) -> PatternRule:
    return PatternRule(
        name=name,
        kind="cli-password",
        pattern=r"(?<![\w/.-])(?:" + tools + r")(?![\w-])" + _SAME_COMMAND + r"\s" + flag + _VALUE,
        anchors=anchors,
        # The tool's name as a word of its own: `rar` and `7z` alone also stand inside
        # `library` and base64 (903 of 6,608 lines of the bench transcript woke this rule).
        # A name of two words (`docker login`) as a phrase.
        gates=(_phrase_gate(tools) if "\\s" in tools else _word_gate(tools),),
        reference=reference,
        reject=_not_a_password,
    )


MYSQL_PASSWORD = _tool_flag(
    "mysql-password-flag",
    r"mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mariadb(?:-dump)?",
    r"-p",  # attached only: `-p secret` makes mysql prompt and read `secret` as a database name
    ("mysql", "mariadb"),
    "dev.mysql.com/doc/refman/8.0/en/connection-options.html (--password, -p)",
)
SSHPASS_PASSWORD = _tool_flag(
    "sshpass-password-flag", r"sshpass", r"-p\s*", ("sshpass",), "sshpass(1) -p password"
)
REDIS_CLI_PASSWORD = _tool_flag(
    "redis-cli-password-flag",
    r"redis-cli|valkey-cli",
    r"(?:-a|--pass)\s+",
    ("redis-cli", "valkey-cli"),
    "redis.io/docs/latest/develop/tools/cli (-a password)",
)
REGISTRY_LOGIN_PASSWORD = _tool_flag(
    "registry-login-password-flag",
    r"(?:docker|podman|buildah|skopeo|nerdctl|oras|crane|helm\s+registry|az)\s+login",
    r"-p\s+",
    ("login",),
    "docs.docker.com/reference/cli/docker/login (-p, --password); az login (-p)",
)
MONGO_PASSWORD = _tool_flag(
    "mongo-password-flag",
    r"mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport",
    r"-p\s+",
    ("mongo",),
    "mongodb.com/docs/mongodb-shell/reference/options (-p, --password)",
)
SQLCMD_PASSWORD = _tool_flag(
    "sqlcmd-password-flag",
    r"sqlcmd|bcp|osql|isql",
    r"-P\s*",
    ("sqlcmd", "bcp", "osql", "isql"),
    "learn.microsoft.com sqlcmd utility (-P password)",
)
LDAP_PASSWORD = _tool_flag(
    "ldap-password-flag",
    r"ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)",
    r"-w\s+",
    ("ldap",),
    "ldapsearch(1) -w passwd",
)

ZIP_PASSWORD = _tool_flag(
    "zip-password-flag",
    r"zip|unzip|zipcloak|funzip",
    r"-P\s+",
    ("zip",),
    "zip(1) -P password; unzip(1) -P password",
)
SEVEN_ZIP_PASSWORD = _tool_flag(
    "7z-password-flag",
    r"7z|7za|7zr|7zz|rar|unrar",
    r"-p",  # attached: `-pSECRET`; a bare `-p` prompts
    ("7z", "rar"),
    "7-Zip command line -p{Password} switch; rar(1) -p<pwd>",
)
OPENSSL_ENC_PASSWORD = _tool_flag(
    "openssl-enc-password-flag",
    r"openssl",
    r"-k\s+",
    ("openssl",),
    "openssl-enc(1) -k password",
)
MOSQUITTO_PASSWORD = _tool_flag(
    "mosquitto-password-flag",
    r"mosquitto_pub|mosquitto_sub|mosquitto_rr",
    r"-P\s+",
    ("mosquitto_",),
    "mosquitto.org/man/mosquitto_pub-1.html (-P password)",
)

# `smbclient //host/share -U user%password` (smbclient(1): -U [DOMAIN\]USERNAME[%PASSWORD]).
SMB_USER_PASSWORD = PatternRule(
    name="smb-user-password",
    kind="cli-password",
    pattern=r"(?<![\w/.-])(?:smbclient|rpcclient|smbget|smbmap|smbcacls|smbcquotas)(?![\w-])"
    + _SAME_COMMAND
    + r"\s(?:-U|--user)(?:=|\s*)['\"]?[^\s%'\"]{1,256}%(?P<secret>[^\s'\"`]{1,512})",
    anchors=("smb", "rpcclient"),
    gates=(_word_gate(r"smbclient|rpcclient|smbget|smbmap|smbcacls|smbcquotas"),),
    reference="smbclient(1) -U|--user=[DOMAIN\\]USERNAME[%PASSWORD]",
    reject=_not_a_password,
)

# `sqlplus scott/password@orcl` (Oracle SQL*Plus: CONNECT username/password@connect_identifier).
SQLPLUS_PASSWORD = PatternRule(
    name="sqlplus-password",
    kind="cli-password",
    pattern=r"(?<![\w/.-])sqlplus(?:\s+-\w+)*\s+['\"]?[A-Za-z][\w$#]{0,127}/"
    r"(?P<secret>[^\s@/'\"`]{1,256})@",
    flags=re.IGNORECASE,
    anchors=("sqlplus",),
    reference="docs.oracle.com SQL*Plus User's Guide, CONNECT username/password@connect_identifier",
    reject=_not_a_password,
)

_LONG_FLAGS = (
    "password", "passwd", "pass", "db-password", "admin-password", "master-password",
    "registry-password", "http-password", "ftp-password", "proxy-password", "client-secret",
    "secret-key", "secret-access-key", "token", "auth-token", "access-token", "api-key",
    "apikey", "api-token", "passphrase", "storepass", "keypass", "oauth2-bearer",
)  # fmt: skip

LONG_FLAG_SECRET = PatternRule(
    name="cli-long-flag-secret",
    kind="cli-password",
    pattern=r"(?<![\w-])--(?:"
    + "|".join(sorted(_LONG_FLAGS, key=len, reverse=True))
    + r")(?:=|\s+)"
    + _VALUE,
    flags=re.IGNORECASE,
    anchors=tuple("--" + f for f in _LONG_FLAGS),
    reference="GNU long-option convention; e.g. mysql --password, wget --http-password, "
    "huggingface-cli login --token, oc login --token, curl --oauth2-bearer",
    reject=_not_a_flag_value,
)

# keytool -storepass/-keypass, openssl -passin/-passout pass:…, -pass pass:…
SINGLE_DASH_SECRET = PatternRule(
    name="cli-single-dash-secret",
    kind="cli-password",
    pattern=r"(?<![\w-])-(?:(?:(?:src|dest|new)?storepass|(?:new)?keypass)\s+|"
    r"pass(?:in|out)?\s+pass:)" + _VALUE,
    anchors=("storepass", "keypass", "pass:"),
    reference="keytool(1) -storepass/-keypass; openssl-passphrase-options(1) pass:password",
    reject=_not_a_password,
)

_CURL = r"(?<![\w/.-])(?:curl|wget|http|xh)(?![\w-])" + _SAME_COMMAND
_USER_FLAG = r"\s(?:-u|--user|-U|--proxy-user)(?:=|\s*)"
_Q = r"\\?['\"]?"
# `http` and `xh` are everywhere; the `-u user:` flag is not.
_USER_FLAG_GATES = (
    Gate(
        rf"{WS}(?:-u|--user|--proxy-user)(?:=|{WS}*)(?:\\?['\"])?[^\s:'\"\\]*(?:\\?['\"])?:",
        raw=rf"{WS}(?:-u|--user|--proxy-user)(?:=|{WS}*)(?:\\{{0,3}}['\"])?[^\s:'\"]*(?:\\{{0,3}}['\"])?:",
    ),
)


def _curl_user_rule(
    name: str, password: str, reject: Callable[[str], bool], reference: str
) -> PatternRule:
    """`curl -u user:PASSWORD`, the password written as `password` (a regex holding the
    `secret` group)."""
    return PatternRule(
        name=name,
        kind="cli-password",
        pattern=_CURL
        + _USER_FLAG
        + _Q
        + r"\{?[^\s:'\"\\{}\[]{0,256}\}?"
        + _Q
        + ":"
        + _Q
        + password
        + _Q
        + r"(?=[\s;&|)\\]|$)",
        anchors=("curl", "wget", "http", "xh"),
        reference=reference,
        reject=reject,
        gates=_USER_FLAG_GATES,
    )


CURL_USER_PASSWORD = _curl_user_rule(
    "curl-user-password",
    r"(?P<secret>[^\s'\"\\`]{1,512})",
    _not_a_password,
    "curl.se/docs/manpage.html#-u (-u user:password); gitleaks rule curl-auth-user",
)


def _not_a_braced_password(value: str) -> bool:
    # `{password}`, `{pw}`, `{self.password}`: a template's slot; a generated value in braces
    # (`{Zq5kV…}`, as some API docs write the values to paste) is not.
    return _not_a_password(value) or not has_char_classes(value, 2) or looks_like_code(value)


CURL_USER_BRACED_PASSWORD = _curl_user_rule(
    "curl-user-braced-password",
    r"\{(?P<secret>[^\s'\"\\`{}]{1,512})\}",
    _not_a_braced_password,
    "curl.se/docs/manpage.html#-u (-u user:password)",
)


def _not_a_key_as_user(value: str) -> bool:
    # A user name, an email address or a slug (`elastic`, `deploy-bot`, `me@example.com`) is
    # not a secret; a generated key is.
    return (
        _not_a_password(value)
        or "@" in value
        or looks_like_code(value)
        or not looks_token_like(value, 16)
        or re.fullmatch(r"(?:[A-Za-z]+|\d+)(?:[-_.](?:[A-Za-z]+|\d+))*", value) is not None
    )


# Many HTTP APIs take the API key as the basic-auth user name, with an empty or dummy password:
# Stripe `curl -u sk_test_…:`, Freshdesk `-u APIKEY:X`, Mailchimp `anystring:KEY`, Chargebee,
# Recurly, Close (their API references' curl examples).
CURL_USER_KEY = PatternRule(
    name="curl-user-key",
    kind="cli-password",
    pattern=_CURL + _USER_FLAG + _Q + r"\{?(?P<secret>[^\s:'\"\\{}\[]{16,256})\}?" + _Q + ":",
    anchors=("curl", "wget", "http", "xh"),
    reference="curl.se/docs/manpage.html#-u; stripe.com/docs/api/authentication (-u key:)",
    reject=_not_a_key_as_user,
    gates=_USER_FLAG_GATES,
)

SUDO_STDIN_PASSWORD = PatternRule(
    name="sudo-stdin-password",
    kind="cli-password",
    pattern=r"(?<![\w-])echo\s+(?:-e\s+|-n\s+)?(['\"]?)(?P<secret>[^\s'\"|]{1,256})\1\s*\|\s*"
    r"sudo\s+(?:-\w+\s+)*-S",
    anchors=("sudo",),
    reference="sudo(8) -S (read the password from standard input)",
    reject=_not_a_password,
)

RULES = (
    MYSQL_PASSWORD,
    SSHPASS_PASSWORD,
    REDIS_CLI_PASSWORD,
    REGISTRY_LOGIN_PASSWORD,
    MONGO_PASSWORD,
    SQLCMD_PASSWORD,
    LDAP_PASSWORD,
    ZIP_PASSWORD,
    SEVEN_ZIP_PASSWORD,
    OPENSSL_ENC_PASSWORD,
    MOSQUITTO_PASSWORD,
    SMB_USER_PASSWORD,
    SQLPLUS_PASSWORD,
    LONG_FLAG_SECRET,
    SINGLE_DASH_SECRET,
    CURL_USER_PASSWORD,
    CURL_USER_BRACED_PASSWORD,
    CURL_USER_KEY,
    SUDO_STDIN_PASSWORD,
)
