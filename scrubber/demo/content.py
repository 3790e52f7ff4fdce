"""Ordinary tool output for demo sessions: code files, test logs, git logs, lockfiles, an
environment listing, JSON payloads."""

from __future__ import annotations

import json
import random
import string

from scrubber.demo.fakes import HEX, fake_git_sha, fake_integrity, fake_uuid, pick
from scrubber.demo.records import DEMO_HOME

NOUNS = (
    "order", "invoice", "customer", "session", "token", "cart", "payment", "user", "account",
    "report", "webhook", "password_hash", "auth_header", "config", "cache", "queue", "retry",
    "schema", "migration", "credential_store", "secret_name", "api_client", "event", "batch",
)  # fmt: skip


VERBS = (
    "load", "save", "validate", "refresh", "build", "parse", "fetch", "sync", "render", "apply",
    "resolve", "encode", "verify", "rotate", "merge", "compute", "dispatch", "authenticate",
)  # fmt: skip


_TYPES = ("str", "int", "dict[str, Any]", "list[str]", "bytes", "Order", "Session", "None")


_AUTHORS = (
    "Ada Park <ada@example.com>",
    "Sam Ortiz <sam@example.com>",
    "Lee Chen <lee@example.com>",
)


def code_file(rng: random.Random, functions: int) -> str:
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
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        arg, rtype = rng.choice(NOUNS), rng.choice(_TYPES)
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


def test_log_text(rng: random.Random, tests: int, *, fail: bool = False) -> str:
    lines = ["============================= test session starts =============================="]
    lines.append("platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0")
    lines.append(f"collected {tests} items")
    lines.append("")
    for i in range(tests):
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
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


def git_log_text(rng: random.Random, commits: int) -> tuple[str, list[str]]:
    shas = [fake_git_sha(rng) for _ in range(commits)]
    out = []
    for sha in shas:
        out += [
            f"commit {sha}",
            f"Author: {rng.choice(_AUTHORS)}",
            f"Date:   Mon Mar {rng.randint(1, 28)} {rng.randint(8, 19)}:{rng.randint(10, 59)}:07 "
            "2026 +0100",
            "",
            f"    {rng.choice(VERBS).capitalize()} {rng.choice(NOUNS).replace('_', ' ')} handling",
            "",
        ]
    return "\n".join(out), shas


def lockfile_text(rng: random.Random, packages: int) -> tuple[str, list[str]]:
    hashes = [fake_integrity(rng) for _ in range(packages)]
    entries = {
        f"node_modules/{rng.choice(NOUNS).replace('_', '-')}-{i}": {
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


def printenv_output(rng: random.Random, token: str) -> str:
    env = {
        "SHELL": "/bin/bash",
        "COLORTERM": "truecolor",
        "HOSTNAME": "devbox-" + pick(rng, HEX, 6),
        "LANG": "en_US.UTF-8",
        "HOME": DEMO_HOME,
        "LS_COLORS": _LS_COLORS,
        "PWD": f"{DEMO_HOME}/work/shop-api",
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


def json_payload(rng: random.Random, items: int) -> str:
    data = {
        "data": [
            {
                "id": fake_uuid(rng),
                "type": rng.choice(NOUNS),
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
