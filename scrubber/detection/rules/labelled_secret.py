"""Secrets written after a label the way people, logs and docs write them, not only `NAME=value`:

- other separators: `stripe token - 'V'`, `api key -> V`, a table cell (`auth token | V`), a
  tab (`API_KEY<TAB>V`), prose (`the stripe key is V`), or none before a quoted value
  (`kraken token 'V'`);
- a label in a sentence ending in a colon: `Here's the token to test the API: V`;
- a string literal on the line after its name: `const apiKey =\\n  "V";`,
  `ACCOUNT_KEY\\n    = "V"`, `AccountKey{\\n "V"}`.

The label is judged by its words like an assignment's name (assignment/names.py's
`classify_name`, so `public key`, `primary key`, `max tokens` and `token type` name nothing
secret), and the value, with no operator to vouch for it, must look generated: long enough,
mixed enough, not a word, a path, a number, a hash-shaped id under a bare label, a template or
a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import QUOTE_RAW, Gate
from scrubber.detection.rules.assignment import Strength, classify_name
from scrubber.detection.rules.credential_pairs import companions_near
from scrubber.detection.rules.values import (
    has_char_classes,
    is_filler,
    is_public_material,
    is_pure_identifier,
    is_trivial,
    is_uuid,
    looks_like_code,
    looks_like_locator,
    looks_like_template_or_regex,
    looks_token_like,
    name_words,
    quoted_credential_span,
)

KIND = "labelled-secret"
_MAX_VALUE = 512

# The noun a label ends with; words before it (a service's name, `auth`, `api`) come along.
_NOUN = (
    r"(?:api[ _.-]?keys?|access[ _.-]?keys?|secret[ _.-]?keys?|auth[ _.-]?tokens?|"
    r"access[ _.-]?tokens?|api[ _.-]?tokens?|tokens?|secrets?|passwords?|passwd|passphrase|"
    r"pwd|keys?|credentials?|authorization)"
)
# Where to look: the noun at the end of a word, found in the lower-cased text (a case-sensitive
# alternation runs several times faster than an IGNORECASE one); the label is read backwards
# from it and the separator and value forwards, each anchored, so no regex ever scans for a
# label's start.
_NOUN_AT_WORD_END = re.compile(_NOUN + r"\d*(?![a-z0-9])")
_NOUN_ANY_CASE = re.compile(_NOUN + r"\d*(?![a-z0-9])", re.IGNORECASE)
_QUOTED = r"""(?P<q>['"`])(?P<qv>(?:(?!(?P=q))[^\n]){1,512})(?P=q)"""
_BARE_CHARS = r"[A-Za-z0-9+/=_.~:@!#$%^&*-]"
_BARE = rf"(?P<bv>{_BARE_CHARS}{{1,512}})"
# A bare value the separator regexes cut at `_MAX_VALUE` goes on to the end of its run: an
# Azure AD refresh token or a long JWT is 1,000+ characters, and a span that stops short leaves
# the rest of the secret in the output. (The separator regexes stay bounded: they run at every
# noun; this runs only on a value already taken.)
_MAX_LONG_VALUE = 4096
_BARE_REST = re.compile(rf"{_BARE_CHARS}{{0,{_MAX_LONG_VALUE - _MAX_VALUE}}}")
# Separators other than `=` and `:` (assignment/ reads those), each followed by the value.
_LOOSE = re.compile(
    r"(?P<sep>[ \t]{1,8}-{1,2}>?[ \t]{1,8}|[ \t]{1,8}\u2014[ \t]{1,8}|[ \t]{0,8}\|[ \t]{0,8}|\t{1,8}|"
    r"[ \t]{1,8}(?:is|was)[ \t]{1,8}(?:set[ \t]{1,8}to[ \t]{1,8})?|[ \t]{1,8})"
    rf"(?:{_QUOTED}|{_BARE})",
    re.IGNORECASE,
)
# A table row whose value stands after a description cell: `| AADRefreshToken | Refresh token
# of the app | V |`.
_LOOSE_AFTER_DESCRIPTION = re.compile(
    rf"(?P<sep>[ \t]{{0,8}}\|[^|\n]{{1,80}}\|[ \t]{{0,8}})(?:{_QUOTED}|{_BARE})"
)
# `API key: V`, `aylien key: V`: a label of words, a colon. (A one-word name before a colon is
# an assignment's: assignment/ reads it, with its own rules for YAML and code.)
_COLON = re.compile(rf"(?P<sep>:[ \t]{{1,8}})(?:{_QUOTED}|{_BARE})")
# `the token to test the API: V`: a label, a few words of prose on the same line, a colon.
_PROSE = re.compile(
    rf"(?P<sep>[ \t][^\n:;.!?`'\"=]{{1,40}}?:[ \t]{{1,8}})(?:{_QUOTED}|{_BARE})",
)
# A quoted name, a comma, a quoted value: a header set by a call (`Header.Set("Authorization",
# "Bearer V")`, `setRequestHeader('X-Api-Key', 'V')`), a pair in an initializer
# (`{ "AccountKey", "V" }`), a subscript compared to a literal (`['AccountKey'], 'V'`).
_PAIR = re.compile(rf"""(?P<sep>\\?["'`]\]?[ \t]{{0,4}},[ \t]{{0,4}}){_QUOTED}""")
# A name-value pair whose name is the label: Kubernetes `env` entries (`- name: DB_PASSWORD` then
# `value: V`), ECS/Docker task definitions (`{"name": "API_KEY", "value": "V"}`).
_NAME_BEFORE = re.compile(r"""name\\?["']?[ \t]{0,4}[:=][ \t]{0,4}\\?["']?[A-Za-z0-9_.-]{0,60}$""")
_NAME_VALUE = re.compile(
    r"""(?P<sep>[A-Za-z0-9_.-]{0,40}\\?["']?[ \t]{0,4},?[ \t]{0,4}"""
    r"""(?:\r?\n[ \t]{0,40}(?:-[ \t]{1,4})?)?\\?["']?value\\?["']?[ \t]{0,4}[:=][ \t]{0,4})"""
    rf"(?:{_QUOTED}|{_BARE})"
)
# A name, maybe its operator or an opening brace, the end of the line, then the literal. The
# operator may be a fallback's (`process.env.ACCOUNT_KEY ||` then `"V"`): a default written in.
_NEXT_LINE = re.compile(
    r"(?P<sep>[\"']?[ \t]{0,8}(?::?=|:|\{|\(|\|\||\?\?)?[ \t]{0,8}\r?\n[ \t]{0,40}(?:=[ \t]{0,8})?)"
    rf"{_QUOTED}",
)
_WORD_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,30}[ _.-]$")
_MAX_LABEL = 80
# Words that open a label in prose and say nothing of what it names.
_LEADING_WORDS = frozenset({"the", "a", "an", "my", "your", "our", "their", "this", "that", "its"})
_WORD_CHARS = re.compile(r"[A-Za-z]+")
_NAME_PARTS = re.compile(r"[-_.:/]+")
# A name of letters set to a word or a number (a generated token mixes digits into its runs,
# and base64 pads with `=` only at its end).
_SETTING = re.compile(r"[A-Za-z_.-]+=(?:[A-Za-z]+|[0-9]+)")
_PROSE_VERB = re.compile(r"[ \t](?:is|was)[ \t]", re.IGNORECASE)


def _label_strength(label: str) -> Strength | None:
    """How much the label says, judged like an assignment's name; a lone noun counts as the
    weakest kind of name (its value must look generated either way)."""
    words = [w for w in re.split(r"[ _.-]+", label) if w]
    while words and words[0].lower() in _LEADING_WORDS:
        words = words[1:]
    if not words:
        return None
    name = "_".join(words)
    strength = classify_name(name)
    if strength is not None:
        return strength
    if name_words(name) in (["key"], ["keys"], ["token"], ["tokens"], ["credential"]):
        return Strength.KEY
    if name_words(name)[-1:] == ["authorization"]:
        return Strength.MEDIUM  # `Authorization` (and `Proxy-Authorization`): RFC 9110 §11.6.2
    return None


# A number glued to the front of a word (`1password`, `2fa`): a name, not a generated part.
_NUMBERED_WORD = re.compile(r"[0-9]{1,3}[A-Za-z]{2,}")


def _generated(value: str, strength: Strength, *, quoted: bool) -> bool:
    """Whether a value with no operator before it looks like a credential, not prose or code."""
    if len(value) > _MAX_LONG_VALUE or is_trivial(value) or is_filler(value):
        return False
    if (
        is_public_material(value)
        or looks_like_locator(value)
        or looks_like_template_or_regex(value)
    ):
        return False
    if looks_like_code(value) or is_pure_identifier(value) or value[0] in "([{<":
        return False
    if _SETTING.fullmatch(value):
        return False  # `MultipleActiveResultSets=true`: a setting, not a credential
    if not quoted and value[-1] in ".,;:!?":
        value = value[:-1]
    minimum = 16 if strength is Strength.KEY else 8
    if is_uuid(value) and strength is Strength.KEY:
        return False  # a bare `key` or `token` next to a uuid is an id more often than not
    if not looks_token_like(value, min_length=minimum):
        return False
    if all(
        part.isalpha() or _NUMBERED_WORD.fullmatch(part)
        for part in _NAME_PARTS.split(value)
        if part
    ):
        # Words joined by punctuation: `Api-Token`, `Foo::Token`, `x.y.z`; a word may start
        # with a number glued to it, as product names do (`1password-service-account-token`).
        return False
    # Prose runs words together with punctuation; a credential mixes classes inside one run.
    return quoted or any(c.isdigit() for c in value) or has_char_classes(value, 3)


def _value_span(match: re.Match[str]) -> tuple[int, int, bool]:
    if match.group("qv") is not None:
        start, end = match.span("qv")
        return start, end, True
    start, end = match.span("bv")
    if end - start == _MAX_VALUE:
        rest = _BARE_REST.match(match.string, end)
        end = rest.end() if rest is not None else end
    return start, end, False


def _trimmed(text: str, start: int, end: int, quoted: bool) -> tuple[int, int]:
    """Without the padding of a quoted value and the sentence punctuation after a bare one."""
    if quoted:
        start, end = quoted_credential_span(text, start, end)
    else:
        while end > start and text[end - 1] in ".,;:!?":
            end -= 1
    return start, end


_TEXT_QUOTE = r"""\\{0,3}["'`]"""
_RAW_TAB = r"(?:\t|\\t)"
_RAW_NL = r"(?:\\r)?\\n"
# The end of a noun (`_NOUN`: every one ends with one of these words, then maybe digits), which
# the separator follows at once. Gates start with it rather than with a stem and any tail
# (`pass[a-z0-9_]{0,24}`): hyperscan starts its automaton at each occurrence of a gate's leading
# literals, and `pass`, `token`, `auth` stand in every line of code about credentials
# (`password_hash`, `auth_header`); a noun's end before a separator is fourteen times rarer.
_NOUN_END = r"(?:keys?|tokens?|secrets?|passwords?|passwd|passphrase|pwd|credentials?)[0-9]*"
_DIGIT_SOON = r"[a-z0-9+/=_.~-]{0,7}[0-9]"
_DIGIT_IN_16 = r"[a-z0-9+/=_.~-]{0,15}[0-9]"
_TOKEN_START = r"[a-z0-9+/=_.~!@#$%^&*-]{8}"  # noqa: S105 - a regex, not a password


def _loose_gates() -> tuple[Gate, ...]:
    spaced = r"(?:[ \t]{1,8}-{1,2}>?[ \t]{1,8}|[ \t]{0,8}\|[ \t]{0,8})"
    spaced_raw = (
        rf"(?:(?:[ ]|{_RAW_TAB}){{1,8}}-{{1,2}}>?(?:[ ]|{_RAW_TAB}){{1,8}}"
        rf"|(?:[ ]|{_RAW_TAB}){{0,8}}\|(?:[ ]|{_RAW_TAB}){{0,8}})"
    )
    # Prose (`the key is V`): "is required", "is missing" follow names all day; a credential
    # after "is" has a digit early or is quoted.
    prose = r"(?:is|was)[ ]{1,8}(?:set[ ]{1,8}to[ ]{1,8})?"  # after the noun's spaces
    return (
        # An explicit loose separator, then a quote or the value's first characters.
        Gate(
            rf"{_NOUN_END}{spaced}(?:{_TEXT_QUOTE}|[a-z0-9+/=_.~-]{{8}})",
            rf"{_NOUN_END}{spaced_raw}(?:{QUOTE_RAW}|[a-z0-9+/=_.~-]{{8}})",
        ),
        # A table row: the label's cell, a description cell, the value's cell.
        Gate(
            rf"{_NOUN_END}[ \t]{{0,8}}\|[^|\n]{{1,80}}\|[ \t]{{0,8}}[a-z0-9+/=_.~-]{{8}}",
            rf"{_NOUN_END}(?:[ ]|{_RAW_TAB}){{0,8}}\|[^|]{{1,160}}\|(?:[ ]|{_RAW_TAB}){{0,8}}"
            r"[a-z0-9+/=_.~-]{8}",
            rare=("|",),  # the noun is in every test log; a table's bar is not
        ),
        # A tab, or plain spaces before a quote or a value with a digit early on; or prose
        # (`the key is V`, see above). One gate for both: they share the noun and the spaces,
        # and as two gates hyperscan ran two automata where the noun occurs.
        Gate(
            rf"{_NOUN_END}(?:\t{{1,8}}(?:{_TEXT_QUOTE}|{_DIGIT_SOON})|[ ]{{1,8}}"
            rf"(?:{prose}(?:{_TEXT_QUOTE}|{_DIGIT_IN_16})|{_TEXT_QUOTE}|{_DIGIT_SOON}))",
            rf"{_NOUN_END}(?:{_RAW_TAB}{{1,8}}(?:{QUOTE_RAW}|{_DIGIT_SOON})|[ ]{{1,8}}"
            rf"(?:{prose}(?:{QUOTE_RAW}|{_DIGIT_IN_16})|{QUOTE_RAW}|{_DIGIT_SOON}))",
        ),
    )


def _label_before(text: str, noun_start: int, noun_end: int, words: int, identifier: bool) -> str:
    """The label that ends with the noun at [noun_start, noun_end): the word it ends (`ApiKey`
    of `scrapingBeeApiKey`), then up to `words` words before it (`sanity auth token`). An
    `identifier` label is one name (`DEFAULT_ACCOUNT_KEY`), with no word before it."""
    chars = _IDENTIFIER_CHARS if identifier else _WORD_CHARS_SET
    start = noun_start
    floor = max(0, noun_end - _MAX_LABEL)
    while start > floor and text[start - 1] in chars:
        start -= 1
    if start > 0 and text[start - 1] in chars:
        return ""  # a run too long to be a name (base64, a hash)
    if identifier:
        return text[start:noun_end]
    for _ in range(words):
        before = _WORD_BEFORE.search(text, max(0, start - 32), start)
        if before is None or (before.start() > 0 and text[before.start() - 1].isalnum()):
            break
        start = before.start()
    return text[start:noun_end]


# How far before the end of one of these rules' gate matches the noun may start: the noun's
# end and its digits (28), a separator, a phrase or a table's description cell (at most 100), a
# name's rest and a `value:` (the name-value form, at most 130) and the value's first characters
# (8).
_NOUN_REACH = 200


def _noun_search(text: str) -> tuple[re.Pattern[str], str]:
    """The noun pattern and the subject to run it on: the lower-cased text, or, where
    lower-casing moves the offsets (`İ` becomes two characters), the slower caseless search."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return _NOUN_AT_WORD_END, lowered
    return _NOUN_ANY_CASE, text


def _nouns_in(text: str, low: int, high: int) -> Iterator[re.Match[str]]:
    pattern, subject = _noun_search(text)
    return pattern.finditer(subject, low, high)


def _nouns_near(text: str, ends: Iterable[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The nouns that start at most `_NOUN_REACH` characters before a gate match's end, in
    order, each once."""
    pattern, subject = _noun_search(text)
    spans: list[list[int]] = []
    for end, _ in sorted(ends):
        low = max(0, end - _NOUN_REACH)
        if spans and low <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([low, end])
    for low, high in spans:
        # A noun found here may run past `high`: search a little beyond, then keep only those
        # that start before it.
        for noun in pattern.finditer(subject, low, min(len(text), high + 40)):
            if noun.start() >= high:
                break
            yield noun


_WORD_CHARS_SET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_IDENTIFIER_CHARS = _WORD_CHARS_SET | {"_"}


@dataclass(frozen=True, slots=True, eq=False)
class _LabelledRule:
    name: str
    # The separator and the value, read from the end of the noun; the first form that holds
    # a credential wins (a table row may hold it in the next cell or after a description).
    after: tuple[re.Pattern[str], ...]
    gates: tuple[Gate, ...]
    reference: str
    words_before: int = 2  # words a label may have before the word holding its noun
    identifier: bool = False  # the label is one identifier (`const apiKey`)
    # `Authorization` names a header's credential only as a call's first argument: the other
    # forms' gates do not look for it.
    authorization: bool = False
    before: re.Pattern[str] | None = None  # what must stand before the label, if anything
    spaced: bool = False  # the label must be words apart (`API key`), not one name
    prose_bytes: int | None = None  # most UTF-8 bytes of prose before the colon (its gate's)
    kind: str = KIND
    anchors: tuple[str, ...] = ("pass", "pwd", "secret", "token", "key", "cred")
    context_only: bool = False
    # Its hits depend on the text alone and match its gates (see SameInAnyContext); not so for
    # the loose form, whose tab gate wants a digit early that its `find` does not.
    same_in_any_context: bool = True
    reach_before: int = 160
    reach_after: int = _MAX_VALUE + 16

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        return self._hits(text, _nouns_in(text, 0, len(text)))

    def find_near(
        self, text: str, context: ScanContext, ends: Iterable[tuple[int, int]]
    ) -> Iterator[Hit]:
        """What `find` reports, reading only the nouns that end within `_NOUN_REACH` characters
        before a gate match's end (every gate holds the noun, the separator and the value's
        start, each of bounded length)."""
        return self._hits(text, _nouns_near(text, ends))

    def _hits(self, text: str, nouns: Iterable[re.Match[str]]) -> Iterator[Hit]:
        resume = 0
        for noun in nouns:
            if noun.start() < resume:
                continue
            if (
                not self.authorization
                and text[noun.start() : noun.end()].lower() == "authorization"
            ):
                continue
            if self.before is not None and not self.before.search(
                text, max(0, noun.start() - 96), noun.start()
            ):
                continue
            label = _label_before(
                text, noun.start(), noun.end(), self.words_before, self.identifier
            )
            strength = _label_strength(label) if label else None
            if strength is None or (self.spaced and not any(c in label for c in " \t")):
                continue
            for after in self.after:
                match = after.match(text, noun.end())
                if match is not None and not self._prose_fits(match):
                    continue
                span = _value_of(text, match, label, strength) if match is not None else None
                if span is not None:
                    resume = span[1]
                    yield Hit(span[0], span[1], self.kind, self.name)
                    for first, last in companions_near(text, label, span[0]):
                        yield Hit(first, last, self.kind, self.name)
                    break

    def _prose_fits(self, match: re.Match[str]) -> bool:
        """Whether the prose between a label and its colon (`_PROSE`'s separator) is within
        `prose_bytes` of UTF-8, as the gate reads it on a raw line (40 characters of prose may
        be 160 bytes there)."""
        if self.prose_bytes is None:
            return True
        prose = match.group("sep").rstrip(" \t")[1:-1]
        return len(prose.encode("utf-8", "surrogatepass")) <= self.prose_bytes


def _value_of(
    text: str, match: re.Match[str], label: str, strength: Strength
) -> tuple[int, int] | None:
    """The span of the credential a separator-and-value match holds, if it is one."""
    start, end, quoted = _value_span(match)
    start, end = _trimmed(text, start, end, quoted)
    if end - start < 8:
        return None
    value = text[start:end]
    sep = match.group("sep")
    if not quoted and _PROSE_VERB.search(sep) and not any(c.isdigit() for c in value[:16]):
        return None  # `token is required`: the gate's condition for prose (see `_loose_gates`)
    bare_after_space = not quoted and not sep.strip() and strength is not Strength.STRONG
    if bare_after_space and not (len(value) >= 20 and has_char_classes(value, 3)):
        return None  # `api key 3f…` with nothing between: only a value no word could be
    if value.lower() in (w.lower() for w in _WORD_CHARS.findall(label)):
        return None
    return (start, end) if _generated(value, strength, quoted=quoted) else None


LOOSE_LABEL = _LabelledRule(
    name="labelled-secret",
    after=(_LOOSE, _LOOSE_AFTER_DESCRIPTION),
    gates=_loose_gates(),
    same_in_any_context=False,
    reference="separators as written in service docs and logs: ` - `, `->`, `|` table cells, "
    "tabs, `is`; judged like assignment/'s names (own rule)",
)
PROSE_LABEL = _LabelledRule(
    name="labelled-secret-prose",
    after=(_PROSE,),
    words_before=0,
    # A tab is `\t` on a raw line. The prose is at most 40 bytes of UTF-8, the gate's bound: a
    # wider bound made this gate cost half as much again as all the others together.
    prose_bytes=40,
    gates=(
        Gate(
            r"(?:token|key|password|secret)[ \t][^\n:]{1,40}:[ \t]{1,8}(?:"
            + _TEXT_QUOTE
            + "|"
            + _TOKEN_START
            + ")",
            rf"(?:token|key|password|secret)(?:[ ]|{_RAW_TAB})(?:[^:\\]|\\[^n]){{1,40}}:"
            rf"(?:[ ]|{_RAW_TAB}){{1,8}}(?:{QUOTE_RAW}|{_TOKEN_START})",
        ),
    ),
    reference="a credential named in a sentence that ends in a colon (own rule)",
)
COLON_LABEL = _LabelledRule(
    name="labelled-secret-colon",
    after=(_COLON,),
    spaced=True,
    gates=(
        Gate(
            rf"[a-z0-9][ \t]{_NOUN_END}:[ \t]{{1,8}}(?:{_TEXT_QUOTE}|{_TOKEN_START})",
            rf"[a-z0-9](?:[ ]|{_RAW_TAB}){_NOUN_END}:(?:[ ]|{_RAW_TAB}){{1,8}}"
            rf"(?:{QUOTE_RAW}|{_TOKEN_START})",
        ),
    ),
    reference="a label of words and a colon, as docs and dashboards print a key (own rule)",
)
NEXT_LINE_LITERAL = _LabelledRule(
    name="labelled-secret-next-line",
    after=(_NEXT_LINE,),
    identifier=True,
    gates=(
        Gate(
            rf"{_NOUN_END}[\"']?[ \t]{{0,8}}(?::?=|:|\{{|\(|\|\||\?\?)?[ \t]{{0,8}}\r?\n[ \t]{{0,40}}(?:=[ \t]{{0,8}})?{_TEXT_QUOTE}",
            rf"{_NOUN_END}{QUOTE_RAW}?[ ]{{0,8}}(?::?=|:|\{{|\(|\|\||\?\?)?[ ]{{0,8}}{_RAW_NL}(?:[ ]|{_RAW_TAB}){{0,40}}"
            rf"(?:=[ ]{{0,8}})?{QUOTE_RAW}",
        ),
    ),
    reference="a string literal on the line after its name (C#, Java, JS, C++ style; own rule)",
)

PAIR_LITERAL = _LabelledRule(
    name="labelled-secret-pair",
    after=(_PAIR,),
    authorization=True,
    anchors=("pass", "pwd", "secret", "token", "key", "cred", "authorization"),
    gates=(
        Gate(
            r"(?:keys?|tokens?|secrets?|passwords?|passwd|passphrase|pwd|credentials?|"
            r"authorization)[0-9]*" + _TEXT_QUOTE + r"\]?[ \t]{0,4},[ \t]{0,4}" + _TEXT_QUOTE,
            r"(?:keys?|tokens?|secrets?|passwords?|passwd|passphrase|pwd|credentials?|"
            r"authorization)[0-9]*"
            + QUOTE_RAW
            + r"\]?(?:[ ]|\\t){0,4},(?:[ ]|\\t){0,4}"
            + QUOTE_RAW,
        ),
    ),
    reference="a quoted name and its quoted value as two arguments or a pair: header-setting "
    "calls (Go http.Header.Set, XMLHttpRequest.setRequestHeader), C# initializers (own rule)",
)

_NV_STEM = r"(?:pass|pwd|secret|token|key|cred)[a-z0-9_.-]{0,40}"
NAME_VALUE = _LabelledRule(
    name="labelled-secret-name-value",
    after=(_NAME_VALUE,),
    before=_NAME_BEFORE,
    gates=(
        Gate(
            rf"name{_TEXT_QUOTE}?[ \t]{{0,4}}[:=][ \t]{{0,4}}{_TEXT_QUOTE}?[a-z0-9_.-]{{0,60}}"
            rf"{_NV_STEM}{_TEXT_QUOTE}?[ \t]{{0,4}},?[ \t]{{0,4}}(?:\r?\n[ \t]{{0,40}}(?:-[ \t]{{1,4}})?)?"
            rf"{_TEXT_QUOTE}?value{_TEXT_QUOTE}?[ \t]{{0,4}}[:=]",
            rf"name{QUOTE_RAW}?[ ]{{0,4}}[:=][ ]{{0,4}}{QUOTE_RAW}?[a-z0-9_.-]{{0,60}}"
            rf"{_NV_STEM}{QUOTE_RAW}?[ ]{{0,4}},?[ ]{{0,4}}(?:{_RAW_NL}(?:[ ]|{_RAW_TAB}){{0,40}}(?:-[ ]{{1,4}})?)?"
            rf"{QUOTE_RAW}?value{QUOTE_RAW}?[ ]{{0,4}}[:=]",
        ),
    ),
    reference="name/value pairs: Kubernetes EnvVar (name, value), ECS container definition "
    "environment entries (own rule)",
)

RULES = (LOOSE_LABEL, COLON_LABEL, PROSE_LABEL, NEXT_LINE_LITERAL, PAIR_LITERAL, NAME_VALUE)
