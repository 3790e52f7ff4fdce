"""A token held by a JSON object key (an MCP tool's result keyed by token, a backup keyed by a
path under a folder named after one): `scrub audit` said "0 secrets" of such a file while
`scrub verify` refused it. Now the audit reports it, cold and from its cache, as held by a key
(which no redaction may change), names the object and never the key, and warns that a redacted
copy keeps it. Real processes; the fake token is built at run time."""

from __future__ import annotations

import json
import random
from typing import Any

from scrubber.demo import fake_github_token


def _session(sandbox: Any, transcript_builder: type[Any], token: str) -> Any:
    builder = transcript_builder(cwd="/home/u/work/keys")
    builder.prompt("who owns the repositories?")
    builder.tool("mcp__github__owners", {"org": "acme"}, "done", {"owners": {token: "ci-bot"}})
    builder.say("one bot owns them")
    return builder.write(sandbox.config / "projects" / "-home-u-work-keys" / "s.jsonl")


def test_audit_reports_a_token_in_a_key_and_a_copy_keeps_it(sandbox, transcript_builder) -> None:
    token = fake_github_token(random.Random(21))
    transcript = _session(sandbox, transcript_builder, token)
    runs = [sandbox.scrub("audit", "--format", "json") for _ in range(2)]  # cold, then cached
    for done in runs:
        assert done.returncode == 1, done.output
        assert token not in done.output
        (finding,) = json.loads(done.stdout)["findings"]
        assert (finding["kind"], finding["in_key"]) == ("github-token", True)
        assert finding["json_path"] == "/toolUseResult/owners"  # the object, not the member
        assert finding["span"] == [0, len(token)]
    text = sandbox.scrub("audit")
    assert "in a JSON object key (no redaction can change it)" in text.stdout
    assert "no redaction can take out" in text.stderr and token not in text.output

    copy = sandbox.root / "copy.jsonl"
    redacted = sandbox.scrub("redact", transcript, "--output", copy)
    assert redacted.returncode == 0 and token not in redacted.output
    assert "1 secret left in JSON object keys" in redacted.stdout
    assert token in copy.read_text()  # the key is kept, as Claude Code's format requires
    as_json = sandbox.scrub("redact", transcript, "--output", copy, "--force", "--format", "json")
    assert json.loads(as_json.stdout)["files"][0]["left_in_keys"] == 1
    again = sandbox.scrub("audit", copy, "--format", "json")
    assert again.returncode == 1 and json.loads(again.stdout)["findings"][0]["in_key"]
    verified = sandbox.scrub("verify", copy, "--original", transcript)
    assert verified.returncode == 1 and "secrets in JSON object keys: 1" in verified.stdout


def test_a_warm_audit_after_an_append_keeps_the_key_finding(sandbox, transcript_builder) -> None:
    token = fake_github_token(random.Random(22))
    transcript = _session(sandbox, transcript_builder, token)
    cold = json.loads(sandbox.scrub("audit", "--format", "json").stdout)["findings"]
    with transcript.open("a") as stream:  # Claude Code appends a turn
        stream.write(json.dumps({"type": "user", "message": {"content": "thanks"}}) + "\n")
    warm = json.loads(sandbox.scrub("audit", "--format", "json").stdout)
    assert warm["findings"] == cold
    assert any("no redaction can take out" in w for w in warm["warnings"])


def test_a_place_never_spells_out_a_key_that_holds_a_token(sandbox, transcript_builder) -> None:
    rng = random.Random(23)
    outer, inner, value = (fake_github_token(rng) for _ in range(3))
    builder = transcript_builder(cwd="/home/u/work/keys")
    # Nested token keys, a value under a token key, and one token both in a value and a key.
    result = {"owners": {outer: {inner: "x"}}, "bots": {outer: f"GH={value}"}}
    builder.tool("mcp__github__owners", {"org": "acme"}, f"GH={inner}", result)
    builder.write(sandbox.config / "projects" / "-home-u-work-keys" / "s.jsonl")
    for run in range(2):  # cold, then from the cache
        done = sandbox.scrub("audit", "--format", "json")
        assert done.returncode == 1
        for token in (outer, inner, value):
            assert token not in done.output, run
            assert token not in "".join(
                p.read_text() for p in (sandbox.scrub_home / "state").rglob("*") if p.is_file()
            )
        found = json.loads(done.stdout)["findings"]
        in_keys = sorted(f["json_path"] for f in found if f["in_key"])
        assert len(in_keys) == 3, in_keys  # outer twice (two objects), inner once
        assert any(
            not f["in_key"] and f["json_path"].startswith("/toolUseResult/bots/") for f in found
        )
