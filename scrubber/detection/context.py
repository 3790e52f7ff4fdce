"""What a tool call tells us about the text it produced.

A `tool_result` whose `tool_use` read `.env`, or ran `printenv`, holds secrets that look like
ordinary words (a short database password, an API key of a few letters). Knowing that, the scanner runs its
context-only detectors on that text. Stdlib only: the status line uses this module.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from scrubber.detection.detector import SourceKind

# File names (the last path component, lower-cased) that hold credentials by convention.
_DOTENV_NAME = re.compile(r"^(?:\.env(?:\..*)?|.*\.env|\.envrc|\.flaskenv|env\.(?:local|sh))$")
_PRIVATE_KEY_NAME = re.compile(
    r"^(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|.*\.(?:pem|key|p8|ppk)|.*private.*key.*)$"
)
_CREDENTIAL_NAMES = frozenset(
    {
        "credentials",  # ~/.aws/credentials, ~/.config/gcloud/credentials
        "credentials.json",
        "application_default_credentials.json",  # gcloud ADC
        "service-account.json",
        "service_account.json",
        "kubeconfig",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".dockercfg",
        "terraform.tfvars",
        "secrets.yaml",
        "secrets.yml",
        "secrets.json",
        "secrets.toml",
        ".htpasswd",
        "vault.yml",
        ".my.cnf",
        "wp-config.php",
        "master.key",
        "hosts.yml",  # gh CLI: ~/.config/gh/hosts.yml holds oauth_token
    }
)
_CREDENTIAL_PATH_PARTS = (
    (".aws", "config"),
    (".kube", "config"),
    (".docker", "config.json"),
    (".ssh", None),
    (".gnupg", None),
)
_CREDENTIAL_SUFFIXES = (".tfvars", ".tfstate", ".pfx", ".p12", ".jks", ".keystore")

# Commands whose output is a dump of secrets, or of the environment.
_ENV_DUMP = re.compile(
    r"(?:^|[\s;|&(`])(?:printenv|env|export\s+-p|set|declare\s+-x|compgen\s+-e)(?:\s*$|\s*[;|&)`]|\s+\|)"
)
_SECRET_DUMP = re.compile(
    r"kubectl\s+(?:get|describe)\s+secrets?\b"
    r"|aws\s+(?:configure\s+(?:export-credentials|get|list)|sts\s+(?:get-session-token|assume-role)|"
    r"secretsmanager\s+get-secret-value|ssm\s+get-parameters?\b)"
    r"|gcloud\s+(?:auth\s+(?:print-access-token|print-identity-token)|secrets\s+versions\s+access)"
    r"|az\s+(?:account\s+get-access-token|keyvault\s+secret\s+show|storage\s+account\s+keys)"
    r"|docker\s+(?:inspect|exec\b.*\benv\b)|heroku\s+config|vercel\s+env|fly\s+secrets"
    r"|vault\s+(?:kv\s+get|read)|op\s+(?:read|item\s+get)|doppler\s+secrets|gh\s+auth\s+token"
    r"|terraform\s+output|helm\s+get\s+values|cat\s+/proc/\S*/environ"
)
# A command that prints a file: the file's name then classifies the output.
_FILE_READERS = re.compile(
    r"(?:^|[\s;|&(])(?:cat|less|more|head|tail|bat|sed\s+-n\s+\S+|grep\s+\S+|xxd|strings|source|\.)\s+([^\s;|&>]+)"
)

_FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead"})


@functools.lru_cache(maxsize=4096)  # sessions read and run the same few paths and commands
def classify_path(path: str) -> SourceKind:
    """What a file is, judged by its path alone."""
    posix = PurePosixPath(path.strip().strip("'\""))
    name = posix.name.lower()
    if not name:
        return SourceKind.UNKNOWN
    if _DOTENV_NAME.match(name):
        return SourceKind.DOTENV
    parts = [p.lower() for p in posix.parts]
    if name.endswith(".pub") or name in {"known_hosts", "authorized_keys"}:
        return SourceKind.UNKNOWN
    if _PRIVATE_KEY_NAME.match(name):
        return SourceKind.PRIVATE_KEY_FILE
    if name in _CREDENTIAL_NAMES or name.endswith(_CREDENTIAL_SUFFIXES):
        return SourceKind.CREDENTIAL_FILE
    for folder, file_name in _CREDENTIAL_PATH_PARTS:
        if folder in parts[:-1] and (file_name is None or name == file_name):
            return SourceKind.CREDENTIAL_FILE
    return SourceKind.UNKNOWN


@functools.lru_cache(maxsize=4096)
def classify_command(command: str) -> SourceKind:
    """What a shell command's output is likely to be."""
    if _SECRET_DUMP.search(command):
        return SourceKind.SECRET_DUMP
    if _ENV_DUMP.search(command):
        return SourceKind.DOTENV
    for match in _FILE_READERS.finditer(command):
        kind = classify_path(match.group(1))
        if kind is not SourceKind.UNKNOWN:
            return kind
    return SourceKind.UNKNOWN


@dataclass(frozen=True, slots=True)
class ClassifiedCall:
    """A tool call as the scanner classifies it, to understand its result: the tool, what it
    touched, and whether that is a credential source. (The transcript's own view of a call,
    with all its short input fields, is `transcript.records.ToolCall`.)"""

    name: str
    target: str  # the file path or command; may hold a secret, so it is redacted before display
    source: SourceKind

    def label(self, target: str | None = None, name: str | None = None) -> str:
        """A display label such as `Read(/app/.env)`; pass an already-redacted target (and
        name: an MCP tool's name is text a server chose, and can hold a token)."""
        shown = self.target if target is None else target
        tool = self.name if name is None else name
        return f"{tool}({shown})" if shown else tool


def describe_tool_use(name: str, tool_input: Mapping[str, Any] | Any) -> ClassifiedCall:
    """Classify a tool call from its name and input."""
    if not isinstance(tool_input, Mapping):
        return ClassifiedCall(name, "", SourceKind.UNKNOWN)
    if name in _FILE_TOOLS or "file_path" in tool_input or "notebook_path" in tool_input:
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
        path = path if isinstance(path, str) else ""
        return ClassifiedCall(name, path, classify_path(path) if path else SourceKind.UNKNOWN)
    command = tool_input.get("command")
    if isinstance(command, str):
        return ClassifiedCall(name, command, classify_command(command))
    for key in ("url", "pattern", "query", "path", "prompt", "description"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return ClassifiedCall(name, value, SourceKind.UNKNOWN)
    return ClassifiedCall(name, "", SourceKind.UNKNOWN)
