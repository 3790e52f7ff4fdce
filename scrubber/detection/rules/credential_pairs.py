"""The other half of a credential pair: the id or user written beside a secret.

Services issue credentials in pairs (a client id and its secret, an app id and its key, an access
key id and its secret key, a user and an app password), and their docs and configs write the two
together: `CLIENT_ID=…` above `CLIENT_SECRET=…`, `"lark_app_id"` above `"lark_app_secret"`,
`plaid client id - '…'` below `plaid secret - '…'`, `Using ID=…` after `Using Key=…`. Alone,
an id is not a secret (the Contracts say ids are not); beside its secret it is the half an
attacker needs, and the pair is unmistakable only there. So a companion is taken only:

- within a few lines of a secret a label rule found (`companions_near`, called by those rules),
- under an id- or user-like label that shares the secret's label words (`hive_id` with
  `hive_secret`, `shopify_client_id` with `client_secret`) or, when the secret's label is bare
  (`Key=` in a log line), stands on the line right before or after it,
- with a value that looks generated (a uuid counts here; an email address, a word or a number
  does not).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from scrubber.detection.rules.values import (
    is_filler,
    is_trivial,
    is_uuid,
    looks_like_locator,
    looks_like_template_or_regex,
    looks_token_like,
    name_words,
)

# How many lines around the secret's own line a companion may stand on.
_LINES_AROUND = 3
_MAX_LINE = 1024
_COMPANION_WORDS = frozenset(
    (
        *("id", "user", "username", "login", "account", "appid", "clientid", "keyid", "uid"),
        *("org", "organization", "tenant", "workspace"),
    )
)
# Words a label may end with before its id word: `client id`, `app_id`, `access key id`.
_QUALIFIERS = frozenset(
    {"client", "app", "application", "api", "access", "key", "org", "tenant", "account", "project"}
)
_COMPANION = re.compile(
    r"(?<![A-Za-z0-9])_?(?P<label>(?:[A-Za-z0-9][A-Za-z0-9]*[ _.-]){0,4}?[A-Za-z]*?"
    r"(?:id|user|username|login|account|appid|clientid|keyid|uid|org|organization|tenant|"
    r"workspace))\d*(?![A-Za-z0-9])"
    r"""\\?["']?[ \t]*(?:=>|->|:=|[:=|]|[ \t]-[ \t])[ \t]*"""
    r"""(?:\\?"(?P<dq>[^"\\\n]{8,256})\\?"|'(?P<sq>[^'\n]{8,256})'|(?P<bare>[^\s"',;<>]{8,256}))""",
    re.IGNORECASE,
)
# What every `_COMPANION` match holds: its label's last word and the operator after it. Far
# cheaper to search for than the whole (whose label tries every word start): a window without
# one holds no companion.
_COMPANION_END = re.compile(
    r"(?:id|user|username|login|account|appid|clientid|keyid|uid|org|organization|tenant|"
    r"workspace)\d*(?![A-Za-z0-9])"
    r"""\\?["']?[ \t]*(?:=>|->|:=|[:=|]|[ \t]-[ \t])""",
    re.IGNORECASE,
)
# Words that say nothing about which credential a label belongs to.
_FILLER_WORDS = frozenset({"using", "the", "a", "an", "my", "your", "our", "old", "new", "format"})


def _label_words(label: str) -> list[str]:
    return [w for w in name_words(label) if w not in _FILLER_WORDS and not w.isdigit()]


def _owner_words(words: list[str]) -> list[str]:
    """The words of a companion's label that name its owner (`shopify` of `shopify_client_id`)."""
    return [w for w in words[:-1] if w not in _QUALIFIERS]


def _same_owner(secret_words: list[str], companion_words: list[str]) -> bool:
    """Whether the companion's label names the same credential as the secret's: the words
    before their last ones agree (one may qualify the other: `shopify client` and `client`)."""
    owner = secret_words[:-1]
    theirs = [w for w in companion_words[:-1] if w not in _QUALIFIERS or w in owner]
    mine = [w for w in owner if w not in _QUALIFIERS or w in theirs]
    if not mine or not theirs:
        return False
    shorter, longer = sorted((mine, theirs), key=len)
    return longer[: len(shorter)] == shorter or longer[-len(shorter) :] == shorter


def _generated(value: str) -> bool:
    if is_trivial(value) or is_filler(value) or looks_like_template_or_regex(value):
        return False
    if looks_like_locator(value) or "@" in value or value.isalpha() or value.isdigit():
        return False  # an email, a word, a number (an AWS account id is no half of a key)
    return is_uuid(value) or looks_token_like(value, min_length=8)


def _line_starts(text: str, at: int) -> tuple[int, int]:
    """The start of the line `_LINES_AROUND` lines before `at`'s, and the end of the one as
    many after."""
    start = at
    for _ in range(_LINES_AROUND + 1):
        start = text.rfind("\n", 0, start)
        if start < 0:
            break
    start = max(0, start + 1)
    end = at
    for _ in range(_LINES_AROUND + 1):
        found = text.find("\n", end + 1)
        if found < 0:
            end = len(text)
            break
        end = found
    return max(start, at - _LINES_AROUND * _MAX_LINE), min(end, at + _LINES_AROUND * _MAX_LINE)


def companions_near(text: str, secret_label: str, secret_start: int) -> Iterator[tuple[int, int]]:
    """Spans of the values of a secret's companions (see the module docstring): `secret_label`
    is the label the secret was found under, `secret_start` where its value starts."""
    secret_words = _label_words(secret_label)
    if not secret_words or secret_words[-1] in _COMPANION_WORDS:
        return
    low, high = _line_starts(text, secret_start)
    for at, label, (start, end) in _companion_matches(text, low, high):
        words = _label_words(label)
        if not words or words[-1] not in _COMPANION_WORDS:
            continue
        if len(secret_words) == 1 or not _owner_words(words):
            # A bare `Key=` or `secret=`, or a bare `account_id`: only lines close to each
            # other pair up (next to each other for a bare `id`; a `tenantId`/`clientId`
            # stands within a few lines of its secret in JSON configs).
            # Lines apart: the line breaks between the two (counting from the text's start
            # for each would read a long tool output once per secret in it).
            near, far = sorted((at, secret_start))
            distance = text.count("\n", near, far)
            reach = 1 if len(words) == 1 or len(secret_words) == 1 else _LINES_AROUND
            if not 0 < distance <= reach:
                continue
        elif not _same_owner(secret_words, words):
            continue
        if _generated(text[start:end].rstrip(";")):
            yield start, end - (1 if text[end - 1] == ";" else 0)


def _companion_matches(
    text: str, low: int, high: int
) -> Iterator[tuple[int, str, tuple[int, int]]]:
    """`_COMPANION.finditer(text, low, high)` as (where the match starts, its label, its
    value's span). Case-insensitive search is slow in `re` (about 9x on a window of logs or
    base64): an ASCII window is lowered (lengths kept) and searched case-sensitively, one
    character before it kept for the look-behind; the label is read from the text itself."""
    begin = max(0, low - 1)
    window = text[begin:high]
    if not window.isascii():
        if _COMPANION_END.search(text, low, high) is None:
            return
        for match in _COMPANION.finditer(text, low, high):
            yield match.start(), match.group("label"), _value_span(match, 0)
        return
    lowered = window.lower()
    first = low - begin
    if _COMPANION_END_LOWER.search(lowered, first) is None:
        return
    for match in _COMPANION_LOWER.finditer(lowered, first):
        label_start, label_end = match.span("label")
        label = text[begin + label_start : begin + label_end]
        yield begin + match.start(), label, _value_span(match, begin)


def _value_span(match: re.Match[str], shift: int) -> tuple[int, int]:
    group = next(g for g in ("dq", "sq", "bare") if match.group(g) is not None)
    start, end = match.span(group)
    return start + shift, end + shift


# The two patterns without IGNORECASE, for lowered ASCII text (where they match the same).
_COMPANION_LOWER = re.compile(_COMPANION.pattern)
_COMPANION_END_LOWER = re.compile(_COMPANION_END.pattern)
