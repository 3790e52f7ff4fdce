"""The `sensitive-assignment` rule: its gates (what the scanner's prefilter looks for before the
rule reads a text at all) and the rule, which finds each candidate name, classifies it, reads
the value after its operator and judges it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from scrubber.detection.detector import PLAIN, ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import QUOTE_RAW, Gate
from scrubber.detection.rules.assignment.assigned_value import (
    MAX_VALUE,
    accept_value,
    bare_key_value,
    credential_part,
    value_after_name,
)
from scrubber.detection.rules.assignment.candidates import (
    GATE_REACH,
    candidate_search,
    near_candidates,
)
from scrubber.detection.rules.assignment.names import (
    MAX_NAME,
    Strength,
    classify_name,
    is_bare_key,
)
from scrubber.detection.rules.assignment.precheck import (
    decode_text_line,
    secret_names_on_raw_line,
    text_line_around,
)
from scrubber.detection.rules.credential_pairs import companions_near

KIND = "dotenv-value"

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
    # `||` and `??` (a fallback's default): only a quoted literal is taken after them.
    strong = (
        rf"(?:{closed}(?::{{0,3}}=|[?+]=|=(?:[^=~]|$)|:{t}|:{t}{{0,4}}[a-z_]|"
        rf"(?:\|\||\?\?){t}{{0,16}}{q})|{q}\]?\??{t}{{0,8}}:|{q}{t}{{0,4}},|>)"
    )
    # The value may open with a quote and spaces (`" abc "`) and an authentication scheme
    # (`"Bearer abc"`): `credential_part` takes what follows them.
    scheme = rf"(?:{q}{t}{{0,4}})?(?:(?:bearer|basic|token|bot|digest|ssws|apikey|key){t}{{1,4}})?"
    value = rf"{t}{{0,16}}{scheme}{v}{{8}}"
    # `=>?`: PHP's and Ruby's `'account_key' => '…'` as well as `=`.
    medium = (
        rf"(?:{closed}(?::{{0,3}}=|[?+]=|=>?|:{t}|\|\||\?\?)|{q}\]?\??{t}{{0,8}}:|{q}{t}{{0,4}},|>)"
        rf"{value}"
        r"|:[a-z0-9+/=_-]{20}"  # `…AccessKey:TP+G/…`: glued, judged by `_glued_credential`
    )
    # `API_KEY: str = "…"`: an annotation between the name and `=` (`_SEPARATOR`'s: an
    # identifier, UTF-8 or escaped, then maybe `[…]` on the same line; hyperscan refuses the
    # bounded repeats of the rule's own pattern here, so the gate leaves them unbounded).
    annotated = rf"{closed}:{t}{{0,4}}[a-z_]{ident}*(?:\[{inner}*\])?{t}{{0,4}}={value}"
    return strong, medium, annotated


def _assignment_gates() -> tuple[Gate, ...]:
    """STRONG, MEDIUM, MEDIUM with an annotation (in that order: candidates.py's `GATE_REACH`
    counts on it)."""
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


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ASSIGNMENT_GATES = _assignment_gates()


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
    # starts at most about 100 characters before, the value runs at most `MAX_VALUE` after.
    reach_before: int = 128
    reach_after: int = MAX_VALUE + 16
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
        for start, end in secret_names_on_raw_line(data, ends):
            line = text_line_around(data, start, end)
            if line is None or self._may_hit_on_line(*line):
                return True
        return False

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one rule object for the process's life
    def _may_hit_on_line(self, raw_line: bytes, name_at: int, name_length: int) -> bool:
        """The rule's answer for a name in one line of text, given as raw JSON string bytes;
        cached, as transcripts repeat lines (a file read twice, an output stored twice)."""
        decoded = decode_text_line(raw_line, name_at)
        if decoded is None:
            return True
        line, offset = decoded
        return self._assignment(line, offset, offset + name_length, PLAIN) is not None

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        pattern, subject = candidate_search(text)
        return self._hits(text, context, pattern.finditer(subject))

    def find_near(
        self, text: str, context: ScanContext, ends: Iterable[tuple[int, int]]
    ) -> Iterator[Hit]:
        """What `find` reports, reading only the names whose operator lies within a gate match
        (`ends`: where the scanner's gates matched, as character offsets, and which gate). Every
        hit's name and operator lie within a match of one of the gates, so no hit is lost, and a
        long tool output full of `token: str` annotations costs a few regex steps per gate
        match instead of a Python step per keyword."""
        pattern, subject = candidate_search(text)
        matches = near_candidates(pattern, subject, ends, GATE_REACH)
        return self._hits(text, context, matches)

    def _hits(
        self, text: str, context: ScanContext, candidates: Iterable[re.Match[str]]
    ) -> Iterator[Hit]:
        resume = 0
        for candidate in candidates:
            if candidate.start() < resume:
                continue
            start = candidate.start()
            floor = max(0, start - MAX_NAME)
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
        if not name or len(name) > MAX_NAME:
            return None
        before = text[start - 1] if start > 0 else "\n"
        if before in "?&":
            return None  # a URL query parameter: connection_string.py's rule
        if before == ":" and text[start - 2 : start - 1] == ":":
            return None  # a qualified type name: `AWS::SecretsManager::Secret`, `Foo::Token`
        strength = classify_name(name)
        bare_key = strength is None and is_bare_key(name)
        if strength is None and not bare_key:
            return None
        found = value_after_name(text, start, start + len(name), before)
        if found is None:
            return None
        if bare_key:
            # `Using Key=…`, `key = …` in a log line: a lone `key` names a credential only when
            # assigned with `=` a generated-looking value (a map's `key:` names anything).
            if found.op != "=" or not bare_key_value(text[found.start : found.end]):
                return None
            strength = Strength.MEDIUM  # the shape was judged above
        if strength is None:
            return None
        found = credential_part(text, found)
        value = text[found.start : found.end]
        if not accept_value(value, strength, name, found, context):
            return None
        return Hit(found.start, found.end, self.kind, self.name)


SENSITIVE_ASSIGNMENT = SensitiveAssignmentRule()

RULES = (SENSITIVE_ASSIGNMENT,)
