"""The one placeholder format: `[REDACTED:<kind>:<8 hex>]`.

A placeholder says what was there (the finding's kind) and which secret it was (the first 8 hex
characters of its keyed fingerprint, so the same secret gets the same placeholder everywhere and
a user can match a placeholder to a finding in a report) without saying anything about the value.

This module owns the format: nothing else builds or recognises placeholders by hand. It never
computes fingerprints; the caller passes the keyed HMAC it already has.

Redaction must be idempotent: a second run over a redacted file must find nothing. A detector
that sees `API_KEY=[REDACTED:…]` would happily flag the placeholder as the key's value, so
callers run `mask_placeholders` before any detector: each placeholder becomes the same number of
mask characters, so code-point spans found in the masked text are valid in the original text
too, and a hit that reaches into one is dropped.
"""

from __future__ import annotations

import re

PLACEHOLDER_PREFIX = "[REDACTED:"
SHORT_FINGERPRINT_LENGTH = 8

# Kinds are kebab-case words ("aws-access-key", "dotenv-value"): lower-case letters and digits,
# joined by single dashes. The same pattern both validates and recognises, so every text that
# PLACEHOLDER_RE matches is a text make_placeholder could have produced.
_KIND = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_KIND_RE = re.compile(_KIND)
_FINGERPRINT_RE = re.compile(r"[0-9a-f]{8,}")

PLACEHOLDER_RE = re.compile(r"\[REDACTED:(?P<kind>" + _KIND + r"):(?P<short>[0-9a-f]{8})\]")


class PlaceholderError(ValueError):
    """A kind or fingerprint that cannot go into a placeholder.

    The message never repeats the rejected text: a caller that mixed up its arguments might
    have passed the secret itself.
    """


def is_valid_kind(kind: str) -> bool:
    """Whether `kind` is kebab-case and so can name a finding and a placeholder."""
    return _KIND_RE.fullmatch(kind) is not None


def make_placeholder(kind: str, fingerprint: str) -> str:
    """The placeholder for a finding of `kind` whose keyed fingerprint (lower-case hex) is given."""
    if not is_valid_kind(kind):
        raise PlaceholderError(
            f"a finding kind must be kebab-case ([a-z0-9] words joined by '-'); "
            f"got {len(kind)} characters that are not"
        )
    if _FINGERPRINT_RE.fullmatch(fingerprint) is None:
        raise PlaceholderError(
            f"a fingerprint must be at least {SHORT_FINGERPRINT_LENGTH} lower-case hex "
            f"characters; got {len(fingerprint)} characters that are not"
        )
    return f"{PLACEHOLDER_PREFIX}{kind}:{fingerprint[:SHORT_FINGERPRINT_LENGTH]}]"


def parse_placeholder(text: str) -> tuple[str, str] | None:
    """(kind, short fingerprint) when the whole of `text` is one placeholder, else None."""
    match = PLACEHOLDER_RE.fullmatch(text)
    if match is None:
        return None
    return match["kind"], match["short"]


def placeholder_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) code-point spans of every placeholder in `text`, in order."""
    if PLACEHOLDER_PREFIX not in text:  # the common case: a plain substring test is cheap
        return []
    return [match.span() for match in PLACEHOLDER_RE.finditer(text)]


# What a placeholder is masked with: not whitespace, so that no rule reads past a placeholder
# to the next word as if it were the value (`password [REDACTED…]\nmachine` took `machine`),
# and no character a name, a quote or an operator is made of. The scanner drops any hit that
# reaches into a masked span, so a rule that takes the mask for a value reports nothing.
MASK_CHAR = "\x00"


def mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each of `spans` (placeholders, from `placeholder_spans`) replaced by as
    many `MASK_CHAR`s, so spans keep their meaning."""
    if not spans:
        return text
    parts: list[str] = []
    at = 0
    for start, end in spans:
        parts += (text[at:start], MASK_CHAR * (end - start))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def mask_placeholders(text: str) -> str:
    """`text` with every placeholder replaced by as many `MASK_CHAR`s."""
    return mask_spans(text, placeholder_spans(text))


def hides_only(shown: str, raw: str) -> bool:
    """Whether `shown` is `raw` with some of its parts (at least a character each) replaced by
    placeholders, nothing else changed: a form read from a cache or a manifest (possibly
    planted) may hide, never add. Each text between placeholders is found leftmost, in
    order: linear in the lengths, whatever the input."""
    texts: list[str] = []
    at = 0
    for match in PLACEHOLDER_RE.finditer(shown):
        texts.append(shown[at : match.start()])
        at = match.end()
    texts.append(shown[at:])
    if len(texts) == 1:
        return shown == raw
    first, *middle, last = texts
    stop = len(raw) - len(last)
    if stop < len(first) or not raw.startswith(first) or not raw.endswith(last):
        return False
    at = len(first)
    for text in middle:
        found = raw.find(text, at + 1, stop)
        if found < 0:
            return False
        at = found + len(text)
    return at < stop
