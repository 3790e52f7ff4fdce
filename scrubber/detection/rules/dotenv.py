"""Values assigned to credential-like names: a `DB_PASSWORD` line of a `.env` file,
`export API_KEY="…"`, `"client_secret": "…"`, YAML `password: …`, `token = '…'`,
`<password>…</password>`, `define('DB_PASSWORD', '…')`.

The name decides that a value is a secret, so a weak password counts (`hunter2` as a
`DB_PASSWORD`). The hard part is precision on what Claude Code reads and runs every day: source code
(`token = get_token()`, `password: str`, `password=password`), model usage counters
(`max_tokens: 1024`, `"output_tokens": 57`), UI strings (`"password": "Enter your password"`),
references (`${DB_PASSWORD}`, `{{ secrets.TOKEN }}`) and keys that name something else
(`primary_key`, `public_key`, `token_type`, `secret_name`). Names are split into words
(snake, kebab, dotted, camelCase) and judged by those words; values are judged by their quoting
and shape. Where the scanner knows the text is a credential source (a `.env` read, an env
dump), any non-trivial value under such a name is taken.

Formats: dotenv (github.com/motdotla/dotenv "Rules"), POSIX shell assignment, YAML 1.2 block
mappings, TOML, INI, JSON, Python/JS/Go/PHP assignments. Rule of thumb shared with detect-secrets
KeywordDetector and gitleaks generic-api-key, written independently.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import AnyStr

from scrubber.detection.detector import PLAIN, ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import QUOTE_RAW, Gate
from scrubber.detection.rules.credential_pairs import companions_near
from scrubber.detection.rules.values import (
    has_char_classes,
    is_filler,
    is_public_material,
    is_pure_identifier,
    is_trivial,
    looks_like_code,
    looks_like_locator,
    looks_like_template_or_regex,
    looks_token_like,
    name_words,
    quoted_credential_span,
)

KIND = "dotenv-value"


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

_MEDIUM_KEYWORDS = r"(?:token|key|auth|_pat)"
_TAIL = r"[a-z0-9_.-]{0,80}"


def _operators(form: str) -> tuple[str, str, str]:
    """What must follow a name for this rule to take a value (outside a credential source,
    where every string is read whole), as regex text for decoded text (`text`) or a raw JSONL
    line (`raw`): for a STRONG name, an operator the value reader accepts; for a MEDIUM or KEY
    name, the operator and then at least 8 characters with no space (such values must be
    credential-shaped). A name holding `pass`, `pwd`, `secret`, `cred` or ending in `pw` may
    be STRONG;
    any other name is MEDIUM or KEY. So `token: Session` and `"input_tokens": 57` are passed
    over, `password: …` and `api_key = "…"` are not."""
    # (quote, space or tab, a value character, a character of an identifier or of an
    # annotation's brackets): a value holds no newline (`accept_value`), so on a raw line its
    # characters are bytes other than a space and escapes other than `\\n`.
    if form == "text":
        q, t, v = r"""\\?["'`]""", r"[ \t]", r"[^ \n]"
        ident, inner = r"(?:[a-z0-9_.]|[\x80-\xff])", r"[^\]\n]"
    else:
        q, t, v = QUOTE_RAW, r"(?:[ \t]|\\t)", r"(?:[^ \\]|\\[^n])"
        ident, inner = r"(?:[a-z0-9_.]|[\x80-\xff]|\\u[0-9a-f]{4})", r"(?:[^\]\\]|\\[^n])"
    closed = rf"(?:{q})?\]?\??{t}{{0,8}}"  # `"api_key"`, `ENV["TOKEN"]`, `token?`
    strong = (
        rf"(?:{closed}(?::{{0,3}}=|[?+]=|=(?:[^=~]|$)|:{t}|:{t}{{0,4}}[a-z_])|"
        rf"{q}\]?\??{t}{{0,8}}:|{q}{t}{{0,4}},|>)"
    )
    # The value may open with a quote and spaces (`" abc "`) and an authentication scheme
    # (`"Bearer abc"`): `_credential_part` takes what follows them.
    scheme = rf"(?:{q}{t}{{0,4}})?(?:(?:bearer|basic|token|bot|digest|ssws|apikey|key){t}{{1,4}})?"
    value = rf"{t}{{0,16}}{scheme}{v}{{8}}"
    medium = (
        rf"(?:{closed}(?::{{0,3}}=|[?+]=|=|:{t})|{q}\]?\??{t}{{0,8}}:|{q}{t}{{0,4}},|>){value}"
        r"|:[a-z0-9+/=_-]{20}"  # `…AccessKey:TP+G/…`: glued, judged by `_glued_credential`
    )
    # `API_KEY: str = "…"`: an annotation between the name and `=` (`_SEPARATOR`'s: an
    # identifier, UTF-8 or escaped, then maybe `[…]` on the same line; hyperscan refuses the
    # bounded repeats of the rule's own pattern here, so the gate leaves them unbounded).
    annotated = rf"{closed}:{t}{{0,4}}[a-z_]{ident}*(?:\[{inner}*\])?{t}{{0,4}}={value}"
    return strong, medium, annotated


def _assignment_gates() -> tuple[Gate, ...]:
    """STRONG, MEDIUM, MEDIUM with an annotation (in that order: see `_GATE_REACH`)."""
    text, raw = _operators("text"), _operators("raw")
    # `pw` makes a name STRONG only as its last word (`SMTP_PW`, `dbPw`), so nothing may
    # follow it; base64 is full of `pw` followed by other letters.
    strong = r"(?:(?:pass|pwd|secret|cred)" + _TAIL + "|pw)"
    medium = _MEDIUM_KEYWORDS + _TAIL
    return (
        Gate(rf"{strong}{text[0]}", rf"{strong}{raw[0]}"),
        Gate(rf"{medium}(?:{text[1]})", rf"{medium}(?:{raw[1]})"),
        Gate(rf"{medium}(?:{text[2]})", rf"{medium}(?:{raw[2]})"),
    )


# Where to look: any of these (case-insensitively) inside a name.
# A keyword inside a name, the rest of the name, and the start of an operator: cheap enough to
# run on every string, and it skips the many keywords of prose and code that assign nothing.
# It runs on the lower-cased text (a case-sensitive alternation is several times faster than
# an IGNORECASE one in `re`), falling back to IGNORECASE when lower-casing changes the length.
# (The scanner's gates, `_operators`, are stricter; they decide which parts of a long text
# this rule reads at all.)
_CANDIDATE_SOURCE = r"""(?:pass|pwd|secret|token|key|auth|cred|_pw|_pat)(?P<tail>[a-z0-9_.-]{0,80})
    \\?["'`]?\]?\??[ \t]{0,8}[:=>?+,]"""
_CANDIDATE_LOWER = re.compile(_CANDIDATE_SOURCE, re.VERBOSE)
_CANDIDATE_ANY_CASE = re.compile(_CANDIDATE_SOURCE, re.VERBOSE | re.IGNORECASE)
# The same on a raw JSONL line (lower-cased bytes): a quote is escaped there, a tab is `\t`.
_RAW_CANDIDATE = re.compile(
    rb"(?:pass|pwd|secret|token|key|auth|cred|_pw|_pat)(?P<tail>[a-z0-9_.-]{0,80})"
    rb"""(?:\\{1,7}"|\\{0,7}['`])?\]?\??(?:[ \t]|\\t){0,8}[:=>?+,]"""
)
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")

# How far before the end of each gate's match (in `_assignment_gates` order) the operator a
# candidate ends with may be: a STRONG gate ends at most 5 characters after it; a MEDIUM one
# after 16 spaces, a quote, 4 spaces, a scheme of up to 6 letters and 4 spaces, and 8
# characters of value; an annotated one after an annotation of up to 126 characters as well;
# rounded up. On a raw line, escapes (`\t` for a tab) take two bytes.
_GATE_REACH = (12, 56, 194)
_GATE_REACH_RAW = (24, 112, 548)
# How much longer than its operator's distance a candidate may start before a gate match's
# end: a keyword, an 80-character tail, a closing quote and bracket, 8 spaces.
_CANDIDATE_SPAN = 110


def _near_candidates(
    pattern: re.Pattern[AnyStr],
    subject: AnyStr,
    events: Iterable[tuple[int, int]],
    reaches: Sequence[int],
) -> Iterator[re.Match[AnyStr]]:
    """Candidates whose operator ends at most the gate's reach before a gate match's end: the
    only ones a gate match can stand for. In order, each once."""
    spans: list[list[int]] = []
    for end, gate in sorted(events):
        low = max(0, end - reaches[gate] - _CANDIDATE_SPAN)
        if spans and low <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([low, end])
    limits = sorted((end, end - reaches[gate]) for end, gate in events)
    ends = [end for end, _ in limits]
    longest = max(reaches)
    for low, high in spans:
        for candidate in pattern.finditer(subject, low, min(high, len(subject))):
            at = candidate.end()
            # Some gate match ends at or after this operator, close enough to it.
            for j in range(bisect.bisect_left(ends, at), len(limits)):
                end, nearest = limits[j]
                if end - at > longest:
                    break
                if nearest <= at:
                    yield candidate
                    break


_MAX_RAW_LINE = 16384


def _escaped(data: bytes, at: int) -> bool:
    """Whether the byte at `at` follows an odd run of backslashes (is escaped)."""
    run = 0
    while at - run - 1 >= 0 and data[at - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def _line_boundary(data: bytes, at: int, step: int) -> int:
    """Where the line of text around `at` begins (step -1) or ends (step 1) on a raw JSONL
    line: just inside the string's quote, or at a `\\n`/`\\r` escape. -1 if not found nearby."""
    # A line of text is short, a line of tool output can be megabytes long: look close first.
    for reach in _BOUNDARY_REACHES:
        found = _boundary_within(data, at, step, reach)
        if found is not None:
            return found
    return -1


_BOUNDARY_REACHES = (256, 2048, _MAX_RAW_LINE)


def _boundary_within(data: bytes, at: int, step: int, reach: int) -> int | None:
    """`_line_boundary` at most `reach` bytes away; -1 when the data ends first with none, None
    when there is none within `reach`."""
    if step < 0:
        floor = max(0, at - reach)
        position = at
        while position > floor:
            quote = data.rfind(b'"', floor, position)
            newline = data.rfind(b"\\n", floor, position)
            carriage = data.rfind(b"\\r", floor, position)
            found = max(quote, newline, carriage)
            if found < 0:
                break
            if found == quote and not _escaped(data, quote):
                return quote + 1
            if found != quote and not _escaped(data, found):
                return found + 2
            position = found
        return -1 if floor == 0 else None
    ceiling = min(len(data), at + reach)
    position = at
    while position < ceiling:
        quote = data.find(b'"', position, ceiling)
        newline = data.find(b"\\n", position, ceiling)
        carriage = data.find(b"\\r", position, ceiling)
        found = min((i for i in (quote, newline, carriage) if i >= 0), default=-1)
        if found < 0:
            break
        if not _escaped(data, found):
            return found
        position = found + 1
    return -1 if ceiling == len(data) else None


def _candidate_search(text: str) -> tuple[re.Pattern[str], str]:
    lowered = text.lower()
    if len(lowered) == len(text):
        return _CANDIDATE_LOWER, lowered
    return _CANDIDATE_ANY_CASE, text


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_MAX_NAME = 80
# What a raw gate match's judgement reads before its operator's farthest place: where a candidate
# may start (`_CANDIDATE_SPAN`), and a name's walk back from there (`_MAX_NAME` + 16), plus one.
_WINDOW_BEFORE_REACH = _CANDIDATE_SPAN + _MAX_NAME + 17
# After the name: a closing quote or subscript (`"api_key":`, `ENV["TOKEN"] =`), an optional
# type annotation (`PASSWORD: str = …`, `token?: string =`), the operator, then spaces.
_SEPARATOR = re.compile(
    r"""(?P<close>\\?["'`])?\]?\??
    (?:[ \t]{0,4}:[ \t]{0,4}[A-Za-z_][\w.]{0,30}(?:\[[^\]\n]{0,40}\])?[ \t]{0,4}(?==[^=]))?
    (?P<before>[ \t]{0,8})
    (?P<op>:::=|::=|:=|\?=|\+=|=>|=(?![=~])|:(?![:/\\]))
    (?P<after>[ \t]*)""",
    re.VERBOSE,
)
# `define('DB_PASSWORD', '…')`, `setenv("TOKEN", "…")`, `config.set('auth', 'token', '…')`.
_CALL_SEPARATOR = re.compile(r"""(?P<close>\\?["'])[ \t]{0,4},[ \t]{0,4}(?P<after>)""")
_MAX_GAP = 16  # a masked placeholder leaves 21+ spaces behind a label: never bridge that
# An unquoted value runs to a space, a quote or punctuation that ends it in code (`;`, `<`);
# a comma ends it too unless more of the value follows at once (`A,.:-…` in an INI file).
_UNQUOTED = re.compile(r"""(?:[^\s"'`\\;,<>]|,(?=[^\s,])|\\(?![nrt"'\\/]))+""")
_MAX_VALUE = 4096
_PROSE_AFTER = re.compile(r" [A-Za-z]")
_COMPOSED = re.compile(r"[A-Za-z][-_.][A-Za-z]")
# Groups of upper-case letters and digits joined by hyphens, as license and product keys are
# written (at least 3 groups of 3 to 8).
_LICENSE_SHAPE = re.compile(r"^[A-Z0-9]{3,8}(?:-[A-Z0-9]{3,8}){2,}$")
_JOINED_WORDS = re.compile(r"^[a-z][a-z0-9]*(?:[-_](?:[a-z][a-z0-9]*|[0-9]+))+$")
# A comma that starts another argument or list item: `,name=`, `,word,` of only letters.
_LISTED = re.compile(r",[A-Za-z_][\w.]*=|^[A-Za-z_]\w*(?:,[A-Za-z_]\w*)+$")
# A part of a joined value that is generated, not a word: 8+ characters mixing letters and
# digits (`sk_e51a4bf7…`, `bkua_hqlh73m5…`, `sccqe60k-nsak-…`). Names of things are words.
_GENERATED_PART = re.compile(r"(?=[a-z0-9]*[0-9])(?=[a-z0-9]*[a-z])[a-z0-9]{8,}")
# YAML tags that make a value something else (`!Ref`, `!vault |`, `!!binary`); a password
# that merely starts with `!` is kept.
_YAML_TAG = re.compile(
    r"^(?:!!|!(?:Ref|Sub|GetAtt|Join|If|Equals|Not|And|Or|FindInMap|Select|Split|ImportValue|"
    r"GetAZs|Base64|Cidr|Condition|Transform|vault|include|env|secret|reference|expr|unsafe|"
    r"ruby|python|binary|tag)\b)"
)
# Public keys and publishable tokens; anti-CSRF tokens (per-session form nonces, not credentials).
_NOT_SECRET_WORDS = frozenset(
    {"public", "publishable", "pub", "csrf", "xsrf", "certificate", "cert", "ca", "crt"}
)
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _strong_stem(word: str) -> bool:
    """`secrete`, `passwordd`: a strong word with one or two letters more (typos), not a word
    of its own (`secretary`, `passport`) nor a plural."""
    if word.endswith("s"):
        return False  # `secrets:`, `passwords:` name collections (a CI file's `secrets: inherit`)
    return any(word.startswith(stem) and len(word) <= len(stem) + 2 for stem in _STRONG_STEMS)


_STRONG_STEMS = ("secret", "password", "passwd")


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


@dataclass(frozen=True, slots=True)
class AssignedValue:
    """Where a value sits after its name and operator, and how it was written."""

    start: int
    end: int
    quoted: bool
    op: str
    spaced: bool  # spaces around the operator: `name = value` (code, INI), not `NAME=value`
    prose_follows: bool = False  # an unquoted value followed by a space and another word
    quoted_name: bool = False  # `"name": …`, `'name' => …`


# The rest of a quoted string on its line, per opening quote. Inside `"…"`, `'…'` and `` `…` ``
# a backslash escapes the next character; a JSON-escaped quote (`\"…\"`) ends at the next `\"`
# and never crosses a JSON `\n`.
_STRING_REST = {
    quote: re.compile(
        rf"(?:[^{re.escape(quote)}\\\n]|\\[^\n]){{0,{_MAX_VALUE}}}(?={re.escape(quote)})"
    )
    for quote in ('"', "'", "`")
}
_ESCAPED_STRING_REST = {
    quote: re.compile(
        rf"(?:[^\\\n]|\\(?!{re.escape(quote[1])}|n)){{0,{_MAX_VALUE}}}(?={re.escape(quote)})"
    )
    for quote in ('\\"', "\\'")
}


def _closing_quote(text: str, start: int, quote: str) -> int:
    """Index of the quote that closes a string opened just before `start`; -1 if none on the
    same line (within `_MAX_VALUE`)."""
    pattern = _ESCAPED_STRING_REST.get(quote) or _STRING_REST[quote]
    rest = pattern.match(text, start)
    return rest.end() if rest is not None else -1


def _trim_unquoted(text: str, start: int, end: int) -> int:
    """Drop closing brackets that belong to the surrounding code, not to the value: a closer
    with no opener in the value, at its end or followed by punctuation (`pwd=None):`)."""
    depth = 0
    for i in range(start, end):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in _CLOSERS:
            if depth:
                depth -= 1
            elif i + 1 == end or text[i + 1] in ":;,)]}":
                end = i
                break
    while end > start and text[end - 1] in _CLOSERS:
        closer = text[end - 1]
        value = text[start:end]
        if value.count(_CLOSERS[closer]) >= value.count(closer):
            break
        end -= 1
    return end


def read_value(text: str, pos: int, op: str, spaced: bool) -> AssignedValue | None:
    """The value that starts at `pos` (just after the operator and its spaces)."""
    if pos >= len(text):
        return None
    # String prefixes: f"…", b'…', r"…", u"…", $"…", @"…".
    if text[pos] in "fFbBrRuU$@" and pos + 1 < len(text) and text[pos + 1] in "\"'":
        pos += 1
    for quote in ('\\"', "\\'", '"', "'", "`"):
        if text.startswith(quote, pos):
            start = pos + len(quote)
            close = _closing_quote(text, start, quote)
            if close < 0:
                return None
            return AssignedValue(start, close, True, op, spaced)
    match = _UNQUOTED.match(text, pos)
    if match is None or match.end() - pos > _MAX_VALUE:
        return None
    end = _trim_unquoted(text, pos, match.end())
    if end <= pos:
        return None
    prose = _PROSE_AFTER.match(text, end) is not None
    return AssignedValue(pos, end, False, op, spaced, prose)


def _looks_like_sentence(value: str) -> bool:
    return " " in value.strip()


def accept_value(
    value: str, strength: Strength, name: str, found: AssignedValue, context: ScanContext
) -> bool:
    """Whether `value`, assigned to a credential-like `name`, is a secret."""
    if len(value) > _MAX_VALUE or is_trivial(value) or "\n" in value:
        return False
    if is_filler(value) or is_public_material(value):
        return False
    lowered = value.lower()
    if lowered == name.lower() or lowered in name_words(name):
        return False  # `password=password`, `"token": "token"`
    if _YAML_TAG.match(value) or looks_like_locator(value):
        return False
    if not found.quoted and (looks_like_code(value) or value[0] in "([{<:"):
        return False
    if found.quoted_name and not found.quoted and is_pure_identifier(value):
        return False  # `{"credentials": role}`: JSON would quote a literal; this is code
    if looks_like_template_or_regex(value):
        return False  # r"(?:key|pwd)", f"{name}-{id}", `${prefix}-token`
    if looks_like_code(value) and not looks_token_like(value):
        return False
    if not found.quoted and "," in value and _LISTED.search(value):
        return False  # `password=pw,user=u`: a call's next argument, `a,b,c`: a list of names
    if found.op == "," and is_pure_identifier(value.replace(".", "_")):
        return False  # `field_serializer('password', 'password_bytes')`
    if found.prose_follows and is_pure_identifier(value):
        return False  # `"pwd: expected bytes, got …"`, `# 2nd pass: check if …`
    if _looks_like_sentence(value):
        if context.sensitive:
            return found.quoted and strength is Strength.STRONG
        return strength is Strength.STRONG and _quoted_passphrase(value, name, found)
    if context.sensitive:
        return True
    if _JOINED_WORDS.match(value) and not any(
        _GENERATED_PART.fullmatch(part) for part in re.split(r"[-_]", value)
    ):
        return False  # `password_confirmation`, `auth-scheme`: names, not values
    if value != value.strip():
        return False  # `" --username="`: a fragment of a string being built
    if (
        _COMPOSED.search(value)
        and not any(c.isdigit() for c in value)
        and any(len(w) >= 4 and w in lowered for w in name_words(name))
    ):
        return False  # `"Access-Control-Allow-Credentials"`: a name built on the name
    if not found.quoted and strength is not Strength.STRONG and is_pure_identifier(value):
        return False  # `authKey: _authKey`: a variable
    if strength is Strength.KEY:
        if _LICENSE_SHAPE.match(value) and any(c.isdigit() for c in value):
            return True  # `F1A-NEI-HY4-PZK`: groups of a license or product key
        return (
            len(value) >= 16
            and not looks_like_code(value)
            and re.fullmatch(r"[A-Za-z0-9+/=_.~-]+", value) is not None
            and looks_token_like(value, min_length=16)
        )
    if strength is Strength.MEDIUM:
        return looks_token_like(value, min_length=8)
    # STRONG: a password may be a plain word, but an unquoted plain word in code is a variable.
    if found.quoted:
        return len(value) >= 3
    if is_pure_identifier(value):
        if found.spaced or ("_" in value) or has_char_classes(value, 2):
            return False  # `password = db_pass`, `password: hashedPassword`
        return not name.islower() or found.op == ":"
    return True


def _quoted_passphrase(value: str, name: str, found: AssignedValue) -> bool:
    """A passphrase of a few words assigned in code (a `password =` and three lower-case words
    in quotes), not a UI string (`password = "Enter your password"`, "Invalid password.")."""
    words = value.split()
    if not found.quoted or found.op not in ("=", ":=") or not found.spaced:
        return False
    if not 2 <= len(words) <= 6 or value[0].isupper() or value[-1] in ".!?:…":
        return False
    named = set(name_words(name))
    return not any(w.lower().strip(",;") in named for w in words) and "%" not in value


_GENERATED_RUN = re.compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{8,}")
# A file name, or a path of words: `key=uploads/2024/photo.png`, `Key=docs/readme`.
_FILE_OR_PATH = re.compile(r"\.[A-Za-z]{2,5}$|^[\w-]+(?:/[\w-]+)+/?$")


def _glued_credential(value: str) -> bool:
    """A value written right after `name:` with no space that is a credential anyway."""
    # Only a token's alphabet (base64, base64url): never a placeholder's tail (`…-password:`
    # `0a1b2c3d]@host`), a URL or a `key:value:more` path.
    if re.fullmatch(r"[A-Za-z0-9+/=_-]{20,}", value) is None:
        return False
    return has_char_classes(value, 3) and looks_token_like(value, 20)


def _bare_key_value(value: str) -> bool:
    """A value a lone `key =` may hold as a credential (a log's `Using Key=…`): long and
    generated-looking, not a file name, a path or a URL."""
    if len(value) < 16 or len(value) > _MAX_VALUE or looks_like_locator(value):
        return False
    if re.fullmatch(r"[A-Za-z0-9+/=_.~:*#@!$%^&-]+", value) is None:
        return False
    if _FILE_OR_PATH.search(value) and not any(c in value for c in "+=:"):
        return False
    # Some run of it mixes letters and digits like a generated key (not `test-key-of-32-bytes`).
    parts = re.split(r"[^A-Za-z0-9]+", value)
    if not any(_GENERATED_RUN.fullmatch(part) for part in parts):
        return False
    return looks_token_like(value, min_length=16)


def _credential_part(text: str, found: AssignedValue) -> AssignedValue:
    """The credential inside a quoted value: without the spaces that pad it (`" abc "`), and
    without an authentication scheme written before it (`"Bearer abc"`)."""
    if not found.quoted:
        return found
    start, end = quoted_credential_span(text, found.start, found.end)
    if (start, end) == (found.start, found.end) or " " in text[start:end]:
        return found
    return dataclasses.replace(found, start=start, end=end)


_ASSIGNMENT_GATES = _assignment_gates()


@functools.lru_cache(maxsize=8192)
def _secret_names_in(window: bytes, gate: int) -> tuple[tuple[int, int], ...]:
    """Where in `window` (raw bytes that end where a match of gate `gate` ends) the
    candidates whose operator lies within that match have a secret-like name, in every
    reading. Depends on nothing else, so it is cached: transcripts repeat their lines (an
    output is stored twice, a file read again), and a repetition costs a lookup instead of
    a regex search. The window holds `_MAX_NAME` + 16 bytes before any candidate, so a name
    is never cut by it: it starts where the raw line starts or well before any name."""
    lowered = window.lower()
    size = len(window)
    nearest = size - _GATE_REACH_RAW[gate]
    found: list[tuple[int, int]] = []
    for candidate in _RAW_CANDIDATE.finditer(lowered, max(0, nearest - _CANDIDATE_SPAN)):
        if candidate.end() < nearest:
            continue  # its operator is too far before the gate match to be what it matched
        start = candidate.start()
        floor = max(0, start - _MAX_NAME - 16)
        while start > floor and window[start - 1] in _NAME_BYTES:
            start -= 1
        if start == floor and start > 0:
            continue  # longer than any name, in any reading
        end = candidate.end("tail")
        readings = [start]
        if start > 0 and window[start - 1] == 0x5C:  # a backslash: `\n`, `\t`, `\u00e9`
            readings.append(start + (5 if window[start] == 0x75 else 1))
        for first in readings:
            name = window[first:end].decode("ascii").strip(".-")
            if name and len(name) <= _MAX_NAME and classify_name(name) is not None:
                found.append((first, end))
    return tuple(found)


# Compared and hashed by identity (eq=False): its method caches key on it, and hashing every
# field on each lookup cost more than the lookups saved.
@dataclass(frozen=True, slots=True, eq=False)
class SensitiveAssignmentRule:
    """Values assigned to names that say they hold a secret."""

    name: str = "sensitive-assignment"
    kind: str = KIND
    anchors: tuple[str, ...] = (
        "pass",
        "pwd",
        "secret",
        "token",
        "key",
        "auth",
        "cred",
        "_pw",
        "_pat",
    )
    gates: tuple[Gate, ...] = _ASSIGNMENT_GATES
    # A gate match ends just past the operator (and a value's first characters); the name
    # starts at most about 100 characters before, the value runs at most `_MAX_VALUE` after.
    reach_before: int = 128
    reach_after: int = _MAX_VALUE + 16
    context_only: bool = False
    reference: str = (
        "dotenv 'Rules' (github.com/motdotla/dotenv); YAML 1.2 §8.2 block mappings; detect-secrets "
        "KeywordDetector and gitleaks generic-api-key (same idea, own rules)"
    )

    def may_match_raw(self, data: bytes, ends: Iterable[tuple[int, int]]) -> bool:
        """Whether a raw JSONL line (outside a credential source) may hold a hit, given where
        this rule's gates matched it (`ends`: (end, which gate), raw forms). False lets the
        scanner skip a line full of `secret_name: str` and `token: list[str]` unparsed.

        Each candidate whose operator lies within a gate match is judged on the raw line
        itself where that is exact: names are made of characters JSON never escapes, and on a
        line of text with no escape in it (between two `\\n`, or a string's quotes) the raw
        bytes are the decoded characters, and the rule never reads past the end of a line
        (but for `<name>…</name>`). Anywhere else a candidate with a secret-like name is
        taken as a possible hit. Both readings of a name right after an escape
        (`\\nDB_PASS=`) are tried."""
        judged: set[tuple[int, int]] = set()
        for end, gate in ends:
            # Every byte the judgement of this gate match reads: its candidates, their names.
            window_start = max(0, end - _GATE_REACH_RAW[gate] - _WINDOW_BEFORE_REACH)
            window = data[window_start:end]
            for name_start, name_end in _secret_names_in(window, gate):
                span = (window_start + name_start, window_start + name_end)
                if span not in judged:
                    judged.add(span)
                    if self._may_hit_on_raw_line(data, *span):
                        return True
        return False

    def _may_hit_on_raw_line(self, data: bytes, start: int, end: int) -> bool:
        """Whether the name at [start, end) of a raw JSONL line may take a value. The line of
        text around it (between two newlines, or a string's quotes: the rule never reads past
        either, but for `<name>…</name>`) is cut out of the raw line and decoded on its own;
        when that is not possible, the answer is yes."""
        while start < end and data[start] in b"-.":
            start += 1
        if start > 0 and data[start - 1] == 0x3C:  # `<password>…</password>` may span lines
            return True
        line_start = _line_boundary(data, start, -1)
        line_end = _line_boundary(data, end, 1)
        if line_start < 0 or line_end < 0 or line_end - line_start > _MAX_RAW_LINE:
            return True
        return self._may_hit_on_line(data[line_start:line_end], start - line_start, end - start)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one rule object for the process's life
    def _may_hit_on_line(self, raw_line: bytes, name_at: int, name_length: int) -> bool:
        """The rule's answer for a name in one line of text, given as raw JSON string bytes;
        cached, as transcripts repeat lines (a file read twice, an output stored twice)."""
        try:
            line = json.loads(b'"' + raw_line + b'"')
            offset = len(json.loads(b'"' + raw_line[:name_at] + b'"'))
        except ValueError:
            return True
        return self._assignment(line, offset, offset + name_length, PLAIN) is not None

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        pattern, subject = _candidate_search(text)
        return self._hits(text, context, pattern.finditer(subject))

    def find_near(
        self, text: str, context: ScanContext, ends: Iterable[tuple[int, int]]
    ) -> Iterator[Hit]:
        """What `find` reports, reading only the names whose operator lies within a gate match
        (`ends`: where the scanner's gates matched, as character offsets, and which gate). Every
        hit's name and operator lie within a match of one of the gates, so no hit is lost, and a
        long tool output full of `token: str` annotations costs a few regex steps per gate
        match instead of a Python step per keyword."""
        pattern, subject = _candidate_search(text)
        matches = _near_candidates(pattern, subject, ends, _GATE_REACH)
        return self._hits(text, context, matches)

    def _hits(
        self, text: str, context: ScanContext, candidates: Iterable[re.Match[str]]
    ) -> Iterator[Hit]:
        resume = 0
        for candidate in candidates:
            if candidate.start() < resume:
                continue
            start = candidate.start()
            floor = max(0, start - _MAX_NAME)
            while start > floor and text[start - 1] in _NAME_CHARS:
                start -= 1
            if start > 0 and text[start - 1] in _NAME_CHARS:
                continue  # a run too long to be a name (base64, a hash)
            end = candidate.end("tail")
            resume = end
            while start < end and text[start] in "-.":
                start += 1  # `--password`, `.token`
            hit = self._assignment(text, start, end, context)
            if hit is not None:
                resume = max(resume, hit.end)
                yield hit
                for first, last in companions_near(text, text[start:end], hit.start):
                    yield Hit(first, last, self.kind, self.name)

    def _assignment(self, text: str, start: int, end: int, context: ScanContext) -> Hit | None:
        name = text[start:end].rstrip(".-")
        if not name or len(name) > _MAX_NAME:
            return None
        before = text[start - 1] if start > 0 else "\n"
        if before in "?&":
            return None  # a URL query parameter: connection_string.py's rule
        if before == ":" and text[start - 2 : start - 1] == ":":
            return None  # a qualified type name: `AWS::SecretsManager::Secret`, `Foo::Token`
        strength = classify_name(name)
        bare_key = strength is None and name.lower() == "key"
        if strength is None and not bare_key:
            return None
        found = self._value(text, start, start + len(name), before)
        if found is None:
            return None
        if bare_key:
            # `Using Key=…`, `key = …` in a log line: a lone `key` names a credential only when
            # assigned with `=` a generated-looking value (a map's `key:` names anything).
            if found.op != "=" or not _bare_key_value(text[found.start : found.end]):
                return None
            strength = Strength.MEDIUM  # the shape was judged above
        if strength is None:
            return None
        found = _credential_part(text, found)
        value = text[found.start : found.end]
        if not accept_value(value, strength, name, found, context):
            return None
        return Hit(found.start, found.end, self.kind, self.name)

    @staticmethod
    def _value(text: str, start: int, end: int, before: str) -> AssignedValue | None:
        if before == "<" and text.startswith(">", end):
            close = text.find("</", end + 1, end + 1 + _MAX_VALUE)
            if close <= end + 1:
                return None
            return AssignedValue(end + 1, close, True, ">", False)
        sep = _SEPARATOR.match(text, end)
        if sep is None and before in "\"'":
            call = _CALL_SEPARATOR.match(text, end)
            # Only a first argument: `define('DB_PASSWORD', '…')`, `getenv("TOKEN", "…")`; in a
            # list of names (`'password', 'password_bytes'`) the next item is not a value. The
            # opening quote may be JSON-escaped (`(\"DB_PASSWORD\", …`).
            opener = start - 3 if text[start - 2 : start - 1] == "\\" else start - 2
            if call is None or opener < 1 or text[opener] != "(":
                return None
            if not (text[opener - 1].isalnum() or text[opener - 1] in "_."):
                return None  # a tuple `("a", "b")`, not a call
            found = read_value(text, call.end(), ",", True)
            return found if found is not None and found.quoted else None
        if sep is None:
            return None
        op = sep.group("op")
        after = sep.group("after")
        quoted_name = sep.group("close") is not None
        if len(after) > _MAX_GAP:
            return None
        spaced = bool(sep.group("before")) or (bool(after) and op != ":")
        found = read_value(text, sep.end(), op, spaced)
        glued = op == ":" and not quoted_name and not after
        # YAML needs a space after the colon; `a:b` is something else, unless what follows is
        # a long generated run (`azureStorageAccessKey:TP+G/9FT…==` in a log).
        if glued and (
            found is None or found.quoted or not _glued_credential(text[found.start : found.end])
        ):
            return None
        if found is not None and quoted_name:
            found = dataclasses.replace(found, quoted_name=True)
        return found


SENSITIVE_ASSIGNMENT = SensitiveAssignmentRule()

RULES = (SENSITIVE_ASSIGNMENT,)
