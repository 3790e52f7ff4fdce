"""What a name says about the value assigned to it: how strongly it names a secret
(`classify_name`), judged by its words (snake, kebab, dotted, camelCase) against the word lists
below."""

from __future__ import annotations

import functools
import itertools
from enum import Enum

from scrubber.detection.rules.values import name_words

# A name is at most this long: a longer run of name characters is base64 or a hash.
MAX_NAME = 80


class Strength(Enum):
    """How much the name alone says: a password-like name takes any value that is not obviously
    something else; a token- or key-like name needs a value shaped like a credential."""

    STRONG = "strong"
    MEDIUM = "medium"
    KEY = "key"  # `*_KEY`: also names cache keys, sort keys, primary keys…


_STRONG_WORDS = frozenset(
    {"password", "passwd", "pwd", "passphrase", "secret", "credential", "credentials", "creds"}
)
# Upper-case names run words together (`PGPASSWORD`, `AUTH_CLIENTSECRET`, `APIKEY`).
_STRONG_SUFFIXES = (
    "password", "passwd", "passphrase", "secret", "credential", "credentials", "pwd",
)  # fmt: skip
_MEDIUM_SUFFIXES = ("token", "apikey", "secretkey", "accesskey")
# Run-together names of keys that are credentials (`AZURESTORAGEACCOUNTKEY`, `SUBSCRIPTIONKEY`,
# `*SKEY` for a secret key): the service's own documented names, written as one word.
_KEY_SUFFIXES = (
    "accountkey", "storagekey", "masterkey", "adminkey", "authkey", "appkey", "clientkey",
    "licensekey", "licencekey", "signingkey", "subscriptionkey", "querykey", "functionkey",
    "servicekey", "sharedkey", "encryptionkey", "devkey", "webhookkey", "skey", "userkey",
    "projectkey", "sdkkey", "writekey", "ingestkey", "restkey",
)  # fmt: skip
_STRONG_LAST_WORDS = frozenset({"pass", "pw"})  # `DB_PASS`, `SMTP_PW`; not `pass_through`
_WEAK_ALONE = frozenset({"pass", "pw", "credentials", "creds"})
_MEDIUM_WORDS = frozenset({"token", "apikey", "auth", "accesstoken", "authtoken", "secretkey"})
_MEDIUM_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key")})
# `GITHUB_PAT`, `ADO_PAT`; elsewhere `_PAT` is as often a pattern (`_HEX_PAT`).
_PAT_OWNERS = frozenset(
    {
        "github", "gh", "gitlab", "gl", "ado", "azure", "devops", "bitbucket", "personal",
        "access", "hf", "api", "git", "vsts", "atlassian", "jira",
    }
)  # fmt: skip
# The last word says the value is about the secret, not the secret: `password_hash`, (pragma: allowlist secret)
# `token_type`, `secret_name`, `auth_url`, `api_key_id`.
_NOT_SECRET_LAST_WORDS = frozenset(
    {
        "name", "names", "id", "ids", "arn", "ref", "refs", "path", "paths", "file", "files",
        "dir", "url", "uri", "urls", "endpoint", "type", "types", "kind", "length", "len",
        "count", "size", "version", "prefix", "suffix", "field", "fields", "env", "var", "vars",
        "header", "param", "params", "policy", "store", "manager", "provider", "mode",
        "enabled", "enable", "disabled", "required", "ttl", "expiry", "expires", "expiration",
        "expired", "timeout", "hash", "hashed", "digest", "method", "methods", "scheme",
        "strategy", "backend", "plugin", "flow", "domain", "server", "host", "hostname", "port",
        "user", "username", "email", "scope", "scopes", "audience", "issuer", "realm",
        "callback", "redirect", "config", "configuration", "options", "settings", "service",
        "handler", "module", "class", "index", "rule", "rules", "label", "description", "hint",
        "placeholder", "help", "title", "text", "message", "msg", "error", "errors", "prompt",
        "input", "button", "form", "validation", "regex", "pattern", "format", "min", "max",
        "limit", "limits", "budget", "usage", "used", "estimate", "rotation", "location",
        "region", "bucket", "table", "column", "source", "template", "generator", "validator",
        "reset", "forgot", "confirm", "changed", "strength", "visible", "visibility", "toggle",
        "show", "hide", "reveal", "icon", "page", "screen", "view", "route", "link", "query",
        "schema", "model", "request", "response", "status", "state", "result", "info",
        "metadata", "num", "number", "total", "cost", "price", "tokens", "fingerprint",
        "algorithm", "alg", "algo", "encoding", "provided", "present", "exists",
        "set", "missing", "invalid", "valid", "check", "checks", "lifetime", "age",
        "storage", "cache", "helper", "helpers", "util", "utils", "key_id", "keyid", "bits",
        "rounds", "salt", "iterations", "selector", "file_path", "filepath",
        "mount", "volume", "annotation", "sha", "checksum", "public",
        "pub", "cert", "certificate", "labels", "level", "command", "cmd", "script",
        "complexity", "requirements", "history", "reuse", "attempts", "lockout",
    }
)  # fmt: skip
# First words that make a `…token` name something other than a credential: pagination and
# sync cursors (`NextToken`, `page_token`), AWS change and idempotency tokens (`ChangeToken`,
# `ClientToken`), tokenizer special tokens (`eos_token`), token counters (`max_tokens`).
_TOKEN_QUALIFIERS = frozenset(
    {
        "next", "prev", "previous", "page", "continuation", "pagination", "cursor", "sync",
        "resume", "marker", "change", "idempotency", "eos", "bos", "pad", "unk", "sep", "cls",
        "mask", "special", "stop", "start", "end", "input", "output", "max", "min", "num",
        "total", "prompt", "completion", "cache", "reasoning", "thinking", "lock", "task",
        "block", "offending", "current", "last", "first", "request", "action", "update",
        "lifecycle", "notification", "verification", "confirmation", "continue",
    }
)  # fmt: skip
# Words before a final `key` that make it a key of a map, a table or a keyboard, not a secret.
_KEY_NOT_SECRET = frozenset(
    {
        "public", "pub", "primary", "foreign", "sort", "partition", "range", "hash", "cache",
        "redis", "object", "s3", "idempotency", "dedup", "dedupe", "lock", "map", "dict",
        "unique", "composite", "lookup", "row", "group", "routing", "message", "i18n",
        "translation", "label", "shortcut", "hot", "keyboard", "sequence", "tracking", "index",
        "search", "cursor", "next", "page", "continuation", "product", "react", "list", "item",
        "entry", "column", "field", "sign", "storage", "bucket", "file", "path", "cert",
        "ssh", "gpg", "pgp", "host", "known", "ca", "root", "order", "query",
        "config", "setting", "settings", "state", "store", "registry", "metric", "event",
        "tag", "attribute", "attr", "property", "prop", "meta", "menu", "nav", "tab", "route",
        "request", "response", "dataset", "model", "schema", "type",
        "enum", "locale", "lang", "language", "component", "element", "node", "child", "parent",
        "result", "limit", "input", "output", "natural", "uri", "url", "name", "id",
    }
)  # fmt: skip
# Public keys and publishable tokens; anti-CSRF tokens (per-session form nonces, not credentials).
_NOT_SECRET_WORDS = frozenset(
    {"public", "publishable", "pub", "csrf", "xsrf", "certificate", "cert", "ca", "crt"}
)


def _strong_stem(word: str) -> bool:
    """`secrete`, `passwordd`: a strong word with one or two letters more (typos), not a word
    of its own (`secretary`, `passport`) nor a plural."""
    if word.endswith("s"):
        return False  # `secrets:`, `passwords:` name collections (a CI file's `secrets: inherit`)
    return any(word.startswith(stem) and len(word) <= len(stem) + 2 for stem in _STRONG_STEMS)


_STRONG_STEMS = ("secret", "password", "passwd")


def is_bare_key(name: str) -> bool:
    """A lone `key` (`Using Key=…` in a log line): it names a credential only when assigned
    with `=` a generated-looking value, which the rule judges on the value (rule.py)."""
    return name.lower() == "key"


def may_name_secret(name: str) -> bool:
    """Whether the rule may report a value assigned to `name`: what the raw-line precheck
    (precheck.py) keeps, so it must hold for every name the rule can report."""
    return classify_name(name) is not None or is_bare_key(name)


@functools.lru_cache(maxsize=4096)
def classify_name(name: str) -> Strength | None:
    """How strongly a name says that its value is a secret; None when it does not."""
    words = name_words(name)
    if words[-1:] == ["nopasswd"]:
        return None  # a sudoers tag (`NOPASSWD: ALL`), not a password's name
    while len(words) > 1 and words[-1].isdigit():
        words = words[:-1]  # `salesforce_key1`, `sumoKey2`: numbered copies of one name
    if not words or words[-1] in _NOT_SECRET_LAST_WORDS:
        return None
    if any(w in _NOT_SECRET_WORDS for w in words):
        return None
    if len(words) >= 2 and "_".join(words[-2:]) in _NOT_SECRET_LAST_WORDS:
        return None
    if len(words) == 1 and words[0] in _WEAK_ALONE:
        # `credentials: 'include'` (fetch), `'pass': 'bandpass'`: alone, these words need a
        # value shaped like a credential.
        return Strength.MEDIUM
    if any(w in _STRONG_WORDS or w.endswith(_STRONG_SUFFIXES) or _strong_stem(w) for w in words):
        return Strength.STRONG
    if words[-1] in _STRONG_LAST_WORDS:
        return Strength.STRONG
    if any(w in _MEDIUM_WORDS or w.endswith(_MEDIUM_SUFFIXES) for w in words):
        if any(w in _TOKEN_QUALIFIERS for w in words[:-1]) or words in (
            ["client", "token"],
            ["session", "token"],
        ):
            return None  # pagination cursors, idempotency tokens, tokenizer specials, counters
        return Strength.MEDIUM
    if words[-1] == "pat" and len(words) >= 2 and words[-2] in _PAT_OWNERS:
        return Strength.MEDIUM
    if any(pair in _MEDIUM_PAIRS for pair in itertools.pairwise(words)):
        return Strength.MEDIUM
    if words[-1] == "key" and len(words) >= 2 and words[-2] not in _KEY_NOT_SECRET:
        return Strength.KEY
    if words[-1] != "key" and words[-1].endswith(_KEY_SUFFIXES):
        return Strength.KEY
    return None
