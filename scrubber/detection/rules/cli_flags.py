"""Keys, tokens and secrets given to any command as a flag whose name says so: `--api-key V`,
`--client-secret=V`, `-StorageAccountKey V` (PowerShell and Azure cmdlets take single-dash long
parameters), `-AzureDefaultAccountKey="V"` (Go's `flag` package accepts `-name=value` and
`-name value`), `-Password:V` (PowerShell's `-Name:value` form); and the plain text handed to
PowerShell's `ConvertTo-SecureString … -AsPlainText`.

The flag's name is judged by its words like any other name (assignment/names.py's
`classify_name`: snake, kebab, camelCase, run-together `storagekey`), so no list of vendors or
tools is needed; cli_password.py keeps the tool-specific short flags (`mysql -p`, `sshpass -p`),
whose meaning only the tool's manual gives. Not secrets: flags that name where the secret is
(`--token-file`, `--password-stdin`, `--api-key-env`), what it is about (`--key-id`,
`--public-key`), and values that are references (`$TOKEN`, `<token>`, `@file`) or the next flag.

References: GNU getopt_long (`--name value`, `--name=value`); pkg.go.dev/flag ("-flag=x",
"-flag x"); learn.microsoft.com PowerShell about_Parameters (`-Name value`, `-Name:value`) and
ConvertTo-SecureString (`-AsPlainText`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import QUOTE_RAW, QUOTE_TEXT, WS, Gate
from scrubber.detection.rules.assignment import Strength, classify_name
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import (
    has_char_classes,
    is_filler,
    is_public_material,
    is_trivial,
    is_uuid,
    looks_like_code,
    looks_like_locator,
    looks_like_template_or_regex,
    looks_token_like,
    name_words,
)

KIND = "cli-secret-flag"

# Last words of a flag that say where the secret comes from or what it is about, beyond those
# `classify_name` already passes over (`--password-stdin`, `--token-fd 3`, `--secret-from-env`).
_NOT_SECRET_LAST = frozenset(
    {
        "stdin", "fd", "env", "from", "source", "cmd", "command", "program", "helper", "prompt",
        "file", "files", "path", "dir", "name", "id", "ids", "type", "url", "uri", "store",
        "ring", "chain", "vault", "length", "bits", "size", "len", "out", "output", "format",
        "algorithm", "server", "host", "endpoint", "mode", "only", "ref", "arn", "outfile",
        "infile", "units", "unit", "validity", "duration", "seconds", "configurations", "infos",
        "info", "count", "signature",
    }
)  # fmt: skip
# Words anywhere in a flag that make it about something else: `--no-auth`, `--skip-token`,
# `--show-secret` (a switch), `--ssh-key` (usually a path or a name), and tokens that are ids or
# cursors: `--starting-token` (AWS CLI pagination), `--registration-token`, `--device-key`
# (Cognito's device id), `--copy-product-token` (an idempotency token).
_NOT_SECRET_WORDS = frozenset(
    {
        "no", "skip", "show", "hide", "without", "disable", "enable", "use", "ssh", "gpg", "pgp",
        "starting", "registration", "device", "copy", "work", "pagination", "idempotency",
    }
)  # fmt: skip
# Names written in one word (flags and query parameters often are) that end in a word that makes
# them a key: `-storagekey`, `tokenkey`, `authkey`, `subscriptionkey`.
_RUN_TOGETHER = re.compile(
    r"(?:storage|account|api|auth|access|secret|master|shared|token|client|app|private|"
    r"subscription|admin|signing|encryption|license|service|session|user)key$"
)


def secret_name_strength(name: str) -> Strength | None:
    """How strongly a flag's, element's or parameter's name says that its value is a secret;
    None when it does not (see assignment/names.py's `classify_name`, which this extends for
    run-together lower-case names and for the words that say where a secret is rather than what
    it is)."""
    words = name_words(name)
    if not words or words[-1] in _NOT_SECRET_LAST or _NOT_SECRET_WORDS.intersection(words):
        return None
    strength = classify_name(name)
    if strength is None and len(words) == 1 and _RUN_TOGETHER.search(words[0]):
        return Strength.KEY
    return strength


def credential_value(value: str, strength: Strength) -> bool:
    """Whether a value under a secret-like name is shaped like a credential, not like a word, a
    reference, a path or code. A password-like name takes any value with a digit, a symbol or
    mixed case; a key- or token-like name needs a generated-looking value."""
    if is_trivial(value) or is_filler(value) or is_public_material(value):
        return False
    if value[0] in "-$<[{(%@&*" or value[-1] in ">]}":
        return False  # the next flag, `$TOKEN`, `<token>`, `{token}`, `@token.txt`
    if looks_like_locator(value) or looks_like_template_or_regex(value):
        return False
    if looks_like_code(value) and not looks_token_like(value, 16):
        return False
    if strength is Strength.STRONG:
        return len(value) >= 6 and has_char_classes(value, 2)
    if is_uuid(value):
        return strength is Strength.MEDIUM  # `--api-key <uuid>`: many vendors' keys are uuids
    return looks_token_like(value, 12)


# A flag after whitespace: one or two dashes, a name of words, then `=`, `:` or spaces; the value
# maybe quoted, to the end of the shell word.
_FLAG = re.compile(
    r"(?<=\s)--?(?P<name>[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+){0,8})(?P<sep>=|:|[ \t]+)"
    r"""(?P<q>\\?['"]?)(?P<secret>[^\s'"`\\]{1,1024})(?P=q)(?=[\s;&|)]|$)"""
)
_KEYWORDS = r"(?:pass|pwd|secret|token|key|auth|cred)"
_QUOTES = (QUOTE_TEXT, QUOTE_RAW)


def _flag_gate(quote: str) -> str:
    # Whitespace, a dash or two, a name holding a keyword, a separator, a value's first character.
    return (
        rf"{WS}--?[a-z][a-z0-9_.-]{{0,60}}{_KEYWORDS}[a-z0-9_.-]{{0,40}}"
        rf"(?:=|:|(?:[ \t]|\\t)+)(?:{quote})?[a-z0-9+/_.~]"
    )


@dataclass(frozen=True, slots=True)
class SecretFlagRule:
    """The value of a flag whose name says it holds a secret, for any command."""

    name: str = "cli-secret-flag"
    kind: str = KIND
    anchors: tuple[str, ...] = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
    gates: tuple[Gate, ...] = (Gate(_flag_gate(QUOTE_TEXT), _flag_gate(QUOTE_RAW)),)
    reach_before: int = 128
    reach_after: int = 1100
    context_only: bool = False
    reference: str = (
        "GNU getopt_long; pkg.go.dev/flag; learn.microsoft.com PowerShell about_Parameters"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        for match in _FLAG.finditer(text):
            name = match.group("name")
            dashes = match.start("name") - match.start()
            if dashes == 1 and len(name) < 4:
                continue  # `-k`, `-key`: a tool's own short flag (cli_password.py)
            strength = secret_name_strength(name)
            if strength is None:
                continue
            value = match.group("secret")
            if match.group("sep") == ":" and dashes == 2:
                continue  # `--token:` is prose or a YAML key, not a flag
            if not match.group("q") and strength is Strength.STRONG and value.isalpha():
                continue  # `--password option`: prose
            if credential_value(value, strength):
                yield Hit(match.start("secret"), match.end("secret"), self.kind, self.name)


SECRET_FLAG = SecretFlagRule()

SECURE_STRING_PLAINTEXT = PatternRule(
    name="powershell-plaintext-secure-string",
    kind=KIND,
    pattern=r"(?i:ConvertTo-SecureString)\s+(?:-String\s+)?(?P<q>['\"])(?P<secret>[^'\"`$\n]{1,512})"
    r"(?P=q)\s+(?:-\w+\s+)*?-AsPlainText",
    anchors=("convertto-securestring",),
    reference="learn.microsoft.com/powershell/module/microsoft.powershell.security/"
    "convertto-securestring (-AsPlainText: the string is a plain-text secret)",
    reject=is_trivial,
)

RULES = (SECRET_FLAG, SECURE_STRING_PLAINTEXT)
