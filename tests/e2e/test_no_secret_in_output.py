"""Invariant 7: a secret's value never reaches stdout, stderr, a report, a log or a state file.

The demo's fake secrets are planted, plus a crafted session that puts secrets where labels and
titles come from (a Bash command, a Read path, a custom title, a summary, a torn last line).
Then every command that reads them runs as a real process, in every output format, and all of
stdout, stderr and every file under SCRUB_HOME is searched for each planted value and for any
12-character piece of it beyond a vendor's public prefix. Failures name the run and the kind,
never the value.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import (
    build_demo_config,
    demo_manifest,
    fake_anthropic_key,
    fake_aws_access_key,
    fake_github_token,
    fake_stripe_key,
)

pytestmark = pytest.mark.slow  # about a dozen real processes

SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
SHOP_FILE = f"projects/-home-demo-work-shop-api/{SHOP}.jsonl"
PUBLIC_PREFIXES = ("sk-ant-api03-", "sk_live_", "ghp_", "npm_", "AKIA", "-----BEGIN ")
PIECE = 12


@dataclass
class Planted:
    kind: str
    value: str = field(repr=False)


@dataclass
class Outputs:
    texts: dict[str, str]  # run name -> stdout + stderr
    stdout: dict[str, str]
    home: Path  # SCRUB_HOME after every run
    secrets: list[Planted]
    inputs: str  # every file of the config dir before the runs


def pieces(value: str) -> Iterator[str]:
    """The value and every 12-character window of it past a public prefix (step 3)."""
    yield value
    body_start = next((len(p) for p in PUBLIC_PREFIXES if value.startswith(p)), 0)
    for start in range(body_start, max(body_start, len(value) - PIECE) + 1, 3):
        piece = value[start : start + PIECE]
        if len(piece) == PIECE:
            yield piece


def leaks(text: str, secrets: list[Planted]) -> list[str]:
    return sorted({s.kind for s in secrets if any(p in text for p in pieces(s.value))})


@pytest.fixture(scope="module")
def outputs(sandbox_factory: Callable[[str], Any], transcript_builder: type[Any]) -> Outputs:
    world = sandbox_factory("no-secret-output")
    config = build_demo_config(world.config.parent)
    secrets = [Planted(s.kind, needle) for s in demo_manifest().secrets for needle in s.needles()]
    r = random.Random(21)
    in_command, in_path, in_title = fake_github_token(r), fake_stripe_key(r), fake_github_token(r)
    in_summary, in_torn = fake_anthropic_key(r), fake_aws_access_key(r)
    secrets += [
        Planted("command", in_command),
        Planted("read-path", in_path),
        Planted("title", in_title),
        Planted("summary", in_summary),
        Planted("torn-line", in_torn),
    ]
    t = transcript_builder(cwd="/home/u/work/tools")
    t.prompt("release it")
    t.bash(f"GH_TOKEN={in_command} gh release create v2", "created v2")
    t.read(f"/home/u/notes/{in_path}.txt", "nothing here")
    t.add({"type": "custom-title", "customTitle": f"leak {in_title}", "sessionId": t.session_id})
    t.add({"type": "summary", "summary": f"Uses {in_summary}", "leafUuid": "x"})
    torn = b'{"type":"user","message":{"content":"' + in_torn.encode()
    extra = t.write(
        config / "projects" / "-home-u-work-tools" / f"{t.session_id}.jsonl", torn_tail=torn
    )

    copy = world.root / "copy.jsonl"
    in_place = world.root / "in-place.jsonl"
    shutil.copy(config / SHOP_FILE, in_place)
    policy = world.root / "bad-policy.yaml"
    policy.write_text(f'version: 1\ndetection:\n  allowlist:\n    patterns: ["{in_command}("]\n')
    runs: dict[str, tuple[Any, ...]] = {
        "audit text": ("audit",),
        "audit text preview verbose": ("audit", "--preview", "--verbose"),
        "audit json preview": ("audit", "--format", "json", "--preview"),
        "audit sarif": ("audit", "--format", "sarif"),
        "audit one file": ("audit", "--verbose", "--preview", extra),
        "audit demo": ("audit", "--demo", "--preview", "--verbose"),
        "audit bad policy": ("audit", "--policy", policy),
        "verify original": ("verify", config / SHOP_FILE),
        "verify original json": ("verify", config / SHOP_FILE, "--format", "json"),
        "redact copy": ("redact", config / SHOP_FILE, "--output", copy),
        "redact extra json": (
            "redact",
            extra,
            "--output",
            world.root / "extra.jsonl",
            "--format",
            "json",
        ),
        "verify copy": ("verify", copy, "--original", config / SHOP_FILE),
        "redact in place json": ("redact", in_place, "--in-place", "--format", "json"),
        "redact all": ("redact", "--all"),
    }
    inputs = "".join(
        p.read_bytes().decode("utf-8", errors="replace")
        for p in sorted(config.rglob("*"))
        if p.is_file() and not p.is_symlink()
    )
    texts, stdout = {}, {}
    for name, args in runs.items():
        done = world.scrub(*args)
        assert "Traceback" not in done.stderr, name
        assert "internal error" not in done.stderr, name
        texts[name] = done.stdout + done.stderr
        stdout[name] = done.stdout
    return Outputs(texts, stdout, world.scrub_home, secrets, inputs)


def test_the_search_finds_every_planted_value_in_the_inputs(outputs: Outputs) -> None:
    assert leaks(outputs.inputs, outputs.secrets) == sorted({s.kind for s in outputs.secrets})


def test_every_run_produced_output(outputs: Outputs) -> None:
    # The search below is only worth something if the runs reported findings.
    assert "secrets" in outputs.texts["audit text"]
    assert '"findings": [' in outputs.texts["audit json preview"]
    assert "NOT verified" in outputs.texts["verify original"]
    assert "secrets replaced" in outputs.texts["redact all"]
    assert "scrub: error:" in outputs.texts["audit bad policy"]
    assert outputs.texts["audit json preview"].count('"preview": "') > 10


@pytest.mark.parametrize(
    "run",
    [
        "audit text", "audit text preview verbose", "audit json preview", "audit sarif",
        "audit one file", "audit demo", "audit bad policy", "verify original",
        "verify original json", "redact copy", "redact extra json", "verify copy",
        "redact in place json", "redact all",
    ],
)  # fmt: skip
def test_no_planted_value_in_stdout_or_stderr(outputs: Outputs, run: str) -> None:
    assert leaks(outputs.texts[run], outputs.secrets) == []


def test_no_planted_value_in_any_file_under_scrub_home(outputs: Outputs) -> None:
    files = [p for p in outputs.home.rglob("*") if p.is_file() and p.name != "fingerprint.key"]
    assert any(p.is_relative_to(outputs.home / "redacted") for p in files)
    found = {}
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        kinds = leaks(text, outputs.secrets)
        if kinds:
            found[path.relative_to(outputs.home).as_posix()] = kinds
    assert found == {}


def test_previews_show_only_a_public_prefix_and_a_length(outputs: Outputs) -> None:
    doc = json.loads(outputs.stdout["audit json preview"])
    for item in doc["findings"]:
        prefix, _, rest = item["preview"].partition("…(")
        assert prefix in ("", *PUBLIC_PREFIXES), item["kind"]
        assert rest == f"{item['length']} chars)"
