"""The value assigned to a name: where it sits after the operator (`read_value`, quotes and
their escapes, an unquoted value's end) and whether it is a secret (`accept_value` and the
filters of code, UI strings, references and names that it applies)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from scrubber.detection.detector import ScanContext
from scrubber.detection.rules.assignment.names import Strength
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

# After the name: a closing quote or subscript (`"api_key":`, `ENV["TOKEN"] =`), an optional
# type annotation (`PASSWORD: str = …`, `token?: string =`), the operator, then spaces.
_SEPARATOR = re.compile(
    r"""(?P<close>\\?["'`])?\]?\??
    (?:[ \t]{0,4}:[ \t]{0,4}[A-Za-z_][\w.]{0,30}(?:\[[^\]\n]{0,40}\])?[ \t]{0,4}(?==[^=]))?
    (?P<before>[ \t]{0,8})
    (?P<op>:::=|::=|:=|\?=|\+=|=>|=(?![=~])|:(?![:/\\])|\|\||\?\?)
    (?P<after>[ \t]*)""",
    re.VERBOSE,
)
# `define('DB_PASSWORD', '…')`, `setenv("TOKEN", "…")`, `config.set('auth', 'token', '…')`.
_CALL_SEPARATOR = re.compile(r"""(?P<close>\\?["'])[ \t]{0,4},[ \t]{0,4}(?P<after>)""")
_FALLBACKS = ("||", "??")  # a fallback's default (JS/TS `||`, `??`)
_MAX_GAP = 16  # a masked placeholder leaves 21+ spaces behind a label: never bridge that
# An unquoted value runs to a space, a quote or punctuation that ends it in code (`;`, `<`);
# a comma ends it too unless more of the value follows at once (`A,.:-…` in an INI file).
_UNQUOTED = re.compile(r"""(?:[^\s"'`\\;,<>]|,(?=[^\s,])|\\(?![nrt"'\\/]))+""")
MAX_VALUE = 4096
_PROSE_AFTER = re.compile(r" [A-Za-z]")
_COMPOSED = re.compile(r"[A-Za-z][-_.][A-Za-z]")
# Groups of upper-case letters and digits joined by hyphens, as license and product keys are
# written (at least 3 groups of 3 to 8).
_LICENSE_SHAPE = re.compile(r"^[A-Z0-9]{3,8}(?:-[A-Z0-9]{3,8}){2,}$")
# Words joined by `-`/`_` (`auth-scheme`); the first may start with a number glued to it, as
# product names do (`1password-service-account-token`, `2fa-secret`, `7zip-password`).
_JOINED_WORDS = re.compile(r"^(?:[0-9]{1,3})?[a-z][a-z0-9]*(?:[-_](?:[a-z][a-z0-9]*|[0-9]+))+$")
# A number glued to the front of a word is a name (`1password`), not a generated part.
_NUMBERED_WORD = re.compile(r"[0-9]{1,3}[a-z]+")
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
_CLOSERS = {")": "(", "]": "[", "}": "{"}


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
        rf"(?:[^{re.escape(quote)}\\\n]|\\[^\n]){{0,{MAX_VALUE}}}(?={re.escape(quote)})"
    )
    for quote in ('"', "'", "`")
}
_ESCAPED_STRING_REST = {
    quote: re.compile(
        rf"(?:[^\\\n]|\\(?!{re.escape(quote[1])}|n)){{0,{MAX_VALUE}}}(?={re.escape(quote)})"
    )
    for quote in ('\\"', "\\'")
}


def _closing_quote(text: str, start: int, quote: str) -> int:
    """Index of the quote that closes a string opened just before `start`; -1 if none on the
    same line (within `MAX_VALUE`)."""
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
    if match is None or match.end() - pos > MAX_VALUE:
        return None
    end = _trim_unquoted(text, pos, match.end())
    if end <= pos:
        return None
    prose = _PROSE_AFTER.match(text, end) is not None
    return AssignedValue(pos, end, False, op, spaced, prose)


# A value of one or two escape sequences only: a byte or character literal (`"\xff"`,
# `"\x00\x01"`, `"\u0000"`, `"\n"`) in code or a test, never a password someone chose; with its
# backslash escaped again when the literal sits in a string of code. Only one or two: a key or
# a password can be written as escapes too (`b"\x8f\x3a…"`, `$'\x68\x75…'`), and three bytes
# are already more than any literal of this kind holds.
_FEW_ESCAPES = re.compile(
    r"(?:\\{1,2}(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|[abfnrtv\\])){1,2}"
)


def _looks_like_sentence(value: str) -> bool:
    return " " in value.strip()


def accept_value(
    value: str, strength: Strength, name: str, found: AssignedValue, context: ScanContext
) -> bool:
    """Whether `value`, assigned to a credential-like `name`, is a secret."""
    if len(value) > MAX_VALUE or is_trivial(value) or "\n" in value:
        return False
    if is_filler(value) or is_public_material(value) or _FEW_ESCAPES.fullmatch(value):
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
        _GENERATED_PART.fullmatch(part) and not _NUMBERED_WORD.fullmatch(part)
        for part in re.split(r"[-_]", value)
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


def bare_key_value(value: str) -> bool:
    """A value a lone `key =` may hold as a credential (a log's `Using Key=…`): long and
    generated-looking, not a file name, a path or a URL."""
    if len(value) < 16 or len(value) > MAX_VALUE or looks_like_locator(value):
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


def credential_part(text: str, found: AssignedValue) -> AssignedValue:
    """The credential inside a quoted value: without the spaces that pad it (`" abc "`), and
    without an authentication scheme written before it (`"Bearer abc"`)."""
    if not found.quoted:
        return found
    start, end = quoted_credential_span(text, found.start, found.end)
    if (start, end) == (found.start, found.end) or " " in text[start:end]:
        return found
    return dataclasses.replace(found, start=start, end=end)


def value_after_name(text: str, start: int, end: int, before: str) -> AssignedValue | None:
    """The value assigned to the name at [start, end) of `text` (`before`: the character just
    before the name), by whichever syntax follows it: an operator, `<name>…</name>`, or a
    call's first argument."""
    if before == "<" and text.startswith(">", end):
        close = text.find("</", end + 1, end + 1 + MAX_VALUE)
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
    if op in _FALLBACKS:
        # `process.env.API_TOKEN || "…"`, `env["TOKEN"] ?? '…'`: the default written into the
        # code is the credential; only a literal is one (`a || b` is code).
        return found if found is not None and found.quoted else None
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
