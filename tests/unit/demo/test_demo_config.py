"""scrubber.demo writes Claude Code's real format, plants what its manifest says where it says,
and is deterministic. Assertions name kinds, never values: a failing test must not print a
(fake) secret either."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import (
    Planted,
    build_demo_config,
    demo_manifest,
    fake_github_token,
    planted_secrets,
    write_large_transcript,
)
from scrubber.transcript.jsonl import read_lines
from scrubber.transcript.records import Record, ToolIndex, read_records
from scrubber.transcript.sessions import discover

ENVELOPE = ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")


def tree(config: Path) -> dict[str, bytes]:
    return {
        p.relative_to(config).as_posix(): p.read_bytes()
        for p in sorted(config.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def digests(config: Path) -> dict[str, str]:
    """File name -> SHA-256: what a failing comparison may show (the bytes hold secrets)."""
    return {name: hashlib.sha256(data).hexdigest() for name, data in tree(config).items()}


def holds(data: bytes | str, secret: Planted) -> bool:
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    return any(needle in text for needle in secret.needles())


def by_kind(secrets: tuple[Planted, ...]) -> dict[str, Planted]:
    return {s.kind: s for s in secrets}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    config = build_demo_config(tmp_path_factory.mktemp("demo"), seed=7, sessions=4)
    return config, demo_manifest(seed=7, sessions=4)


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    a = build_demo_config(tmp_path / "a", seed=1)
    b = build_demo_config(tmp_path / "b", seed=1)
    c = build_demo_config(tmp_path / "c", seed=2)
    assert digests(a) == digests(b)
    assert {k: (a / k).stat().st_mtime for k in tree(a)} == {
        k: (b / k).stat().st_mtime for k in tree(b)
    }
    assert digests(a) != digests(c)
    assert [s.kind for s in planted_secrets(seed=1)] == [s.kind for s in planted_secrets(seed=1)]


def test_manifest_lists_exactly_the_files_written(demo: tuple[Path, Any]) -> None:
    config, manifest = demo
    assert sorted(tree(config)) == list(manifest.files)
    assert (config / "debug" / "latest").is_symlink()
    for name in manifest.files:
        assert (config / name).stat().st_mode & 0o777 == 0o600


def test_every_transcript_line_is_a_record_with_the_envelope(demo: tuple[Path, Any]) -> None:
    config, manifest = demo
    transcripts = [n for n in manifest.files if n.startswith("projects/") and n.endswith(".jsonl")]
    assert len(transcripts) == 4 + 2  # sessions, one subagent, one legacy agent file
    for name in transcripts:
        for line in read_lines(config / name):
            assert line.problem is None, (name, line.number)
            record = Record(line.record or {})
            assert record.type is not None
            if record.is_conversation or record.type == "system":
                assert all(key in record.raw for key in ENVELOPE), (name, line.number)
                assert record.uuid and record.timestamp is not None
                assert record.session_id in manifest.sessions
            if record.type == "assistant":
                # one content block per line (each tool_use its own line)
                assert len(record.content_blocks) == 1
            # compact like JSON.stringify
            assert b'", "' not in line.raw.data and b'": ' not in line.raw.data[:200]


def test_tool_shapes_match_claude_code(demo: tuple[Path, Any]) -> None:
    config, manifest = demo
    first = manifest.sessions[0]
    (path,) = config.glob(f"projects/*/{first}.jsonl")
    index = ToolIndex()
    inputs: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for record in read_records(path):
        index.add(record)
        inputs.update((use.id, use.input) for use in record.tool_uses)
        for block in record.content_blocks:
            if block.type == "thinking":
                assert block.signature and base64.b64decode(block.signature)
            if block.type == "image":
                data = base64.b64decode(block.raw["source"]["data"])
                assert data.startswith(b"\x89PNG\r\n\x1a\n")
                seen["image"] = seen.get("image", 0) + 1
        for result in record.tool_results:
            call = index.call_for(result)
            assert call is not None
            assert record.source_tool_assistant_uuid == call.record_uuid
            output = record.tool_use_result
            seen[call.name] = seen.get(call.name, 0) + 1
            if call.name == "Read":
                assert isinstance(output, dict) and output["type"] == "text"
                file = output["file"]
                assert set(file) == {"filePath", "content", "numLines", "startLine", "totalLines"}
                numbered = result.text().split("\n")
                raw = file["content"].split("\n")
                prefixed = numbered == [f"{n}\t{line}" for n, line in enumerate(raw, start=1)]
                assert prefixed, "Read output lacks N\\t prefixes"
            elif call.name == "Bash" and result.is_error:
                assert isinstance(output, str) and output.startswith("Error: Exit code ")
                same = result.text() == output
                assert same, "error text differs between tool_result and toolUseResult"
                seen["bash-error"] = 1
            elif call.name == "Bash":
                assert isinstance(output, dict)
                assert {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"} <= set(
                    output
                )
                if "persistedOutputPath" in output:
                    assert result.text().startswith("<persisted-output>")
                    assert len(output["stdout"]) <= 30000
                    saved = output["persistedOutputPath"].rsplit("/", 1)[-1]
                    assert (path.parent / first / "tool-results" / saved).is_file()
                    seen["persisted"] = 1
            elif call.name == "Edit":
                assert isinstance(output, dict)
                assert {
                    "filePath",
                    "oldString",
                    "newString",
                    "originalFile",
                    "structuredPatch",
                } <= set(output)
                assert output["structuredPatch"][0]["lines"]
                same = output["newString"] == inputs[call.id]["new_string"]
                assert same, "Edit newString differs from the input"
            elif call.name == "Write":
                assert isinstance(output, dict) and output["type"] == "create"
                same = output["content"] == inputs[call.id]["content"]
                assert same, "Write content differs from the input"
    assert {"Read", "Bash", "Edit", "Write", "image", "bash-error", "persisted"} <= set(seen)
    kinds = {r.type for r in read_records(path)}
    assert {
        "summary",
        "custom-title",
        "tag",
        "last-prompt",
        "file-history-snapshot",
        "system",
    } <= kinds
    subtypes = {r.subtype for r in read_records(path) if r.type == "system"}
    assert "compact_boundary" in subtypes
    assert any(r.is_compact_summary for r in read_records(path))


def test_secrets_sit_where_the_manifest_says(demo: tuple[Path, Any]) -> None:
    config, manifest = demo
    files = tree(config)
    for secret in manifest.secrets:
        assert secret.files, secret.kind
        for name, data in files.items():
            found = holds(data, secret)  # a variable: pytest must not show the data
            assert found == (name in secret.files), (secret.kind, name)
    kinds = by_kind(manifest.secrets)
    assert set(kinds) == {
        "dotenv-value",
        "aws-access-key",
        "aws-secret-key",
        "stripe-key",
        "github-token",
        "connection-string-password",
        "private-key",
        "anthropic-key",
        "npm-token",
    }

    def where(kind: str) -> set[str]:
        return {name.split("/")[0] for name in kinds[kind].files}

    assert "file-history" in where("dotenv-value")
    assert "history.jsonl" in where("anthropic-key")
    assert "shell-snapshots" in where("npm-token")
    assert any("/tool-results/" in n for n in kinds["connection-string-password"].files)
    assert any("/subagents/" in n for n in kinds["private-key"].files)


def test_secrets_reach_every_place_claude_code_copies_them(demo: tuple[Path, Any]) -> None:
    config, manifest = demo
    kinds = by_kind(manifest.secrets)
    first, _, third, *_ = manifest.sessions
    (session1,) = config.glob(f"projects/*/{first}.jsonl")
    (session3,) = config.glob(f"projects/*/{third}.jsonl")
    places: set[str] = set()
    for record in read_records(session1):
        for block in record.content_blocks:
            if block.thinking and holds(block.thinking, kinds["dotenv-value"]):
                places.add("thinking")
        if record.is_compact_summary and holds(json.dumps(record.raw), kinds["dotenv-value"]):
            places.add("compact-summary")
        for use in record.tool_uses:
            if use.name == "Write" and holds(
                use.input["content"], kinds["connection-string-password"]
            ):
                places.add("write-input")
        output = record.tool_use_result
        if isinstance(output, str) and holds(output, kinds["connection-string-password"]):
            places.add("error-string")
        if isinstance(output, dict) and holds(
            output.get("originalFile") or "", kinds["aws-access-key"]
        ):
            places.add("edit-original")
        if isinstance(output, dict) and holds(output.get("stdout", ""), kinds["github-token"]):
            places.add("bash-stdout")
    for record in read_records(session3):
        if holds(json.dumps(record.raw), kinds["anthropic-key"]):
            places.add(f"prompt:{record.type}")
    assert places == {
        "thinking",
        "compact-summary",
        "write-input",
        "error-string",
        "edit-original",
        "bash-stdout",
        "prompt:user",
        "prompt:queue-operation",
        "prompt:last-prompt",
        "prompt:api-request-blob",
    }


def test_decoys_are_present_and_are_not_secrets(demo: tuple[Path, Any]) -> None:
    _, manifest = demo
    kinds = {d.kind for d in manifest.decoys}
    assert {"git-sha", "integrity-hash", "certificate", "image-data", "request-hash"} <= kinds
    values = {s.value for s in manifest.secrets}
    for decoy in manifest.decoys:
        assert decoy.files, decoy.kind
        is_secret = decoy.value in values
        assert not is_secret, decoy.kind
    cert = next(d for d in manifest.decoys if d.kind == "certificate")
    assert cert.value.startswith("-----BEGIN CERTIFICATE-----")


def test_reprs_hide_values(demo: tuple[Path, Any]) -> None:
    _, manifest = demo
    shown = repr(manifest)
    assert not any(s.value in shown for s in manifest.secrets)
    assert not any(d.value in shown for d in manifest.decoys)


def test_source_holds_no_token_literal() -> None:
    """The fakes are built at run time: the source names the prefixes (in comments) but holds
    nothing that looks like a whole token, so the repository passes its own audit."""
    package = Path(__file__).resolve().parents[3] / "scrubber" / "demo"
    text = "".join(source.read_text() for source in sorted(package.glob("*.py")))
    assert "def fake_github_token" in text  # the package was found
    for prefix in ("gh" + "p_", "sk-" + "ant-api03-", "AK" + "IA", "sk" + "_live_", "np" + "m_"):
        assert not re.search(re.escape(prefix) + r"[A-Za-z0-9_\-]{12,}", text), prefix
    assert "PRIVATE KEY-----\n" not in text


def test_github_token_checksum_is_consistent() -> None:
    import random
    import zlib

    token = fake_github_token(random.Random(3))
    body, check = token[4:34], token[34:]
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    value = 0
    for char in check:
        value = value * 62 + alphabet.index(char)
    well_formed = len(token) == 40 and value == zlib.crc32(body.encode())
    assert well_formed


def test_more_sessions_and_none(tmp_path: Path) -> None:
    many = build_demo_config(tmp_path / "many", seed=0, sessions=9)
    assert len(discover(many).sessions) == 9
    none = build_demo_config(tmp_path / "none", seed=0, sessions=0)
    found = discover(none)
    assert found.sessions == ()
    assert [f.kind.value for f in found.side_files] == ["shell-snapshot", "paste-cache"]


def test_large_transcript_is_realistic_and_deterministic(tmp_path: Path) -> None:
    target = 3 * 1024 * 1024
    big = write_large_transcript(tmp_path / "a.jsonl", target, seed=4)
    again = write_large_transcript(tmp_path / "b.jsonl", target, seed=4)
    digest = hashlib.sha256((tmp_path / "a.jsonl").read_bytes()).hexdigest()
    assert digest == hashlib.sha256((tmp_path / "b.jsonl").read_bytes()).hexdigest()
    assert big.size == big.path.stat().st_size == again.size
    assert target <= big.size < target + 1024 * 1024
    lines = list(read_lines(big.path))
    assert len(lines) == big.lines
    assert all(line.problem is None for line in lines)
    types = {(line.record or {}).get("type") for line in lines}
    assert {"user", "assistant", "last-prompt"} <= types
    planted = [(s, n) for s in big.secrets for n in s.lines]
    # about one secret per 200 lines
    assert big.lines / 400 < len({n for _, n in planted}) < big.lines / 60
    for secret, number in planted:
        found = holds(lines[number - 1].raw.data, secret)
        assert found, (secret.kind, number)
    # the seven kinds take turns
    assert len({s.kind for s in big.secrets}) == min(7, len(big.secrets))
    assert not any(s.value in repr(big) for s in big.secrets)


def test_the_demo_folders_are_private_like_claude_codes(tmp_path: Path) -> None:
    # Under a umask that would leave them open: the audit of a demo must not warn about them.
    old = os.umask(0o022)
    try:
        config = build_demo_config(tmp_path / "root")
    finally:
        os.umask(old)
    folders = [config, *(p for p in config.rglob("*") if p.is_dir() and not p.is_symlink())]
    assert {oct(p.stat().st_mode & 0o777) for p in folders} == {"0o700"}
