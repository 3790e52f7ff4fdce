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

The modules: `names` (what a name says: `classify_name`, `Strength`, the word lists),
`assigned_value` (reading the value after an operator and judging it), `candidates` (where names
are looked for, near the gates' matches), `precheck` (the raw-line precheck), `rule` (the gates
and the `sensitive-assignment` rule), `credential_source` (the context-only rule that takes
every value of a `.env` read, an env dump or a credential file).
"""

from __future__ import annotations

from scrubber.detection.rules.assignment.assigned_value import (
    AssignedValue,
    accept_value,
    read_value,
)
from scrubber.detection.rules.assignment.names import Strength, classify_name
from scrubber.detection.rules.assignment.rule import (
    KIND,
    RULES,
    SENSITIVE_ASSIGNMENT,
    SensitiveAssignmentRule,
)

__all__ = [
    "KIND",
    "RULES",
    "SENSITIVE_ASSIGNMENT",
    "AssignedValue",
    "SensitiveAssignmentRule",
    "Strength",
    "accept_value",
    "classify_name",
    "read_value",
]
