"""In a credential source, every assigned value that is not obviously something else.

When the scanner knows that a text is the content of a `.env` file, the output of `printenv`
or `docker inspect`, a Kubernetes secret dump or a credential file, names stop being a useful
filter: `APP_KEY=base64:…`, `FOO=bar123` or `MY_SERVICE=9f2c…` are secrets there too. This rule
runs only in such contexts. It still leaves alone what every environment holds (PATH, HOME,
TERM, LANG…), names that say what the value is about (`_HOST`, `_PORT`, `_USER`, `_REGION`),
and values that are paths, URLs without a password, numbers, booleans, dates or single words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from scrubber.detection.detector import ScanContext, SourceKind
from scrubber.detection.finding import Hit
from scrubber.detection.rules.assignment.assigned_value import read_value
from scrubber.detection.rules.assignment.rule import KIND
from scrubber.detection.rules.values import (
    has_char_classes,
    is_public_material,
    is_trivial,
    looks_like_code,
    looks_like_locator,
    name_words,
)

# Variables every shell, terminal, OS or toolchain sets (POSIX.1-2017 §8 "Environment
# Variables", bash(1), macOS launchd, XDG Base Directory spec): never secrets.
_STANDARD_NAMES = frozenset(
    {
        "PATH", "HOME", "SHELL", "TERM", "LANG", "LANGUAGE", "USER", "LOGNAME", "PWD",
        "OLDPWD", "SHLVL", "EDITOR", "VISUAL", "PAGER", "TMPDIR", "TEMP", "TMP", "TZ",
        "HOSTNAME", "HOST", "DISPLAY", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
        "TERM_SESSION_ID", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CLIENT", "SSH_CONNECTION",
        "SSH_TTY", "MANPATH", "INFOPATH", "HISTFILE", "HISTSIZE", "HISTCONTROL", "SAVEHIST",
        "PS1", "PS2", "PS4", "PROMPT_COMMAND", "PROMPT", "MAIL", "MAILCHECK", "LSCOLORS",
        "LS_COLORS", "CLICOLOR", "GREP_COLOR", "GREP_COLORS", "LESS", "LESSOPEN", "LESSCLOSE",
        "HOSTTYPE", "OSTYPE", "MACHTYPE", "PPID", "UID", "EUID", "GROUPS", "IFS", "OPTIND",
        "COMMAND_MODE", "SECURITYSESSIONID", "LAUNCHINSTANCEID", "XPC_FLAGS",
        "XPC_SERVICE_NAME", "__CFBUNDLEIDENTIFIER", "__CF_USER_TEXT_ENCODING",
        "APPLE_PUBSUB_SOCKET_RENDER", "ITERM_PROFILE", "ITERM_SESSION_ID", "LC_TERMINAL",
        "LC_TERMINAL_VERSION", "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_DEFAULT_ENV",
        "CONDA_PREFIX", "CONDA_EXE", "CONDA_PYTHON_EXE", "CONDA_SHLVL", "GOPATH", "GOROOT",
        "GOBIN", "JAVA_HOME", "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR", "NVM_BIN", "NVM_INC",
        "PYENV_ROOT", "PYENV_SHELL", "PYTHONPATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
        "HOMEBREW_PREFIX", "HOMEBREW_CELLAR", "HOMEBREW_REPOSITORY", "NODE_ENV", "RAILS_ENV",
        "RACK_ENV", "FLASK_ENV", "APP_ENV", "DJANGO_SETTINGS_MODULE", "LOG_LEVEL", "DEBUG",
        "CI", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "GIT_EDITOR",
        # Set by Claude Code 2.1.332 in every Bash tool's environment / by pytest for each test.
        "AI_AGENT", "PYTEST_CURRENT_TEST",
        "GIT_PAGER", "COREPACK_ENABLE_AUTO_PIN", "INIT_CWD", "_", "OTEL_EXPORTER_OTLP_PROTOCOL",
        "MallocNanoZone".upper(), "ORIGINAL_XDG_CURRENT_DESKTOP", "WINDOWID", "DBUS_SESSION_BUS_ADDRESS",
        "VSCODE_GIT_IPC_HANDLE", "VSCODE_GIT_ASKPASS_NODE", "VSCODE_GIT_ASKPASS_MAIN",
        "VSCODE_GIT_ASKPASS_EXTRA_ARGS", "VSCODE_INJECTION", "VSCODE_PID", "VSCODE_CWD",
        "VSCODE_IPC_HOOK_CLI", "GIT_ASKPASS", "TERMINAL_EMULATOR", "ZDOTDIR", "ZSH",
    }
)  # fmt: skip
_STANDARD_PREFIXES = ("LC_", "XDG_", "BASH_", "ZSH_", "NPM_CONFIG_", "NPM_PACKAGE_",
                      "NPM_LIFECYCLE_", "HOMEBREW_", "__CF", "PYENV_", "CONDA_", "JAVA_",
                      "ITERM", "VSCODE_", "ELECTRON_", "CHROME_")  # fmt: skip
# A last word that says what the value is about, not a secret.
_NOT_SECRET_LAST_WORDS = frozenset(
    {
        "host", "hostname", "hosts", "port", "ports", "user", "username", "users", "name",
        "names", "region", "zone", "dir", "directory", "path", "paths", "home", "root", "file",
        "files", "url", "uri", "urls", "endpoint", "level", "env", "environment", "mode",
        "stage", "version", "timeout", "ttl", "interval", "retries", "retry", "count", "size",
        "limit", "max", "min", "workers", "threads", "concurrency", "id", "ids", "uid", "gid",
        "pid", "type", "kind", "format", "encoding", "charset", "locale", "lang", "language",
        "timezone", "tz", "date", "time", "timestamp", "at", "enabled", "enable", "disabled",
        "debug", "verbose", "flags", "flag", "features", "feature", "project", "profile",
        "cluster", "namespace", "bucket", "database", "db", "schema", "table", "queue",
        "topic", "channel", "email", "from", "to", "sender", "shell", "editor", "term",
        "driver", "engine", "dialect", "adapter", "provider", "backend", "library", "module",
        "class", "prefix", "suffix", "separator", "delimiter", "color", "colors", "theme",
        "width", "height", "sock", "socket", "address", "addr", "ip", "domain", "origin",
        "origins", "scheme", "protocol", "method", "algorithm", "arn", "account", "org",
        "organization", "owner", "team", "workspace", "repo", "repository", "branch", "sha",
        "commit", "tag", "image", "registry", "app", "application", "service", "label",
        "title", "description", "lvl", "entrypoint", "cwd", "bin", "exe", "cmd", "command",
    }
)  # fmt: skip
_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
_WORD_LIST = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*(?:[,; ][A-Za-z][A-Za-z0-9_.-]*)+$")
_NESTED_ASSIGNMENT = re.compile(r"^[A-Za-z_][\w.]*=[^=]")
_PATH_LIST = re.compile(r"^[~.]?/[^:\s]*(?::[~.]?/[^:\s]*)+:?$")
# Matched at each line start (found with str.find, much faster than a MULTILINE pattern that
# `re` would try at every position), after an optional Read-tool prefix (`     3→`, `3\t`).
_LINE_PREFIX = r"[ \t]*(?:\d{1,7}(?:→|\t))?[ \t]*"
_ENV_LINE = re.compile(
    _LINE_PREFIX
    + r"(?:(?:export|set|setenv|declare[ \t]+-x|ENV)[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,127})="
)
# `"Env": ["KEY=value", …]` in `docker inspect` output.
_QUOTED_ENV = re.compile(r'"(?P<name>[A-Za-z_][A-Za-z0-9_]{0,127})=(?P<value>[^"\\\n]{1,4096})"')
# INI, TOML, HCL and YAML lines: `name = value`, `name: value` (credential files, secret dumps).
_KEY_LINE = re.compile(
    _LINE_PREFIX + r"(?:-[ \t]+)?(?P<name>[A-Za-z_][\w.-]{0,127})[ \t]*(?:=|:(?=[ \t]))[ \t]*"
)
_KEY_LINE_SOURCES = frozenset({SourceKind.CREDENTIAL_FILE, SourceKind.SECRET_DUMP})


def _line_starts(text: str) -> Iterator[int]:
    yield 0
    at = text.find("\n")
    while at >= 0:
        yield at + 1
        at = text.find("\n", at + 1)


def _standard(name: str) -> bool:
    upper = name.upper()
    return upper in _STANDARD_NAMES or upper.startswith(_STANDARD_PREFIXES)


_PUBLIC_WORDS = frozenset({"certificate", "cert", "ca", "crt", "public", "pub", "fingerprint"})


def _about_something_else(name: str) -> bool:
    words = name_words(name)
    if not words or words[-1] in _NOT_SECRET_LAST_WORDS:
        return True
    return any(w in _PUBLIC_WORDS for w in words)


def looks_like_value_secret(value: str) -> bool:
    """A value that, in a credential source, is worth treating as a secret."""
    stripped = value.strip()
    if len(stripped) < 4 or is_trivial(stripped) or looks_like_locator(stripped):
        return False
    if _DATE.match(stripped) or _WORD_LIST.match(stripped) or _PATH_LIST.match(stripped):
        return False
    if " " in stripped or looks_like_code(stripped) or is_public_material(stripped):
        return False
    if _NESTED_ASSIGNMENT.match(stripped):
        return False  # `Protocol=https;AccountName=…`: a connection string, judged by its parts
    return any(c.isdigit() for c in stripped) or has_char_classes(stripped, 2)


@dataclass(frozen=True, slots=True)
class ContextAssignmentRule:
    """`KEY=value` (and, in credential files, `key = value` / `key: value`) lines of a text
    known to come from a credential source."""

    name: str = "dotenv-context"
    kind: str = KIND
    anchors: tuple[str, ...] = ()
    context_only: bool = True
    reference: str = (
        "dotenv 'Rules' (github.com/motdotla/dotenv); POSIX.1-2017 §8 environment variables; "
        "docker inspect Config.Env; kubectl get secret -o yaml"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        if not context.sensitive or context.source is SourceKind.PRIVATE_KEY_FILE:
            return
        seen: set[int] = set()
        key_lines = context.source in _KEY_LINE_SOURCES
        for line_start in _line_starts(text):
            line = _ENV_LINE.match(text, line_start)
            if line is not None:
                hit = self._judge(text, line.group("name"), line.end(), "=")
            elif key_lines and (line := _KEY_LINE.match(text, line_start)) is not None:
                hit = self._judge(text, line.group("name"), line.end(), ":")
            else:
                continue
            if hit is not None and hit.start not in seen:
                seen.add(hit.start)
                yield hit
        for match in _QUOTED_ENV.finditer(text):
            name, start = match.group("name"), match.start("value")
            if start in seen or _standard(name) or _about_something_else(name):
                continue
            if looks_like_value_secret(match.group("value")):
                seen.add(start)
                yield Hit(start, match.end("value"), self.kind, self.name)

    def _judge(self, text: str, name: str, pos: int, op: str) -> Hit | None:
        if _standard(name) or _about_something_else(name):
            return None
        found = read_value(text, pos, op, spaced=False)
        if found is None:
            return None
        if not looks_like_value_secret(text[found.start : found.end]):
            return None
        return Hit(found.start, found.end, self.kind, self.name)


DOTENV_CONTEXT = ContextAssignmentRule()

RULES = (DOTENV_CONTEXT,)
