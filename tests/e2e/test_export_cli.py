"""`scrub export` as a real process on the demo config dir: Markdown to stdout, HTML and jsonl
to files (0600), errors with exit codes; no planted secret in any output or file."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scrubber.demo import build_demo_config, demo_manifest
from tests.conftest import Sandbox

PUBLIC_PREFIXES = ("sk-ant-api03-", "sk_live_", "ghp_", "npm_", "AKIA", "-----BEGIN ")


def _pieces(value: str, size: int = 12) -> list[str]:
    """The value and every 12-character piece of it past a vendor's public prefix: a context
    cut through a secret must not show half of it either."""
    start = next((len(p) for p in PUBLIC_PREFIXES if value.startswith(p)), 0)
    return [value] + [value[i : i + size] for i in range(start, len(value) - size + 1, 3)]


pytestmark = pytest.mark.slow  # real processes

NEEDLES = [p for s in demo_manifest().secrets for n in s.needles() for p in _pieces(n)]
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"


def _no_secret(text: str) -> None:
    for needle in NEEDLES:
        assert needle not in text


@pytest.fixture(scope="module")
def box(sandbox_factory: Callable[[str], Sandbox]) -> Sandbox:
    world = sandbox_factory("export-cli")
    build_demo_config(world.config.parent)
    return world


def test_markdown_to_stdout_html_and_jsonl_to_private_files(box: Sandbox) -> None:
    html_file, jsonl_file = box.root / "shop.html", box.root / "shop.jsonl"
    markdown = box.scrub("export", "checkout-500", "--thinking")
    html = box.scrub("export", SHOP[:8], "--format", "html", "-o", html_file)
    jsonl = box.scrub("export", SHOP, "--format", "jsonl", "-o", jsonl_file)
    for done in (markdown, html, jsonl):
        assert done.returncode == 0, done.stderr
        _no_secret(done.output)
    assert markdown.stdout.startswith("# checkout-500\n")
    assert "## What was redacted" in markdown.stdout
    assert "| dotenv-value |" in markdown.stdout
    assert f"scrub: wrote {html_file}: session {SHOP} as html" in html.stderr
    for path in (html_file, jsonl_file):
        assert path.stat().st_mode & 0o777 == 0o600
        _no_secret(path.read_text(errors="replace"))
    assert "Content-Security-Policy" in html_file.read_text()
    lines = jsonl_file.read_bytes().splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines if line.strip())


def test_a_subagent_appears_inside_the_call_that_started_it(box: Sandbox) -> None:
    done = box.scrub("export", INFRA)
    assert done.returncode == 0, done.stderr
    _no_secret(done.output)
    task = done.stdout.index("Tool call `Task(")
    assert done.stdout.index("> #### subagent ", task) > task


def test_errors_say_what_to_do(box: Sandbox) -> None:
    unknown = box.scrub("export", "no-such-session")
    inside = box.scrub("export", SHOP, "-o", box.config / "projects" / "x.md")
    helped = box.scrub("export", "--help")
    assert unknown.returncode == 2 and "no session matches" in unknown.stderr
    assert inside.returncode == 2 and "projects folder" in inside.stderr
    assert not (box.config / "projects" / "x.md").exists()
    assert helped.returncode == 0 and "scrub export 3f9a2c1e > session.md" in helped.stdout
