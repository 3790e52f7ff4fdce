"""The scanner: exact spans in strings and in transcript lines, context from tool calls, the
raw-line fast path, windows over long strings, and both prefilter engines giving the same
findings.

Fake secrets are made at run time by the demo's generators; assertions compare spans and
booleans, so a failure never prints a value.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import (
    build_demo_config,
    fake_aws_access_key,
    fake_github_token,
    fake_private_key,
    fake_stripe_key,
    write_large_transcript,
)
from scrubber.detection.detector import PLAIN, ScanContext, SourceKind
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.placeholder import PLACEHOLDER_RE, make_placeholder
from scrubber.detection.prefilter import load_hyperscan
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import FoundSecret, LineScan, SecretScanner
from scrubber.policy.model import Allowlist, Policy
from scrubber.transcript.jsonl import LineProblem, RawLine, iter_raw_lines, parse_line
from scrubber.transcript.records import json_pointer
from tests.skips import INSTALL_HYPERSCAN

KEY = bytes(range(32))
DETECTORS = build_detectors(Policy.default())
SCANNER = SecretScanner(DETECTORS, Fingerprinter(KEY), engine="python")
FILLER = "\n".join(
    f"line {i}: compiled module {i % 17} in {i % 9} ms, nothing to see" for i in range(300)
)


def rng(seed: int = 7) -> random.Random:
    return random.Random(seed)  # fake data, not cryptography


def spans_of(found: tuple[FoundSecret, ...]) -> list[tuple[int, int]]:
    return [(f.hit.start, f.hit.end) for f in found]


def raw(data: bytes, number: int = 1, terminated: bool = True) -> RawLine:
    return RawLine(number=number, offset=0, data=data, terminated=terminated)


def line_of(record: dict[str, Any]) -> RawLine:
    return raw(json.dumps(record, separators=(",", ":")).encode())


def follow(value: Any, pointer: str) -> Any:
    """RFC 6901: resolve a pointer against a decoded JSON value."""
    for escaped in pointer.split("/")[1:]:
        token = escaped.replace("~1", "/").replace("~0", "~")
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def leaves_by_pointer(scan: LineScan | None) -> dict[str | None, list[tuple[int, int]]]:
    assert scan is not None
    return {leaf.pointer: spans_of(leaf.found) for leaf in scan.leaves}


# -- strings ---------------------------------------------------------------------------------


def test_a_token_in_prose_is_found_with_its_exact_span() -> None:
    token = fake_github_token(rng())
    text = f"push failed; I used {token} as the password."
    found = SCANNER.scan_text(text)
    assert spans_of(found) == [(text.index(token), text.index(token) + len(token))]
    item = found[0]
    assert item.hit.kind == "github-token"
    assert item.prefix == "gh" + "p_"
    assert len(item.fingerprint) == 64
    assert item.fingerprint == Fingerprinter(KEY).fingerprint(token)
    assert item.placeholder == make_placeholder("github-token", item.fingerprint)
    assert token not in repr(item)  # reprs carry places and fingerprints only


def test_several_secrets_in_one_string_each_get_a_span() -> None:
    r = rng()
    akid, stripe = fake_aws_access_key(r), fake_stripe_key(r)
    text = f"AWS_ACCESS_KEY_ID={akid}\nSTRIPE_SECRET_KEY={stripe}\n"
    got = {text[s:e] == akid or text[s:e] == stripe for s, e in spans_of(SCANNER.scan_text(text))}
    assert got == {True}
    assert len(SCANNER.scan_text(text)) == 2


def test_short_or_empty_text_has_no_findings() -> None:
    assert SCANNER.scan_text("") == ()
    assert SCANNER.scan_text("ghp_") == ()


@pytest.mark.parametrize(
    "template",
    [
        "GITHUB_TOKEN={p}",
        "DB_PASSWORD={p}\nAWS_SECRET_ACCESS_KEY={p}",
        "postgres://app:{p}@db:5432/app",
        "Authorization: Bearer {p}",
        '{{"api_key": "{p}"}}',
        "{p}{p}",
    ],
)
def test_placeholders_never_trigger_a_detector(template: str) -> None:
    placeholder = make_placeholder("github-token", "0123abcd" * 8)  # pragma: allowlist secret
    text = template.format(p=placeholder)
    for context in (PLAIN, ScanContext(None, SourceKind.DOTENV, ".env"), ScanContext("password")):
        for item in SCANNER.scan_text(text, context):
            covered = text[item.hit.start : item.hit.end]
            assert PLACEHOLDER_RE.search(covered) is None, template


def test_a_whole_value_under_a_sensitive_key_is_a_finding() -> None:
    value = "Plum" + "harbor" + "4412!"
    found = SCANNER.scan_text(value, ScanContext("db_password"))
    assert spans_of(found) == [(0, len(value))]
    assert SCANNER.scan_text(value, ScanContext("description")) == ()
    # Not values: references, booleans, placeholders.
    for harmless in ("${DB_PASSWORD}", "true", "<your password>", "123456789"):
        assert SCANNER.scan_text(harmless, ScanContext("password")) == ()


def test_a_credential_file_context_catches_ordinary_looking_values() -> None:
    text = "APP_ENV=staging\nSESSION_SALT=f8a9Kd02jfQzT1\n"
    assert SCANNER.scan_text(text, PLAIN) == ()
    found = SCANNER.scan_text(text, ScanContext(None, SourceKind.DOTENV, "/app/.env"))
    assert [text[s:e] == "f8a9Kd02jfQzT1" for s, e in spans_of(found)] == [True]


def test_the_allowlist_silences_by_fingerprint_and_by_pattern() -> None:
    token = fake_github_token(rng())
    text = f"token {token}"
    fingerprint = Fingerprinter(KEY).fingerprint(token)
    by_fp = SecretScanner(
        DETECTORS, Fingerprinter(KEY), Allowlist(fingerprints=(fingerprint[:16],))
    )
    by_pattern = SecretScanner(DETECTORS, Fingerprinter(KEY), Allowlist(patterns=("gh" + "p_.*",)))
    assert SCANNER.scan_text(text)
    assert by_fp.scan_text(text) == ()
    assert by_pattern.scan_text(text) == ()


def test_redact_text_replaces_every_secret_with_its_placeholder() -> None:
    token = fake_github_token(rng())
    redacted = SCANNER.redact_text(f"gh auth login --with-token {token} && gh pr list")
    assert token not in redacted
    assert PLACEHOLDER_RE.search(redacted)
    assert redacted.endswith(" && gh pr list")
    assert SCANNER.redact_text(redacted) == redacted  # idempotent


# -- long strings: windows around anchors ----------------------------------------------------


@pytest.mark.parametrize("where", ["start", "middle", "end"])
@pytest.mark.parametrize("maker", ["github", "pem", "dotenv"])
def test_windows_find_what_a_whole_scan_of_the_piece_finds(where: str, maker: str) -> None:
    r = rng()
    piece = {
        "github": lambda: f"export GITHUB_TOKEN={fake_github_token(r)}",
        "pem": lambda: fake_private_key(r),
        "dotenv": lambda: "DB_PASSWORD=Quartzcedar7781#",  # pragma: allowlist secret
    }[maker]()
    before = {"start": "", "middle": FILLER + "\n", "end": FILLER + "\n" + FILLER + "\n"}[where]
    after = {"start": "\n" + FILLER, "middle": "\n" + FILLER, "end": ""}[where]
    text = before + piece + after
    assert len(text) > 2048  # long enough to be scanned in windows
    alone = SCANNER.scan_text(piece)
    assert alone, maker
    shifted = [(s + len(before), e + len(before)) for s, e in spans_of(alone)]
    assert spans_of(SCANNER.scan_text(text)) == shifted


def test_windows_do_not_merge_far_apart_secrets_into_one() -> None:
    r = rng()
    first, second = fake_github_token(r), fake_github_token(r)
    text = f"a {first}\n{FILLER}\nb {second}\n{FILLER}"
    found = spans_of(SCANNER.scan_text(text))
    assert [text[s:e] for s, e in found] == [first, second]


# -- transcript lines ------------------------------------------------------------------------


def test_the_fast_path_skips_only_lines_that_cannot_hold_a_finding(
    transcript_builder: type[Any],
) -> None:
    # One anchored rule, so that "has no anchor" is under the test's control (the full set has
    # anchors as short as "." and ":" that most lines contain).
    github = next(d for d in DETECTORS if d.name == "github-token")
    scanner = SecretScanner([github], Fingerprinter(KEY), engine="python")
    token = fake_github_token(rng())
    t = transcript_builder()
    t.prompt("Refactor the order module and run the tests.")  # 0: skipped
    t.prompt(f"use {token}")  # 1: anchor
    t.read("/srv/app/.env", "APP_ENV=dev")  # 2: a tool call, 3: the result of a sensitive read
    t.read("/srv/app/main.py", "print(1)")  # 4: a tool call, 5: an ordinary result
    fake_key = "Plum" + "harbor4412"
    t.add({"type": "user", "toolUseResult": {"api_key": fake_key}})  # 6: sensitive key
    scan = scanner.new_file_scan()
    parsed = [scan.scan_raw(raw(line, n)) is not None for n, line in enumerate(t.lines, 1)]
    assert parsed == [False, True, True, True, True, False, True]


@pytest.mark.parametrize(
    ("data", "terminated", "problem"),
    [
        (b"not json at all, no anchors", True, LineProblem.NOT_JSON),
        (b'{"type":"user","message":{"content":"cut here', False, LineProblem.TORN),
        (b'{"type":"user","note":"caf\xe9"}', True, LineProblem.INVALID_UTF8),
        (b"[1, 2, 3]", True, LineProblem.NOT_OBJECT),
        (b"", True, LineProblem.BLANK),
    ],
)
def test_lines_that_are_not_objects_are_never_skipped_in_silence(
    data: bytes, terminated: bool, problem: LineProblem
) -> None:
    # Nothing to find in them, but they must be reported (audit and redact list problems).
    github = next(d for d in DETECTORS if d.name == "github-token")
    scanner = SecretScanner([github], Fingerprinter(KEY), engine="python")
    result = scanner.new_file_scan().scan_raw(raw(data, terminated=terminated))
    assert result is not None
    assert (result.line.problem, result.leaves) == (problem, ())


def test_tool_calls_are_always_parsed_so_their_results_get_context(
    transcript_builder: type[Any],
) -> None:
    t = transcript_builder()
    text = "APP_ENV=staging\nSESSION_SALT=f8a9Kd02jfQzT1"
    t.read("/srv/app/.env", text)
    t.read("/srv/app/notes.txt", text)
    scan = SCANNER.new_file_scan()
    results = [scan.scan_raw(raw(line, n)) for n, line in enumerate(t.lines, 1)]
    assert results[0] is not None and results[0].leaves == ()  # the call: nothing secret
    env_result = leaves_by_pointer(results[1])
    assert set(env_result) == {"/message/content/0/content", "/toolUseResult/file/content"}
    record = json.loads(t.lines[1])
    for pointer, spans in env_result.items():
        assert [follow(record, pointer)[s:e] for s, e in spans] == ["f8a9Kd02jfQzT1"]
    assert {leaf.source for leaf in results[1].leaves} == {"Read(/srv/app/.env)"}  # type: ignore[union-attr]
    # The same text read from a file that is not a credential source: nothing.
    assert results[3] is None or results[3].leaves == ()


def test_findings_point_exactly_at_the_secret_everywhere_it_hides(
    transcript_builder: type[Any],
) -> None:
    r = rng()
    token, akid = fake_github_token(r), fake_aws_access_key(r)
    t = transcript_builder()
    t.prompt(f"use {token} please")
    t.bash("printenv", f"HOME=/home/u\nGITHUB_TOKEN={token}\n")
    t.tool(
        "Write", {"file_path": "/srv/creds", "content": f"key = {akid}\n"}, "ok", {"type": "create"}
    )
    t.say(f"I will not repeat {akid}.", thinking=f"The key {akid} is in creds.")
    scan = SCANNER.new_file_scan()
    seen: dict[str, set[str]] = {}
    for n, line in enumerate(t.lines, 1):
        result = scan.scan_raw(raw(line, n))
        if result is None:
            continue
        record = json.loads(line)
        for leaf in result.leaves:
            assert leaf.pointer is not None
            target = follow(record, leaf.pointer)
            for item in leaf.found:
                value = target[item.hit.start : item.hit.end]
                assert value in (token, akid)
                seen.setdefault(leaf.pointer, set()).add("token" if value == token else "akid")
        if record.get("uuid"):
            assert result.record_uuid == record["uuid"]
            assert result.session_id == t.session_id
    assert seen == {
        "/message/content": {"token"},  # the prompt
        "/message/content/0/content": {"token"},  # the tool_result string
        "/toolUseResult/stdout": {"token"},
        "/message/content/0/input/content": {"akid"},  # the tool_use input
        "/message/content/0/thinking": {"akid"},
        "/message/content/1/text": {"akid"},
    }


def test_thinking_leaves_are_marked(transcript_builder: type[Any]) -> None:
    token = fake_github_token(rng())
    t = transcript_builder()
    t.say("ok", thinking=f"remember {token}")
    result = SCANNER.new_file_scan().scan_raw(raw(t.lines[0]))
    assert result is not None
    assert [(leaf.pointer, leaf.in_thinking) for leaf in result.leaves] == [
        ("/message/content/0/thinking", True)
    ]


def test_a_secret_in_a_command_never_reaches_the_source_label(
    transcript_builder: type[Any],
) -> None:
    token = fake_github_token(rng())
    t = transcript_builder()
    t.bash(f"GH_TOKEN={token} gh release list", f"v1.2.0 latest\nauth: {token}\n")
    scan = SCANNER.new_file_scan()
    labels = set()
    for n, line in enumerate(t.lines, 1):
        result = scan.scan_raw(raw(line, n))
        assert result is not None
        labels |= {leaf.source for leaf in result.leaves}
    assert labels and all(label is not None for label in labels)
    for label in labels:
        assert token not in str(label)
        assert str(label).startswith("Bash(")
        assert PLACEHOLDER_RE.search(str(label))


def test_identifiers_signatures_and_images_are_not_scanned() -> None:
    token = fake_github_token(rng())
    record = {
        "type": "assistant",
        "uuid": token,
        "requestId": token,
        "message": {
            "id": token,
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "short", "signature": token},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": token},
                },
                {"type": "redacted_thinking", "data": token},
            ],
        },
    }
    result = SCANNER.new_file_scan().scan_raw(line_of(record))
    assert result is None or result.leaves == ()


def test_pointers_escape_slash_and_tilde() -> None:
    assert json_pointer("toolUseResult", "a/b", "c~d", 0) == "/toolUseResult/a~1b/c~0d/0"
    token = fake_github_token(rng())
    record = {"type": "user", "toolUseResult": {"env/vars": {"x~y": ["", f"t={token}"]}}}
    result = SCANNER.new_file_scan().scan_raw(line_of(record))
    pointers = leaves_by_pointer(result)
    assert list(pointers) == ["/toolUseResult/env~1vars/x~0y/1"]
    ((start, end),) = pointers["/toolUseResult/env~1vars/x~0y/1"]
    assert follow(record, "/toolUseResult/env~1vars/x~0y/1")[start:end] == token


def test_escaped_slashes_do_not_hide_a_connection_string() -> None:
    password = "Vx7qPz2mLk9Rt4"  # pragma: allowlist secret
    data = (
        b'{"type":"user","message":{"role":"user","content":"postgres:\\/\\/app:'
        + password.encode()
        + b'@db:5432\\/app"}}'
    )
    result = SCANNER.new_file_scan().scan_raw(raw(data))
    record = json.loads(data)
    found = leaves_by_pointer(result)
    assert [record["message"]["content"][s:e] for s, e in found["/message/content"]] == [password]


@pytest.mark.parametrize("terminated", [True, False])
def test_a_line_that_is_not_json_is_scanned_as_plain_text(terminated: bool) -> None:
    token = fake_github_token(rng())
    data = b'{"type":"user","message":{"content":"here ' + token.encode() + b" and then the crash"
    result = SCANNER.new_file_scan().scan_raw(raw(data, terminated=terminated))
    assert result is not None
    assert result.line.problem is (LineProblem.NOT_JSON if terminated else LineProblem.TORN)
    (leaf,) = result.leaves
    assert leaf.pointer is None and leaf.source is None
    text = data.decode()
    assert [text[s:e] for s, e in spans_of(leaf.found)] == [token]


def test_invalid_utf8_lines_are_scanned_with_spans_in_the_decoded_text() -> None:
    token = fake_github_token(rng())
    data = b"caf\xe9 \xff\xfe " + token.encode() + b" \xc3"
    result = SCANNER.new_file_scan().scan_raw(raw(data))
    assert result is not None and result.line.problem is LineProblem.INVALID_UTF8
    text = data.decode("utf-8", errors="surrogateescape")
    assert [text[s:e] for s, e in spans_of(result.leaves[0].found)] == [token]


def test_a_blank_line_has_nothing() -> None:
    scan = SCANNER.new_file_scan()
    for data in (b"", b"   ", b"\r"):
        result = scan.scan_raw(raw(data))
        assert result is not None and result.line.problem is LineProblem.BLANK
        assert result.leaves == ()
        assert scan.scan_line(parse_line(raw(data))).leaves == ()


@pytest.mark.parametrize("ending", [".", "...", ". Next", ".\n"])
def test_sentence_punctuation_is_not_part_of_a_token(ending: str) -> None:
    # detect-secrets reports part of a token; widening it must stop before a full stop, or the
    # same key gets another fingerprint (and placeholder) at the end of a sentence.
    akid = fake_aws_access_key(rng())
    text = f"I will not repeat {akid}{ending}"
    found = SCANNER.scan_text(text)
    assert [text[f.hit.start : f.hit.end] == akid for f in found] == [True]
    assert found[0].fingerprint == SCANNER.scan_text(f"key {akid} here")[0].fingerprint


# -- both prefilter engines ------------------------------------------------------------------


def _file_findings(scanner: SecretScanner, path: Path) -> list[tuple[Any, ...]]:
    scan = scanner.new_file_scan()
    out: list[tuple[Any, ...]] = []
    with path.open("rb") as stream:
        for line in iter_raw_lines(stream):
            result = scan.scan_raw(line)
            if result is None:
                continue
            for leaf in result.leaves:
                for item in leaf.found:
                    out.append((line.number, leaf.pointer, item.hit, item.fingerprint, leaf.source))
    return out


@pytest.mark.skipif(load_hyperscan() is None, reason=INSTALL_HYPERSCAN)
def test_hyperscan_and_python_engines_find_the_same_secrets(tmp_path: Path) -> None:
    config = build_demo_config(tmp_path / "demo")
    large = write_large_transcript(tmp_path / "large.jsonl", 600_000, seed=3)
    files = [p for p in config.rglob("*") if p.is_file() and not p.is_symlink()]
    files.append(large.path)
    fast = SecretScanner(DETECTORS, Fingerprinter(KEY), engine="hyperscan")
    slow = SecretScanner(DETECTORS, Fingerprinter(KEY), engine="python")
    total = 0
    for path in files:
        expected = _file_findings(slow, path)
        assert _file_findings(fast, path) == expected, path.name
        total += len(expected)
    assert total > 30  # the files do hold secrets: the comparison is not vacuous


def test_a_token_in_a_tool_name_is_redacted_in_the_label_of_what_the_call_found() -> None:
    # An MCP tool's name is text the model and the server chose: a token can sit in it. The
    # label a finding shows ("which call this came from") must never carry it.
    token = fake_github_token(rng(11))
    name = "mcp__" + token + "__read"
    call = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": name,
                    "input": {"file_path": "/srv/app/.env"},
                }
            ],
        },
    }
    secret = fake_stripe_key(rng(12))
    result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "KEY=" + secret}
            ],
        },
    }
    scan = SCANNER.new_file_scan()
    scan.scan_raw(line_of(call))
    found = scan.scan_raw(line_of(result))
    assert found is not None and found.leaves
    labels = {leaf.source for leaf in found.leaves}  # type: ignore[union-attr]
    assert all(label and token[4:16] not in label for label in labels)
    assert all("[REDACTED:" in label and label.endswith("(/srv/app/.env)") for label in labels)
