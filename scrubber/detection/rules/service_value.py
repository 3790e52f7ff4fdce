"""A quoted credential after a service's name at the start of a line, with no operator and no
credential word: `kraken 'V'`, `mite 'V' 'account.mite.yo.lk'`. (With an operator it is an
assignment, `alphabet = "0123…xyz"`, which only a credential-like name makes a secret.)

Config snippets, READMEs and test fixtures write a service's credentials this way: the name
of the service, then its key (and maybe its id or host) as quoted strings. With no word saying
"key", the value alone must carry the proof: a single quoted run, at least 12 characters, that
mixes upper- and lower-case letters and digits, or lower-case letters and many digits, and is
none of the generated things that are not secrets (a hex digest or commit, a uuid, a version,
a path or URL). The line must hold nothing but the name and such quoted strings, so that a
command or a call (`echo 'Ab12…'`, `print("…")`) is not read as one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import shannon_entropy
from scrubber.detection.rules.values import (
    is_filler,
    is_trivial,
    is_uuid,
    looks_like_locator,
    looks_like_template_or_regex,
)

KIND = "labelled-secret"
# A line's start: the text's start or a newline, then the prefix of a Read (`    12→`) or of a
# grep match (`path/file.txt:3:`), then spaces.
_LINE = re.compile(
    r"(?:^|(?<=\n))[ \t]*(?:\d{1,6}\u2192|[\w./-]{1,200}:\d{1,6}:)?[ \t]*"
    r"(?P<label>[a-z][a-z0-9]{2,23})(?P<values>(?:[ \t,]+(?:(?P=label)[ \t]+)?(?P<q>['\"])[^'\"\n]{1,256}(?P=q)){1,3})"
    r"[ \t,;]*(?=\n|$)"
)
_QUOTED = re.compile(r"""(['"])([^'"\n]{1,256})\1""")
# `service: KEY / user@example.com`: a service's credential written with its account's email.
_WITH_EMAIL = re.compile(
    r"(?:^|(?<=\n))[ \t]*(?:\d{1,6}\u2192|[\w./-]{1,200}:\d{1,6}:)?[ \t]*"
    r"(?P<label>[a-z][a-z0-9]{2,23}):[ \t]+(?P<value>[^\s/]{8,128})[ \t]*/[ \t]*"
    r"[^\n@]{0,40}?[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
)
# Words that start a line of code or a shell command, not a service's name.
_NOT_A_SERVICE = frozenset(
    {
        "echo", "print", "printf", "puts", "say", "export", "set", "let", "var", "const", "return",
        "yield", "raise", "throw", "assert", "import", "from", "require", "include", "use",
        "source", "cd", "ls", "cat", "grep", "rg", "find", "git", "npm", "npx", "pip", "uv",
        "docker", "kubectl", "curl", "wget", "ssh", "scp", "sudo", "run", "exec", "eval",
        "open", "rm", "mv", "cp", "mkdir", "touch", "chmod", "chown", "tar", "sed", "awk",
        "commit", "sha", "hash", "digest", "checksum", "id", "uuid", "guid", "version", "tag",
        "ref", "branch", "image", "name", "title", "label", "path", "file", "url", "host",
        "email", "user", "msg", "message", "log", "debug", "info", "warn", "error", "case",
        "when", "then", "else", "elif", "and", "or", "not", "in", "is", "def", "class", "fn",
        "func", "function", "new", "delete", "typeof", "await", "async", "test", "it",
        "describe", "expect", "alias", "local", "declare", "readonly", "integrity", "nonce",
        "salt", "iv", "signature", "sig", "etag", "cursor", "state", "code", "session",
    }
)  # fmt: skip
_HEX = re.compile(r"[0-9a-fA-F]+")
_HOST_END = re.compile(r"\.[a-z]{2,6}$")


def _strongly_generated(value: str) -> bool:
    """A value that no word, name, digest, id or path is shaped like."""
    if len(value) < 12 or " " in value or is_trivial(value) or is_filler(value):
        return False
    if is_uuid(value) or _HEX.fullmatch(value) or looks_like_locator(value):
        return False
    if looks_like_template_or_regex(value) or value.count(".") > 2 or _HOST_END.search(value):
        return False  # a host name (`acct.mite.yo.lk`, `x1.loggly.com`), a dotted version
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    digits = sum(c.isdigit() for c in value)
    if upper and lower and digits:
        return shannon_entropy(value) >= 3.0
    # One case of letters and many digits (`2w3933xk6uav9ff2`, `H1EC2BUPZ22S`).
    letters = sum(c.isalpha() for c in value)
    return digits >= 3 and letters >= 4 and shannon_entropy(value) >= 3.0


def _paired_with_email(value: str) -> bool:
    """A credential written before its account's email: the pairing vouches for it, so any
    generated shape counts (hex, a uuid), but not a word, a number or a placeholder."""
    if is_trivial(value) or is_filler(value) or looks_like_locator(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_letter = any(c.isalpha() for c in value)
    return has_digit and has_letter and shannon_entropy(value) >= 2.8


@dataclass(frozen=True, slots=True, eq=False)
class ServiceValueRule:
    name: str = "labelled-secret-service"
    kind: str = KIND
    # The gate below wakes the rule; the one literal every match holds is the space (or tab)
    # between the name and its value (or a tab: the gate allows both), so the anchors say only that.
    anchors: tuple[str, ...] = (" ",)
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reach_before: int = 240
    reach_after: int = 800
    reference: str = "credentials written after a service's name in configs and fixtures (own rule)"
    gates: tuple[Gate, ...] = (
        Gate(
            r"[a-z][a-z0-9]{2,23}:[ \t]+[^ \t/]{8}[^/\n]{0,120}/[ \t]*[^\n@]{0,40}@",
            r"[a-z][a-z0-9]{2,23}:[ ]+[^ /]{8}[^/]{0,240}/[ ]*[^@]{0,80}@",
            # Any `name: ` opens it, and the `@` it ends at is on few lines.
            rare=("@",),
        ),
        # Case as the rule reads it (a lower-case name), the quotes it takes (not a backtick),
        # and the name's length unbounded: each of these makes the automaton hyperscan runs
        # at every `"` and `\\n` of a raw line cheaper (it cost most of the scan's time).
        Gate(
            r"(?:^|\n|\xe2\x86\x92|:[0-9]{1,6}:)[ \t]*[a-z][a-z0-9]*[ \t,]+"
            r"""\\{0,3}['"][A-Za-z0-9+/=_.~-]{12}""",
            r"(?:\\n|\\t|\\u2192|\xe2\x86\x92|:[0-9]{1,6}:|\")[ ]*[a-z][a-z0-9]*[ ,]+"
            r"""(?:\\{1,7}"|\\{0,7}')[A-Za-z0-9+/=_.~-]{12}""",
            caseless=False,
        ),
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        for pair in _WITH_EMAIL.finditer(text):
            value = pair.group("value")
            if pair.group("label") not in _NOT_A_SERVICE and _paired_with_email(value):
                yield Hit(pair.start("value"), pair.end("value"), self.kind, self.name)
        for line in _LINE.finditer(text):
            if line.group("label") in _NOT_A_SERVICE:
                continue
            offset = line.start("values")
            for quoted in _QUOTED.finditer(line.group("values")):
                # Without the spaces that may pad it inside its quotes (`'abc= '`).
                value = quoted.group(2).strip(" ")
                if value and _strongly_generated(value):
                    start = offset + quoted.start(2) + quoted.group(2).index(value)
                    yield Hit(start, start + len(value), self.kind, self.name)


SERVICE_VALUE = ServiceValueRule()

RULES = (SERVICE_VALUE,)
