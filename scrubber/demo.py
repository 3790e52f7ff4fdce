"""Synthetic Claude Code config directories, for the demo, the tests and the benchmark.

Everything is written in Claude Code's real on-disk format (../shared/reference/claude-code.md,
as observed in 2.1.332): conversation records with their envelope, one assistant line per
content block sharing `message.id`, one user line per tool result carrying both the
`tool_result` block and the tool-specific `toolUseResult`, and the side files a real session
leaves (subagents, tool-results, file-history, todos, debug, history, shell snapshots).

Fake secrets are built at run time from a seeded random generator: nothing in this file looks
like a credential, and the same seed gives the same bytes. The manifest (`demo_manifest`, or the
`LargeTranscript` returned by `write_large_transcript`) says what was planted and where, so tests
can check that nothing survives redaction; decoys (git SHAs, uuids, lockfile integrity hashes, a
certificate, signatures, image data) are listed too, as things that must not be flagged.
Manifests hold the values: never print them (their reprs do not).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import string
import struct
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

VERSION = "2.1.332"
MODEL = "claude-sonnet-4-5-20250929"
_HOME = "/home/demo"
_CONFIG_NAME = ".claude"
_DEFAULT_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

_B62 = string.ascii_letters + string.digits
_B64 = _B62 + "+/"
_URLSAFE = _B62 + "_-"
_BASE32 = string.ascii_uppercase + "234567"
_HEX = "0123456789abcdef"
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


# --- manifest -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Planted:
    """A fake secret that was planted: its kind, its value (never print it), the files that
    hold it (relative to the config dir, or the transcript name) and, for large transcripts,
    the 1-based lines."""

    kind: str
    value: str = field(repr=False)
    where: tuple[str, ...] = ()  # human descriptions: "Read(.env) output", …
    files: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()

    def needles(self) -> tuple[str, ...]:
        """The strings that must not survive redaction. A multi-line secret (a PEM key) is
        stored with line-number prefixes in Read output, so each body line counts alone."""
        if "\n" not in self.value:
            return (self.value,)
        return tuple(
            line.strip()
            for line in self.value.splitlines()
            if len(line.strip()) >= 16 and not line.startswith("-----")
        )


@dataclass(frozen=True, slots=True)
class Decoy:
    """A string that looks like a secret but is not one; it must survive redaction."""

    kind: str
    value: str = field(repr=False)
    files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DemoManifest:
    secrets: tuple[Planted, ...]
    decoys: tuple[Decoy, ...]
    sessions: tuple[str, ...]  # session ids, in build order
    files: tuple[str, ...]  # every file written, relative to the config dir

    def kinds(self) -> frozenset[str]:
        return frozenset(secret.kind for secret in self.secrets)


@dataclass(frozen=True, slots=True)
class LargeTranscript:
    path: Path
    size: int
    lines: int
    session_id: str
    secrets: tuple[Planted, ...] = field(repr=False)


# --- fake values, built from the generator ---------------------------------------------------


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _b62_encode(number: int, width: int) -> str:
    digits = []
    for _ in range(width):
        number, rest = divmod(number, 62)
        digits.append(_B62_ORDERED[rest])
    return "".join(reversed(digits))


_B62_ORDERED = string.digits + string.ascii_uppercase + string.ascii_lowercase


def fake_github_token(rng: random.Random) -> str:
    # Classic personal access token: "ghp_" + 30 random base62 + a 6-character base62 CRC32 of
    # those 30 (GitHub's token format announcement, github.blog 2021-04-05).
    body = _pick(rng, _B62, 30)
    return "gh" + "p_" + body + _b62_encode(zlib.crc32(body.encode()), 6)


def fake_aws_access_key(rng: random.Random) -> str:
    # AWS access key ids: "AKIA" + 16 base32 characters (AWS IAM identifiers documentation).
    return "AK" + "IA" + _pick(rng, _BASE32, 16)


def fake_aws_secret_key(rng: random.Random) -> str:
    return _pick(rng, _B64, 40)


def fake_stripe_key(rng: random.Random) -> str:
    # Stripe secret keys: "sk_live_" + base62 (docs.stripe.com/keys).
    return "sk" + "_live_" + _pick(rng, _B62, 24)


def fake_anthropic_key(rng: random.Random) -> str:
    # Anthropic API keys: "sk-ant-api03-" + 93 url-safe characters + "AA".
    return "sk-" + "ant-api03-" + _pick(rng, _URLSAFE, 93) + "AA"


def fake_npm_token(rng: random.Random) -> str:
    # npm granular/automation tokens: "npm_" + 36 base62 (docs.npmjs.com, access tokens).
    return "np" + "m_" + _pick(rng, _B62, 36)


_PW_WORDS = ("plum", "harbor", "otter", "maple", "copper", "violet", "falcon", "cedar", "quartz")


def fake_password(rng: random.Random) -> str:
    """A human password: low entropy on purpose (a weak database password must still count)."""
    words = rng.sample(_PW_WORDS, 2)
    return words[0].capitalize() + words[1] + str(rng.randint(1000, 9999)) + rng.choice("!#%")


def fake_private_key(rng: random.Random) -> str:
    # A PKCS#8 DER prefix (SEQUENCE, version 0, rsaEncryption OID) so the body starts "MIIE" as
    # real RSA keys do; the rest is random.
    der = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7") + rng.randbytes(
        1190
    )
    return _pem("PRIVATE KEY", der)


def fake_certificate(rng: random.Random) -> str:
    der = bytes.fromhex("30820307308201efa003020102") + rng.randbytes(760)
    return _pem("CERTIFICATE", der)


def _pem(label: str, der: bytes) -> str:
    body = base64.b64encode(der).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def fake_git_sha(rng: random.Random) -> str:
    return _pick(rng, _HEX, 40)


def fake_integrity(rng: random.Random) -> str:
    return "sha512-" + base64.b64encode(rng.randbytes(64)).decode()


def fake_png(rng: random.Random, size: int = 24) -> bytes:
    """A small valid PNG (random pixels) so image data looks like image data."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    rows = b"".join(b"\x00" + rng.randbytes(size * 3) for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _message_id(rng: random.Random) -> str:
    return "msg_01" + _pick(rng, _BASE58, 22)


def _tool_id(rng: random.Random) -> str:
    return "toolu_01" + _pick(rng, _BASE58, 22)


def _request_id(rng: random.Random) -> str:
    return "req_011C" + _pick(rng, _BASE58, 20)


def _signature(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(rng.randint(180, 420))).decode()


def project_folder_name(cwd: str) -> str:
    """Claude Code's folder name for a working directory (the short-path rule: every
    non-alphanumeric character becomes `-`)."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _dumps(value: Any) -> bytes:
    # JSON.stringify's shape: no spaces, non-ASCII kept as is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _numbered(text: str) -> str:
    """Read's tool_result text: `N\\t` before every line (2.1.332)."""
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(text.split("\n"), start=1))


# --- one session ----------------------------------------------------------------------------


class _Session:
    """Appends records to one transcript the way Claude Code does."""

    def __init__(
        self,
        rng: random.Random,
        session_id: str,
        cwd: str,
        start: datetime,
        *,
        branch: str = "main",
        sidechain: bool = False,
        agent_id: str | None = None,
    ) -> None:
        self.rng = rng
        self.id = session_id
        self.cwd = cwd
        self.clock = start
        self.branch = branch
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.slug = "-".join(rng.sample(("sunny", "quiet", "brave", "lucky", "amber", "swift"), 2))
        self.lines: list[bytes] = []
        self.last: str | None = None  # the uuid new records chain to
        self.last_assistant: str | None = None
        self.tool_results: dict[str, str] = {}  # tool-results/<id>.txt files to write

    def tick(self, low: float = 0.4, high: float = 9.0) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return _iso(self.clock)

    def emit(self, record: dict[str, Any]) -> None:
        self.lines.append(_dumps(record))

    def _envelope(self, parent: str | None) -> dict[str, Any]:
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.id,
            "version": VERSION,
            "gitBranch": self.branch,
        }
        if self.agent_id is not None:
            record["agentId"] = self.agent_id
        record["slug"] = self.slug
        return record

    def user(
        self, content: str | list[dict[str, Any]], *, extra: dict[str, Any] | None = None
    ) -> str:
        record_uuid = _uuid(self.rng)
        record = self._envelope(self.last)
        record["type"] = "user"
        record["message"] = {"role": "user", "content": content}
        if extra:
            record.update(extra)
        record["uuid"] = record_uuid
        record["timestamp"] = self.tick()
        self.emit(record)
        self.last = record_uuid
        return record_uuid

    def prompt(self, text: str, *, queued: bool = False) -> str:
        """A prompt the user typed: the user record, plus where 2.1.332 also copies it."""
        if queued:
            stamp = self.tick(0.1, 0.5)
            self.emit(
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "timestamp": stamp,
                    "sessionId": self.id,
                    "content": text,
                }
            )
            self.emit(
                {
                    "type": "queue-operation",
                    "operation": "dequeue",
                    "timestamp": self.tick(0.1, 0.5),
                    "sessionId": self.id,
                }
            )
        record_uuid = self.user(text)
        self.emit({"type": "last-prompt", "lastPrompt": text, "sessionId": self.id})
        return record_uuid

    def assistant(self, blocks: list[dict[str, Any]], *, stop_reason: str = "end_turn") -> str:
        """One API response: one line per content block, all sharing `message.id`."""
        message_id = _message_id(self.rng)
        request_id = _request_id(self.rng)
        for block in blocks:
            record_uuid = _uuid(self.rng)
            record = self._envelope(self.last)
            record["message"] = {
                "model": MODEL,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop_reason if block is blocks[-1] else None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": self.rng.randint(3, 12),
                    "cache_creation_input_tokens": self.rng.randint(0, 4000),
                    "cache_read_input_tokens": self.rng.randint(10000, 60000),
                    "output_tokens": self.rng.randint(20, 900),
                    "service_tier": "standard",
                },
            }
            record["requestId"] = request_id
            record["type"] = "assistant"
            record["uuid"] = record_uuid
            record["timestamp"] = self.tick(0.5, 4.0)
            self.emit(record)
            self.last = record_uuid
            self.last_assistant = record_uuid
        return self.last or ""

    def say(self, text: str, *, thinking: str | None = None) -> str:
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": thinking, "signature": _signature(self.rng)}
            )
        blocks.append({"type": "text", "text": text})
        return self.assistant(blocks)

    def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        result_text: str,
        tool_use_result: Any,
        *,
        is_error: bool = False,
        thinking: str | None = None,
    ) -> str:
        """A tool call and its result; returns the tool_use id."""
        tool_id = _tool_id(self.rng)
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": thinking, "signature": _signature(self.rng)}
            )
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.assistant(blocks, stop_reason="tool_use")
        source = self.last
        self.user(
            [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": result_text,
                    "is_error": is_error,
                }
            ],
            extra={"toolUseResult": tool_use_result, "sourceToolAssistantUUID": source},
        )
        return tool_id

    def read(self, path: str, text: str, *, thinking: str | None = None) -> str:
        lines = text.split("\n")
        return self.tool(
            "Read",
            {"file_path": path},
            _numbered(text),
            {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": text,
                    "numLines": len(lines),
                    "startLine": 1,
                    "totalLines": len(lines),
                },
            },
            thinking=thinking,
        )

    def bash(self, command: str, stdout: str, *, description: str = "", stderr: str = "") -> str:
        shown = stdout + ("\n" + stderr if stderr else "")
        return self.tool(
            "Bash",
            {"command": command, "description": description or command.split(maxsplit=1)[0]},
            shown,
            {
                "stdout": stdout,
                "stderr": stderr,
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            },
        )

    def bash_fails(self, command: str, output: str, code: int = 1) -> str:
        # A failing Bash: is_error, and toolUseResult is a plain string (2.1.332).
        text = f"Error: Exit code {code}\n{output}"
        return self.tool(
            "Bash",
            {"command": command, "description": "Run " + command.split(maxsplit=1)[0]},
            text,
            text,
            is_error=True,
        )

    def bash_persisted(self, command: str, stdout: str, config_path: str) -> str:
        """Output over ~30 KB: a 2 KB preview in the tool_result, the whole output in
        tool-results/<id>.txt, toolUseResult.stdout cut at 30,000 characters."""
        tool_id = _tool_id(self.rng)
        saved = f"{config_path}/tool-results/{tool_id}.txt"
        preview = (
            "<persisted-output>\n"
            f"Output too large ({len(stdout) / 1024:.1f}KB). Full output saved to: {saved}\n\n"
            f"Preview (first 2KB):\n{stdout[:2000]}\n...\n</persisted-output>"
        )
        self.assistant(
            [
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Bash",
                    "input": {"command": command, "description": "Show logs"},
                }
            ],
            stop_reason="tool_use",
        )
        source = self.last
        self.user(
            [
                {
                    "tool_use_id": tool_id,
                    "type": "tool_result",
                    "content": preview,
                    "is_error": False,
                }
            ],
            extra={
                "toolUseResult": {
                    "stdout": stdout[:30000],
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                    "noOutputExpected": False,
                    "persistedOutputPath": saved,
                },
                "sourceToolAssistantUUID": source,
            },
        )
        self.tool_results[tool_id] = stdout
        return tool_id

    def write(self, path: str, content: str) -> str:
        return self.tool(
            "Write",
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
            {
                "type": "create",
                "filePath": path,
                "content": content,
                "structuredPatch": [],
                "originalFile": None,
            },
        )

    def edit(self, path: str, original: str, old: str, new: str) -> str:
        before = original.split("\n")
        at = next((i for i, line in enumerate(before) if old.split("\n", maxsplit=1)[0] in line), 0)
        old_lines = old.split("\n")
        new_lines = new.split("\n")
        hunk = {
            "oldStart": at + 1,
            "oldLines": len(old_lines),
            "newStart": at + 1,
            "newLines": len(new_lines),
            "lines": [f"-{line}" for line in old_lines] + [f"+{line}" for line in new_lines],
        }
        updated = original.replace(old, new, 1)
        snippet = _numbered("\n".join(updated.split("\n")[max(0, at - 2) : at + 4]))
        return self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
            f"The file {path} has been updated. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n{snippet}",
            {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [hunk],
                "userModified": False,
                "replaceAll": False,
            },
        )

    def system(self, subtype: str, **fields: Any) -> str:
        record_uuid = _uuid(self.rng)
        record = self._envelope(self.last)
        record["type"] = "system"
        record["subtype"] = subtype
        record.update(fields)
        record["isMeta"] = False
        record["timestamp"] = self.tick(0.1, 1.0)
        record["uuid"] = record_uuid
        record["level"] = "info"
        self.emit(record)
        self.last = record_uuid
        return record_uuid

    def compact(self, summary_text: str) -> str:
        """A compact boundary (a new root that remembers its logical parent) and the
        compaction summary that restates the conversation."""
        record_uuid = _uuid(self.rng)
        record = self._envelope(None)
        record["logicalParentUuid"] = self.last
        record["type"] = "system"
        record["subtype"] = "compact_boundary"
        record["content"] = "Conversation compacted"
        record["isMeta"] = False
        record["timestamp"] = self.tick()
        record["uuid"] = record_uuid
        record["level"] = "info"
        record["compactMetadata"] = {
            "trigger": "manual",
            "preTokens": self.rng.randint(40000, 90000),
        }
        self.emit(record)
        self.last = record_uuid
        return self.user(
            "This session is being continued from a previous conversation that ran out of "
            "context. The conversation is summarized below:\n" + summary_text,
            extra={"isVisibleInTranscriptOnly": True, "isCompactSummary": True},
        )

    def snapshot(self, message_id: str, backups: dict[str, Any]) -> None:
        self.emit(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": backups,
                    "timestamp": _iso(self.clock),
                },
                "isSnapshotUpdate": bool(backups),
            }
        )

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)


# --- ordinary content ------------------------------------------------------------------------

_NOUNS = (
    "order", "invoice", "customer", "session", "token", "cart", "payment", "user", "account",
    "report", "webhook", "password_hash", "auth_header", "config", "cache", "queue", "retry",
    "schema", "migration", "credential_store", "secret_name", "api_client", "event", "batch",
)  # fmt: skip
_VERBS = (
    "load", "save", "validate", "refresh", "build", "parse", "fetch", "sync", "render", "apply",
    "resolve", "encode", "verify", "rotate", "merge", "compute", "dispatch", "authenticate",
)  # fmt: skip
_TYPES = ("str", "int", "dict[str, Any]", "list[str]", "bytes", "Order", "Session", "None")
_AUTHORS = (
    "Ada Park <ada@example.com>",
    "Sam Ortiz <sam@example.com>",
    "Lee Chen <lee@example.com>",
)


def _code_file(rng: random.Random, functions: int) -> str:
    parts = [
        '"""Service helpers."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "from typing import Any",
        "",
        "logger = logging.getLogger(__name__)",
        "",
    ]
    for _ in range(functions):
        verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
        arg, rtype = rng.choice(_NOUNS), rng.choice(_TYPES)
        parts += [
            "",
            f"def {verb}_{noun}(client: Any, {arg}: {rng.choice(_TYPES)}) -> {rtype}:",
            f'    """{verb.capitalize()} the {noun.replace("_", " ")} for the given {arg}."""',
            f"    if not {arg}:",
            f'        raise ValueError("{arg} is required")',
            f"    result = client.{verb}({arg}, timeout={rng.randint(1, 60)})",
            f'    logger.debug("{verb} %s -> %s", {arg}, result)',
            "    return result",
        ]
    return "\n".join(parts) + "\n"


def _test_log(rng: random.Random, tests: int, *, fail: bool = False) -> str:
    lines = ["============================= test session starts =============================="]
    lines.append("platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0")
    lines.append(f"collected {tests} items")
    lines.append("")
    for i in range(tests):
        verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
        status = "FAILED" if fail and i == tests // 2 else "PASSED"
        lines.append(
            f"tests/test_{noun}.py::test_{verb}_{noun} {status} [{(i + 1) * 100 // tests:3d}%]"
        )
    if fail:
        lines += [
            "",
            "=================================== FAILURES ===================================",
            "    def test_refresh_token():",
            ">       assert client.refresh(token) == expected",
            "E       AssertionError: assert None == {'expires_in': 3600}",
        ]
    summary = f"{tests - 1} passed, 1 failed" if fail else f"{tests} passed"
    lines.append(f"============================== {summary} in {rng.uniform(0.5, 9):.2f}s ===")
    return "\n".join(lines)


def _git_log(rng: random.Random, commits: int) -> tuple[str, list[str]]:
    shas = [fake_git_sha(rng) for _ in range(commits)]
    out = []
    for sha in shas:
        out += [
            f"commit {sha}",
            f"Author: {rng.choice(_AUTHORS)}",
            f"Date:   Mon Mar {rng.randint(1, 28)} {rng.randint(8, 19)}:{rng.randint(10, 59)}:07 "
            "2026 +0100",
            "",
            f"    {rng.choice(_VERBS).capitalize()} {rng.choice(_NOUNS).replace('_', ' ')} handling",
            "",
        ]
    return "\n".join(out), shas


def _lockfile(rng: random.Random, packages: int) -> tuple[str, list[str]]:
    hashes = [fake_integrity(rng) for _ in range(packages)]
    entries = {
        f"node_modules/{rng.choice(_NOUNS).replace('_', '-')}-{i}": {
            "version": f"{rng.randint(0, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            "resolved": f"https://registry.npmjs.org/pkg-{i}/-/pkg-{i}-1.0.0.tgz",
            "integrity": integrity,
            "license": "MIT",
        }
        for i, integrity in enumerate(hashes)
    }
    doc = {"name": "shop-web", "version": "1.4.0", "lockfileVersion": 3, "packages": entries}
    return json.dumps(doc, indent=2), hashes


_LS_COLORS = ":".join(
    f"*.{ext}=01;{31 + i % 7}" for i, ext in enumerate(string.ascii_lowercase * 4)
)


def _printenv(rng: random.Random, token: str) -> str:
    env = {
        "SHELL": "/bin/bash",
        "COLORTERM": "truecolor",
        "HOSTNAME": "devbox-" + _pick(rng, _HEX, 6),
        "LANG": "en_US.UTF-8",
        "HOME": _HOME,
        "LS_COLORS": _LS_COLORS,
        "PWD": f"{_HOME}/work/shop-api",
        "NODE_ENV": "development",
        "GITHUB_TOKEN": token,
        "EDITOR": "vim",
        "TERM": "xterm-256color",
        "USER": "demo",
        "SHLVL": "2",
        "PATH": "/usr/local/bin:/usr/bin:/bin:/home/demo/.local/bin",
        "CLAUDECODE": "1",
        "_": "/usr/bin/printenv",
    }
    return "\n".join(f"{k}={v}" for k, v in env.items())


def _json_payload(rng: random.Random, items: int) -> str:
    data = {
        "data": [
            {
                "id": _uuid(rng),
                "type": rng.choice(_NOUNS),
                "attributes": {
                    "status": rng.choice(("active", "pending", "closed")),
                    "amount": rng.randint(100, 99999),
                    "currency": "EUR",
                    "created_at": f"2026-02-{rng.randint(1, 28):02d}T10:00:00Z",
                },
            }
            for _ in range(items)
        ],
        "meta": {"page": 1, "total": items},
    }
    return json.dumps(data, indent=2)


# --- the demo config dir --------------------------------------------------------------------


class _Demo:
    def __init__(self, seed: int, start: datetime) -> None:
        # Deterministic fake data, not cryptography: the same seed must give the same bytes.
        self.rng = random.Random(seed)  # noqa: S311
        self.start = start
        self.files: dict[str, bytes] = {}
        self.mtimes: dict[str, datetime] = {}
        self.symlinks: dict[str, str] = {}
        self.secrets: dict[tuple[str, str], list[str]] = {}
        self.decoys: dict[tuple[str, str], None] = {}
        self.session_ids: list[str] = []
        self.history: list[bytes] = []

    # bookkeeping

    def plant(self, kind: str, value: str, where: str) -> str:
        self.secrets.setdefault((kind, value), []).append(where)
        return value

    def decoy(self, kind: str, value: str) -> str:
        self.decoys[(kind, value)] = None
        return value

    def put(self, relative: str, data: bytes, moment: datetime) -> None:
        self.files[relative] = data
        self.mtimes[relative] = moment

    def finish_session(self, session: _Session, project: str) -> str:
        base = f"projects/{project}/{session.id}"
        self.put(base + ".jsonl", session.data(), session.clock)
        for tool_id, output in session.tool_results.items():
            self.put(f"{base}/tool-results/{tool_id}.txt", output.encode(), session.clock)
        return base

    def typed(self, session: _Session, text: str, pasted: str | None = None) -> None:
        entry: dict[str, Any] = {
            "display": text if pasted is None else "[Pasted text #1] " + text,
            "pastedContents": {}
            if pasted is None
            else {"1": {"id": 1, "type": "text", "content": pasted}},
            "timestamp": int(session.clock.timestamp() * 1000),
            "project": session.cwd,
            "sessionId": session.id,
        }
        self.history.append(_dumps(entry))

    def new_session(self, cwd: str, start: datetime) -> _Session:
        session = _Session(self.rng, _uuid(self.rng), cwd, start)
        self.session_ids.append(session.id)
        return session

    # scripted sessions

    def shop_api(self, start: datetime) -> None:
        """Session 1: a .env read, an env dump, a failing migration, a big log, an edit with a
        file-history copy, a rewind fork, a compaction."""
        rng = self.rng
        cwd = f"{_HOME}/work/shop-api"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        config_path = f"{_HOME}/{_CONFIG_NAME}/projects/{project}/{s.id}"

        password = self.plant("dotenv-value", fake_password(rng), "Read(.env) output")
        akid = self.plant("aws-access-key", fake_aws_access_key(rng), "Read(.env) output")
        aws_secret = self.plant("aws-secret-key", fake_aws_secret_key(rng), "Read(.env) output")
        stripe = self.plant("stripe-key", fake_stripe_key(rng), "Read(.env) output")
        github = self.plant("github-token", fake_github_token(rng), "Bash(printenv) output")
        pg_password = self.plant(
            "connection-string-password", _pick(rng, _B62, 18), "failing Bash output, logs"
        )
        dotenv = (
            "# local development settings\nAPP_ENV=development\nDB_HOST=db.internal\n"
            f"DB_PORT=5432\nDB_USER=shop\nDB_PASSWORD={password}\n"
            f"AWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={aws_secret}\n"
            f"AWS_REGION=eu-west-1\nSTRIPE_SECRET_KEY={stripe}\nLOG_LEVEL=info"
        )
        db_url = f"postgresql://shop:{pg_password}@db.internal:5432/shop"

        s.snapshot(_uuid(rng), {})
        first = "The checkout endpoint returns 500 since this morning. Can you find out why?"
        self.typed(s, first)
        s.prompt(first)
        s.say("I'll start with the configuration and the recent history.")
        log, shas = _git_log(rng, 3)
        for sha in shas:
            self.decoy("git-sha", sha)
        s.bash("git log -3", log, description="Show recent commits")
        read_id = s.read(f"{cwd}/.env", dotenv, thinking="The config is in .env; read it first.")
        del read_id
        after_read = s.say(
            "The database settings look complete. Let me check the environment next.",
            thinking=(
                f"The .env sets DB_PASSWORD={password} for user shop on db.internal, so the "
                "credentials are there; the failure is probably elsewhere."
            ),
        )
        s.bash("printenv", _printenv(rng, github), description="Print environment")
        s.bash_fails(
            "alembic upgrade head",
            "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
            "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
            'at "db.internal" (10.0.3.7), port 5432 failed: FATAL:  password authentication '
            f'failed for user "shop"\n(Background on this error at: https://sqlalche.me/e/20/e3q8)'
            f"\nurl: {db_url}",
        )
        log_lines = []
        for i in range(420):
            if i == 160:
                log_lines.append(f"api-1  | 2026-03-02 09:14:02 INFO connecting to {db_url}")
            log_lines.append(
                f"api-1  | 2026-03-02 09:{10 + i // 60:02d}:{i % 60:02d} INFO "
                f"GET /api/v1/{rng.choice(_NOUNS)}/{rng.randint(1, 9999)} 200 "
                f"{rng.randint(2, 300)}ms request_id={_uuid(rng)}"
            )
        s.bash_persisted("docker compose logs api", "\n".join(log_lines), config_path)

        # The user pastes a screenshot: an image block beside the text.
        png = base64.b64encode(fake_png(rng)).decode()
        self.decoy("image-data", png)
        s.user(
            [
                {"type": "text", "text": "This is what the checkout page shows."},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": png},
                },
            ]
        )

        # An edit of .env: Claude Code keeps the file as it was in file-history.
        env_path = f"{cwd}/.env"
        backup = hashlib.sha256(env_path.encode()).hexdigest()[:16] + "@v1"
        edit_prompt = s.prompt("Turn on debug logging in .env")
        self.typed(s, "Turn on debug logging in .env")
        s.snapshot(
            edit_prompt,
            {env_path: {"backupFileName": backup, "version": 1, "backupTime": _iso(s.clock)}},
        )
        s.edit(env_path, dotenv, "LOG_LEVEL=info", "LOG_LEVEL=debug")
        for kind, value in (("dotenv-value", password), ("aws-access-key", akid)):
            self.plant(kind, value, "Edit(.env) originalFile, file-history copy")
        self.put(f"file-history/{s.id}/{backup}", dotenv.encode(), s.clock)
        s.write(
            f"{cwd}/docker-compose.override.yml",
            "services:\n  api:\n    environment:\n"
            f"      DATABASE_URL: {db_url}\n      LOG_LEVEL: debug\n",
        )
        s.system("turn_duration", durationMs=rng.randint(20000, 90000))

        # /rewind: a new branch from an earlier point; the old branch stays in the file.
        s.last = after_read
        s.prompt("Actually, skip the env; run the tests first.")
        tests = _test_log(rng, 24, fail=True)
        s.bash("pytest -q tests/", tests, description="Run tests")
        s.say("One test fails in the token refresh path; the database is fine.")

        self.plant("dotenv-value", password, "thinking text, compaction summary")
        self.plant("connection-string-password", pg_password, "Write input and toolUseResult")
        s.compact(
            "1. The user asked why checkout returns 500.\n2. .env holds "
            f"DB_PASSWORD={password} and an AWS key pair.\n3. Migrations fail with a password "
            "error for user shop.\n4. test_refresh_token fails."
        )
        s.say("Continuing: I'll fix the refresh test.")
        s.emit({"type": "summary", "summary": "Checkout 500 and token refresh", "leafUuid": s.last})
        s.emit({"type": "custom-title", "customTitle": "checkout-500", "sessionId": s.id})
        s.emit({"type": "tag", "tag": "billing", "sessionId": s.id})
        base = self.finish_session(s, project)
        del base
        self.put(
            f"todos/{s.id}-agent-{s.id}.json",
            _dumps(
                [{"content": "Fix token refresh", "status": "in_progress", "activeForm": "Fixing"}]
            ),
            s.clock,
        )
        self.put(
            f"debug/{s.id}.txt",
            f"[DEBUG] Session {s.id} started\n[DEBUG] Loaded 3 settings files\n".encode(),
            s.clock,
        )
        self.symlinks["debug/latest"] = f"{s.id}.txt"
        self.put(
            f"session-env/{s.id}/sessionstart-hook-0.sh", b"export APP_ENV=development\n", s.clock
        )

    def infra(self, start: datetime) -> None:
        """Session 2: a private key read, a certificate, a lockfile, a subagent."""
        rng = self.rng
        cwd = f"{_HOME}/work/infra"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        key = self.plant("private-key", fake_private_key(rng), "Read(deploy.pem) output")
        cert = self.decoy("certificate", fake_certificate(rng))
        first = "Rotate the deploy key and check the CA bundle."
        self.typed(s, first)
        s.prompt(first)
        s.read(f"{cwd}/deploy/keys/deploy.pem", key)
        s.read(f"{cwd}/certs/ca.crt", cert)
        log, shas = _git_log(rng, 5)
        for sha in shas:
            self.decoy("git-sha", sha)
        s.bash("git log -5", log, description="Show history")
        lock, hashes = _lockfile(rng, 6)
        for integrity in hashes:
            self.decoy("integrity-hash", integrity)
        s.read(f"{cwd}/web/package-lock.json", lock)
        payload = _json_payload(rng, 3)
        s.bash("curl -s localhost:8080/api/v1/orders", payload, description="Query the API")

        agent_id = _pick(rng, _HEX, 8)
        task_prompt = "Find every place that loads deploy.pem and list them."
        s.tool(
            "Task",
            {"description": "Find key users", "prompt": task_prompt, "subagent_type": "Explore"},
            "Found 2 places: deploy/rotate.sh and ansible/roles/app/tasks/main.yml",
            {"status": "completed", "agentId": agent_id, "totalDurationMs": 8123},
        )
        sub = _Session(rng, s.id, cwd, s.clock, sidechain=True, agent_id=agent_id)
        sub.user(task_prompt)
        # The subagent sees the parent's context, so the key shows up again in its own file.
        sub.read(f"{cwd}/deploy/keys/deploy.pem", key)
        sub.say("deploy/rotate.sh and ansible/roles/app/tasks/main.yml load it.")
        folder = f"projects/{project}/{s.id}/subagents"
        self.put(f"{folder}/agent-{agent_id}.jsonl", sub.data(), sub.clock)
        self.put(
            f"{folder}/agent-{agent_id}.meta.json",
            _dumps({"agentType": "Explore", "description": "Find key users"}),
            sub.clock,
        )
        s.say("Both users of the key are listed; rotation can proceed.")
        s.emit({"type": "ai-title", "aiTitle": "Rotate deploy key", "sessionId": s.id})
        s.emit({"type": "tag", "tag": "ops", "sessionId": s.id})
        self.finish_session(s, project)

    def pasted_key(self, start: datetime) -> None:
        """Session 3: an Anthropic key pasted in a prompt; an older-style agent file."""
        rng = self.rng
        cwd = f"{_HOME}/work/shop-api"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        key = self.plant("anthropic-key", fake_anthropic_key(rng), "prompt, queue, history")
        text = f"my key {key} gets 401 from the API, is the client config wrong?"
        self.typed(s, "is the client config wrong?", pasted=f"my key {key} gets 401 from the API")
        s.prompt(text, queued=True)
        # 2.1.332 also keeps a copy of what it sent, keyed by a content hash (not a secret).
        blob = {"role": "user", "content": [{"type": "text", "text": text}]}
        digest = self.decoy("request-hash", hashlib.sha256(_dumps(blob)).hexdigest())
        s.emit({"type": "api-request-blob", "hash": digest, "message": blob, "sessionId": s.id})
        code = _code_file(rng, 6)
        s.read(f"{cwd}/app/clients/anthropic_client.py", code)
        s.say("The client reads the key from ANTHROPIC_API_KEY; a 401 means the key is revoked.")
        s.emit({"type": "ai-title", "aiTitle": "Anthropic client 401", "sessionId": s.id})
        self.finish_session(s, project)
        # Releases before subagent folders wrote agent transcripts beside the sessions.
        agent = _Session(rng, s.id, cwd, s.clock, sidechain=True, agent_id=_pick(rng, _HEX, 8))
        agent.user("Summarise app/clients/anthropic_client.py")
        agent.say("It wraps the Messages API with retries.")
        self.put(f"projects/{project}/agent-{agent.agent_id}.jsonl", agent.data(), agent.clock)

    def ordinary(self, start: datetime, index: int) -> None:
        """Further sessions: ordinary work, no secrets, decoys only."""
        rng = self.rng
        name = ("data-pipeline", "website", "infra", "shop-api")[index % 4]
        cwd = f"{_HOME}/work/{name}"
        project = project_folder_name(cwd)
        s = self.new_session(cwd, start)
        first = f"Refactor the {rng.choice(_NOUNS).replace('_', ' ')} module and run the tests."
        self.typed(s, first)
        s.prompt(first)
        s.read(f"{cwd}/src/{rng.choice(_NOUNS)}.py", _code_file(rng, rng.randint(3, 9)))
        log, shas = _git_log(rng, 2)
        for sha in shas:
            self.decoy("git-sha", sha)
        s.bash("git log -2", log, description="Show history")
        s.bash("pytest -q", _test_log(rng, rng.randint(5, 30)), description="Run tests")
        s.say("Done: the module is split and all tests pass.")
        if index % 2:
            s.emit({"type": "custom-title", "customTitle": f"refactor-{index}", "sessionId": s.id})
        if index % 3 == 0:
            s.emit({"type": "tag", "tag": "chore", "sessionId": s.id})
        self.finish_session(s, project)

    def build(self, sessions: int) -> None:
        rng = self.rng
        scripted: list[Callable[[datetime], None]] = [self.shop_api, self.infra, self.pasted_key]
        moment = self.start
        for index in range(sessions):
            if index < len(scripted):
                scripted[index](moment)
            else:
                self.ordinary(moment, index)
            moment += timedelta(hours=rng.randint(5, 60))
        if self.history:
            self.put("history.jsonl", b"".join(line + b"\n" for line in self.history), moment)
        npm = self.plant("npm-token", fake_npm_token(rng), "shell snapshot export")
        snapshot = (
            "# Snapshot file\nunalias -a 2>/dev/null\n"
            "shopt -s expand_aliases\nexport PATH=/usr/local/bin:/usr/bin:/bin\n"
            f"export NPM_TOKEN={npm}\nexport EDITOR=vim\n"
        )
        stamp = int(moment.timestamp() * 1000)
        self.put(
            f"shell-snapshots/snapshot-bash-{stamp}-{_pick(rng, _B62[:36], 6)}.sh",
            snapshot.encode(),
            moment,
        )
        self.put(
            f"paste-cache/{_pick(rng, _HEX, 16)}.txt", b"SELECT id, status FROM orders;\n", moment
        )

    def manifest(self) -> DemoManifest:
        secrets = []
        for (kind, value), where in self.secrets.items():
            probe = Planted(kind, value)
            needles = [n.encode() for n in probe.needles()]
            files = tuple(
                sorted(name for name, data in self.files.items() if any(n in data for n in needles))
            )
            secrets.append(Planted(kind, value, tuple(dict.fromkeys(where)), files))
        decoys = []
        for kind, value in self.decoys:
            needles = [n.encode() for n in Planted(kind, value).needles()]
            files = tuple(
                sorted(name for name, data in self.files.items() if any(n in data for n in needles))
            )
            decoys.append(Decoy(kind, value, files))
        return DemoManifest(
            secrets=tuple(secrets),
            decoys=tuple(decoys),
            sessions=tuple(self.session_ids),
            files=tuple(sorted(self.files)),
        )


def _generate(seed: int, sessions: int, start: datetime | None) -> _Demo:
    if sessions < 0:
        raise ValueError("sessions must be >= 0")
    demo = _Demo(seed, start or _DEFAULT_START)
    demo.build(sessions)
    return demo


def build_demo_config(
    root: Path, *, seed: int = 0, sessions: int = 3, start: datetime | None = None
) -> Path:
    """Write a synthetic Claude Code config dir at `root/.claude` and return its path.

    Sessions 1-3 are scripted (secrets in every place they hide; see the module docstring),
    further ones are ordinary work with decoys only. Files are 0600 like Claude Code's, and
    each file's mtime is the time of its last record. `start` is when the first session began.
    """
    demo = _generate(seed, sessions, start)
    config = root / _CONFIG_NAME
    config.mkdir(parents=True, exist_ok=True)
    for relative, data in demo.files.items():
        target = config / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o600)
        stamp = demo.mtimes[relative].timestamp()
        os.utime(target, (stamp, stamp))
    for relative, link_target in demo.symlinks.items():
        link = config / relative
        if not os.path.lexists(link):
            link.symlink_to(link_target)
    return config


def demo_manifest(
    *, seed: int = 0, sessions: int = 3, start: datetime | None = None
) -> DemoManifest:
    """What `build_demo_config` with the same arguments plants (computed, not read back)."""
    return _generate(seed, sessions, start).manifest()


def planted_secrets(*, seed: int = 0, sessions: int = 3) -> tuple[Planted, ...]:
    return demo_manifest(seed=seed, sessions=sessions).secrets


# --- large transcripts ----------------------------------------------------------------------


class _Pools:
    """Ordinary tool output, made once and reused, so generation runs at disk-ish speed."""

    def __init__(self, rng: random.Random) -> None:
        self.code = [_code_file(rng, rng.randint(2, 40)) for _ in range(48)]
        self.numbered = [_numbered(text) for text in self.code]
        self.tests = [
            _test_log(rng, rng.randint(5, 120), fail=rng.random() < 0.2) for _ in range(24)
        ]
        self.git = [_git_log(rng, rng.randint(2, 12))[0] for _ in range(24)]
        self.json = [_json_payload(rng, rng.randint(2, 40)) for _ in range(24)]
        self.locks = [_lockfile(rng, rng.randint(4, 30))[0] for _ in range(6)]
        self.numbered_locks = [_numbered(text) for text in self.locks]
        self.prompts = [
            f"{rng.choice(_VERBS).capitalize()} the {rng.choice(_NOUNS).replace('_', ' ')} "
            f"code path and make the tests pass" + rng.choice(("", ".", "?", " please."))
            for _ in range(64)
        ]


def write_large_transcript(path: Path, target_bytes: int, seed: int = 0) -> LargeTranscript:
    """Write a realistic transcript of about `target_bytes` (it stops at the first turn past
    it): code reads, test logs, git output, JSON, edits, with about one planted secret per 200
    lines. Deterministic for a seed; memory stays small whatever the size."""
    rng = random.Random(seed)  # noqa: S311 - reproducible fake data
    pools = _Pools(rng)
    cwd = f"{_HOME}/work/monorepo"
    s = _Session(rng, _uuid(rng), cwd, _DEFAULT_START)
    planted: dict[tuple[str, str], list[int]] = {}
    written = 0
    line_count = 0
    next_secret = rng.randint(150, 250)

    # Kinds take turns (from a seeded start) so that even a small file holds several.
    rotation = ["dotenv", "printenv", "connection", "aws-write", "pem", "anthropic", "stripe"]
    turn = rng.randrange(len(rotation))

    def secret_turn() -> tuple[str, str]:
        nonlocal turn
        kind = rotation[turn % len(rotation)]
        turn += 1
        if kind == "dotenv":
            value = fake_password(rng)
            s.read(f"{cwd}/services/api/.env", f"APP_ENV=staging\nDB_PASSWORD={value}\nDEBUG=0")
            return "dotenv-value", value
        if kind == "printenv":
            value = fake_github_token(rng)
            s.bash("printenv", _printenv(rng, value), description="Print environment")
            return "github-token", value
        if kind == "connection":
            value = _pick(rng, _B62, 18)
            s.bash_fails(
                "psql -c 'select 1'",
                f"psql: error: connection to server failed\nDATABASE_URL=postgres://app:{value}"
                "@10.0.0.5:5432/app",
            )
            return "connection-string-password", value
        if kind == "aws-write":
            value = fake_aws_access_key(rng)
            s.write(
                f"{cwd}/deploy/credentials",
                f"[default]\naws_access_key_id = {value}\nregion = eu-west-1\n",
            )
            return "aws-access-key", value
        if kind == "pem":
            value = fake_private_key(rng)
            s.read(f"{cwd}/deploy/id_rsa", value)
            return "private-key", value
        if kind == "anthropic":
            value = fake_anthropic_key(rng)
            s.prompt(f"use {value} for the integration tests")
            return "anthropic-key", value
        value = fake_stripe_key(rng)
        s.bash("cat config/stripe.env", f"STRIPE_KEY={value}\nSTRIPE_MODE=live", description="Show")
        return "stripe-key", value

    def ordinary_turn() -> None:
        choice = rng.random()
        if choice < 0.3:
            i = rng.randrange(len(pools.code))
            text = pools.code[i]
            lines = text.count("\n") + 1
            s.tool(
                "Read",
                {"file_path": f"{cwd}/src/{rng.choice(_NOUNS)}_{i}.py"},
                pools.numbered[i],
                {
                    "type": "text",
                    "file": {
                        "filePath": f"{cwd}/src/{rng.choice(_NOUNS)}_{i}.py",
                        "content": text,
                        "numLines": lines,
                        "startLine": 1,
                        "totalLines": lines,
                    },
                },
            )
        elif choice < 0.5:
            s.bash("pytest -q", rng.choice(pools.tests), description="Run tests")
        elif choice < 0.62:
            s.bash("git log -10", rng.choice(pools.git), description="Show history")
        elif choice < 0.74:
            s.bash(
                "curl -s localhost:8080/api/v1/items", rng.choice(pools.json), description="Query"
            )
        elif choice < 0.78:
            i = rng.randrange(len(pools.locks))
            s.tool(
                "Read",
                {"file_path": f"{cwd}/web/package-lock.json"},
                pools.numbered_locks[i],
                {"type": "text", "file": {"filePath": f"{cwd}/web/package-lock.json",
                                          "content": pools.locks[i], "numLines": 1,
                                          "startLine": 1, "totalLines": 1}},
            )  # fmt: skip
        elif choice < 0.9:
            original = rng.choice(pools.code)
            old = original.split("\n")[-3]
            s.edit(f"{cwd}/src/{rng.choice(_NOUNS)}.py", original, old, old + "  # checked")
        else:
            s.prompt(rng.choice(pools.prompts))
        if rng.random() < 0.3:
            s.say(
                "Done. " + rng.choice(pools.prompts),
                thinking="Next I should look at " + rng.choice(_NOUNS).replace("_", " ") + ".",
            )

    with path.open("wb") as out:
        s.prompt(pools.prompts[0])
        while written < target_bytes:
            if line_count + len(s.lines) >= next_secret:
                before = len(s.lines)
                kind, value = secret_turn()
                needles = [n.encode() for n in Planted(kind, value).needles()]
                planted.setdefault((kind, value), []).extend(
                    line_count + before + i + 1
                    for i, data in enumerate(s.lines[before:])
                    if any(n in data for n in needles)
                )
                next_secret += rng.randint(150, 250)
            else:
                ordinary_turn()
            chunk = s.data()
            out.write(chunk)
            written += len(chunk)
            line_count += len(s.lines)
            s.lines.clear()

    secrets = tuple(
        Planted(kind, value, files=(path.name,), lines=tuple(lines))
        for (kind, value), lines in planted.items()
    )
    return LargeTranscript(path, written, line_count, s.id, secrets)


def iter_planted_needles(secrets: tuple[Planted, ...]) -> Iterator[tuple[Planted, str]]:
    """Every (secret, needle) pair: what a test greps an output for."""
    for secret in secrets:
        for needle in secret.needles():
            yield secret, needle
