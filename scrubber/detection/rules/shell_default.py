"""Secrets written as the default of a shell parameter expansion: `${POSTGRES_PASSWORD:-…}`,
`${API_TOKEN-…}`, `${SECRET_KEY:=…}`.

Docker Compose files, entrypoint scripts and CI configs write a credential's fallback this way
(`POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-…}`): whoever runs them without the variable set gets
that default, so it is a credential written into the file. The assignment rules rightly take
`${NAME}` for a reference to a value kept elsewhere, which also passed over the default inside
it. The variable's name says whether the default is a secret (judged by its words, as a flag's
name is: cli_flags.py), and the default must be shaped like one: a literal, not a reference
(`${A:-$B}`, `${A:-$(cat f)}`), an empty or placeholder default (`${A:-}`, `${A:-changeme}`)
or an error message (`${A:?message}`, which is no default at all).

References: POSIX Shell Command Language, 2.6.2 Parameter Expansion (`${parameter:-word}`,
`${parameter-word}`, `${parameter:=word}`, `${parameter=word}`); Docker Compose
"Interpolation" (docs.docker.com/compose/how-tos/environment-variables/variable-interpolation:
`${VAR:-default}`, `${VAR-default}`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate
from scrubber.detection.rules.cli_flags import credential_value, secret_name_strength

KIND = "dotenv-value"  # a value a credential-like name stands for, as the assignment rules say

_NAME_MAX = 64
_KEYWORDS = r"(?:pass|pwd|secret|token|key|auth|cred)"
# `${NAME:-word}` and its three siblings; the word maybe quoted, never holding what would end
# the expansion or start another one (`}`, `$`, a backquote) or span lines.
_EXPANSION = re.compile(
    rf"\$\{{(?P<name>[A-Za-z_][A-Za-z0-9_]{{0,{_NAME_MAX - 1}}})(?P<op>:?[-=])"
    r"""(?P<q>['"]?)(?P<secret>[^\s'"`$}\\]{1,1024})(?P=q)\}"""
)
_HAS_KEYWORD = re.compile(_KEYWORDS, re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ShellDefaultRule:
    """The default value of a credential-named shell variable's expansion."""

    name: str = "shell-default-secret"
    kind: str = KIND
    anchors: tuple[str, ...] = ("${",)
    # `${`, a name, the operator: no character JSON escapes, so the same on a raw line. Not the
    # credential word inside the name: with it, hyperscan looks for the words first (`pass`,
    # `token`, on every line of a test log) and the gate cost 0.07 s per 100 MB; without it,
    # nothing measurable (`${` is rare, and `find` judges the name).
    gates: tuple[Gate, ...] = (Gate(rf"\$\{{[a-z_][a-z0-9_]{{0,{_NAME_MAX - 1}}}:?[-=]"),)
    reach_before: int = _NAME_MAX + 16
    reach_after: int = 1100
    context_only: bool = False
    reference: str = (
        "POSIX Shell Command Language 2.6.2 Parameter Expansion; Docker Compose variable "
        "interpolation (${VAR:-default})"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        if "${" not in text:
            return
        for match in _EXPANSION.finditer(text):
            name = match.group("name")
            if not _HAS_KEYWORD.search(name):
                continue  # cheaper than judging its words: a name without one names no secret
            strength = secret_name_strength(name)
            if strength is not None and credential_value(match.group("secret"), strength):
                yield Hit(match.start("secret"), match.end("secret"), self.kind, self.name)


RULES = (ShellDefaultRule(),)
