"""`scrub audit` end to end: exit codes, the JSON and SARIF documents, the text summary, filters,
bad input and the demo.

A handful of real processes (each costs about a second here) run against one module-wide world:
the demo config dir plus a crafted session (a token inside a Bash command, a torn last line
holding a secret, a transcript left 0644). Filters and argument errors run through the same
entry point in this process. Findings are resolved back to the files and compared with the
planted fake values in the test only.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scrubber.demo import (
    DemoManifest,
    build_demo_config,
    demo_manifest,
    fake_aws_access_key,
    fake_github_token,
)
from scrubber.detection.placeholder import PLACEHOLDER_RE
from tests.sarif_schema import validate_sarif

pytestmark = pytest.mark.slow  # a few real processes

SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"
EXTRA_PROJECT = "-home-u-work-tools"
FINDING_FIELDS = {
    "file", "line", "json_path", "span", "kind", "detector", "session_id", "record_uuid",
    "source", "fingerprint",
}  # fmt: skip

ValueAt = Callable[[str | Path, int, str | None, tuple[int, int]], str]


@dataclass
class World:
    sandbox: Any  # conftest.Sandbox
    manifest: DemoManifest
    extra_session: str
    extra_file: Path
    command_token: str = ""
    torn_key: str = ""
    torn_line: int = 0
    open_file: Path | None = None

    def planted(self) -> list[str]:
        values = [n for s in self.manifest.secrets for n in s.needles()]
        return [*values, self.command_token, self.torn_key]


@pytest.fixture(scope="module")
def world(sandbox_factory: Callable[[str], Any], transcript_builder: type[Any]) -> World:
    sandbox = sandbox_factory("audit-cli")
    config = build_demo_config(sandbox.config.parent)
    r = random.Random(11)
    token, key = fake_github_token(r), fake_aws_access_key(r)
    t = transcript_builder(cwd="/home/u/work/tools")
    t.prompt("list my releases")
    t.bash(f"GH_TOKEN={token} gh release list", "v1.2.0  Latest\nv1.1.0")
    torn = b'{"type":"user","message":{"role":"user","content":"the key is ' + key.encode()
    path = t.write(config / "projects" / EXTRA_PROJECT / f"{t.session_id}.jsonl", torn_tail=torn)
    open_file = config / "projects" / "-home-demo-work-infra" / f"{INFRA}.jsonl"
    open_file.chmod(0o644)
    return World(
        sandbox, demo_manifest(), t.session_id, path, token, key, len(t.lines) + 1, open_file
    )


@pytest.fixture(scope="module")
def as_json(world: World) -> tuple[Any, dict[str, Any]]:
    done = world.sandbox.scrub("audit", "--format", "json")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done, json.loads(done.stdout)


@pytest.fixture(scope="module")
def as_text(world: World) -> Any:
    done = world.sandbox.scrub("audit")
    assert done.returncode == 1, done.stderr
    return done


@pytest.fixture(scope="module")
def as_sarif(world: World) -> dict[str, Any]:
    done = world.sandbox.scrub("audit", "--format", "sarif")
    assert done.returncode == 1, done.stderr
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


# -- the JSON document -----------------------------------------------------------------------


def test_json_findings_have_the_documented_fields(as_json: tuple[Any, dict[str, Any]]) -> None:
    _, doc = as_json
    assert doc["schema"] == "scrubber.audit/1"
    assert doc["findings"]
    for item in doc["findings"]:
        assert FINDING_FIELDS - {"json_path"} <= set(item)
        assert isinstance(item["line"], int) and item["line"] >= 1
        start, end = item["span"]
        assert 0 <= start < end
        assert item["kind"] == item["kind"].lower() and " " not in item["kind"]
        assert len(item["fingerprint"]) >= 8
        int(item["fingerprint"], 16)
        if "json_path" in item:
            assert item["json_path"].startswith("/")
        else:  # non-JSON lines and text side files: no pointer, no record
            assert item["record_uuid"] is None


def test_json_path_and_span_point_exactly_at_the_planted_secret(
    as_json: tuple[Any, dict[str, Any]], world: World, finding_value: ValueAt
) -> None:
    _, doc = as_json
    planted = world.planted()
    unexplained = []
    for item in doc["findings"]:
        value = finding_value(item["file"], item["line"], item.get("json_path"), item["span"])
        exact = value in planted
        pem = "\n" in value and any(n in value for n in planted if len(n) >= 16)
        if not (exact or pem):
            unexplained.append((item["kind"], Path(item["file"]).name, item["line"]))
        assert item["length"] == len(value)
    assert unexplained == []
    found_files = {
        Path(i["file"]).relative_to(world.sandbox.config).as_posix() for i in doc["findings"]
    }
    expected = {f for s in world.manifest.secrets for f in s.files}
    assert expected <= found_files


def test_totals_count_occurrences_and_distinct_fingerprints(
    as_json: tuple[Any, dict[str, Any]],
) -> None:
    _, doc = as_json
    findings, totals = doc["findings"], doc["totals"]
    assert totals["occurrences"] == len(findings)
    assert totals["distinct"] == len({f["fingerprint"] for f in findings})
    assert totals["distinct"] < totals["occurrences"]
    assert sum(k["occurrences"] for k in totals["by_kind"].values()) == len(findings)
    sessions = {s["session_id"]: s for s in doc["sessions"]}
    assert sessions[SHOP]["title"] == "checkout-500"
    assert sessions[SHOP]["occurrences"] == sum(1 for f in findings if SHOP in f["file"])


def test_source_labels_name_the_tool_and_hide_secrets_in_commands(
    as_json: tuple[Any, dict[str, Any]], world: World
) -> None:
    _, doc = as_json
    sources = {f["source"] for f in doc["findings"] if f["source"]}
    assert "Read(/home/demo/work/shop-api/.env)" in sources
    assert "Bash(printenv)" in sources
    from_command = [
        f for f in doc["findings"] if f["session_id"] == world.extra_session and f["source"]
    ]
    assert from_command
    for item in from_command:
        assert item["source"].startswith("Bash(GH_TOKEN=")
        assert world.command_token not in item["source"]
        assert PLACEHOLDER_RE.search(item["source"])
        assert item["json_path"] == "/message/content/0/input/command"


def test_a_torn_last_line_is_a_problem_and_still_scanned(
    as_json: tuple[Any, dict[str, Any]], world: World, finding_value: ValueAt
) -> None:
    _, doc = as_json
    assert {
        "file": str(world.extra_file),
        "line": world.torn_line,
        "problem": "torn-last-line",
    } in doc["problems"]
    torn = [
        f
        for f in doc["findings"]
        if f["file"] == str(world.extra_file) and f["line"] == world.torn_line
    ]
    assert len(torn) == 1 and "json_path" not in torn[0]
    assert (
        finding_value(world.extra_file, world.torn_line, None, tuple(torn[0]["span"]))
        == world.torn_key
    )


def test_readable_transcripts_are_warned_about(
    as_json: tuple[Any, dict[str, Any]], as_text: Any, world: World
) -> None:
    _, doc = as_json
    expected = f"{world.open_file} is readable by group and others (chmod 600 it)"
    assert expected in doc["warnings"]
    assert f"warning: {expected}" in as_text.stderr
    others = [w for w in doc["warnings"] if "is readable by" in w]
    assert others == [expected]  # the demo's other files are 0600


def test_the_text_summary_names_sessions_places_and_problems(as_text: Any, world: World) -> None:
    out = as_text.stdout
    assert "checkout-500  (session e3e70682, project -home-demo-work-shop-api)" in out
    assert "output of Read(/home/demo/work/shop-api/.env)" in out
    assert f"line {world.torn_line}: torn-last-line (kept; scanned as text)" in out
    assert ", thinking: dotenv-value" in out
    assert "Scanned " in out and " distinct), in " in out
    assert "Traceback" not in as_text.stderr


# -- SARIF -----------------------------------------------------------------------------------

# The parts of the SARIF 2.1.0 schema a consumer relies on (OASIS SARIF v2.1.0, sections
# 3.13 sarifLog, 3.14 run, 3.18 tool, 3.19 toolComponent, 3.27 result, 3.28 location, 3.29
# physicalLocation, 3.30 region, 3.49 reportingDescriptor): required members and their types.
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "format": "uri"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {"type": "object", "required": ["id"]},
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message", "ruleId", "locations"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {"type": "object", "required": ["text"]},
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "required": ["uri"],
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine"],
                                                        "properties": {
                                                            "startLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            }
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                                "partialFingerprints": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_is_a_sarif_2_1_0_log(
    as_sarif: dict[str, Any], as_json: tuple[Any, dict[str, Any]]
) -> None:
    validate_sarif(as_sarif)  # the official OASIS schema (tests/data/sarif/)
    jsonschema.validate(as_sarif, SARIF_SUBSET)
    run = as_sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "scrubber"
    assert "github.com/scrubber/scrubber" not in json.dumps(as_sarif)  # no made-up address
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["fullDescription"]["text"] and rule["help"]["text"], rule["id"]
        assert "scrub redact" in rule["help"]["text"]
    rule_ids = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    results = run["results"]
    assert {r["ruleId"] for r in results} == rule_ids
    _, doc = as_json
    assert len(results) == len(doc["findings"])
    assert sorted(r["partialFingerprints"]["scrubberFingerprint/v1"] for r in results) == sorted(
        f["fingerprint"] for f in doc["findings"]
    )
    for result in results:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith("file:///")


# -- exit codes and bad input ----------------------------------------------------------------


def test_a_clean_config_exits_0(
    sandbox_factory: Callable[[str], Any],
    transcript_builder: type[Any],
    scrub_in: Callable[..., Any],
) -> None:
    clean = sandbox_factory("audit-clean")
    t = transcript_builder()
    t.prompt("Refactor the order module and run the tests.")
    t.bash("pytest -q", "12 passed in 0.31s")
    t.say("All tests pass.")
    t.write(clean.config / "projects" / "-home-u-work-app" / f"{t.session_id}.jsonl")
    done = scrub_in(clean, "audit", "--format", "json")
    assert (done.returncode, done.stderr) == (0, "")
    doc = json.loads(done.stdout)
    assert (doc["findings"], doc["totals"]["occurrences"], doc["files_scanned"]) == ([], 0, 1)


def test_a_missing_path_is_one_line_and_exit_2(world: World) -> None:
    missing = world.sandbox.root / "no-such-file.jsonl"
    done = world.sandbox.scrub("audit", missing)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"scrub: error: {missing}: no such file or folder\n"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("version: 1\ndetection:\n  colour: red\n", "colour"),
        ("version: 1\ndetection:\n  allowlist:\n    fingerprints: [xyz]\n", "fingerprints"),
        ("version: 1\ndetection: [1, 2\n", "line"),
    ],
)
def test_a_broken_policy_names_the_file_and_the_key(
    world: World, scrub_in: Callable[..., Any], tmp_path: Path, text: str, key: str
) -> None:
    policy = tmp_path / "broken.yaml"
    policy.write_text(text)
    done = scrub_in(world.sandbox, "audit", "--policy", policy)
    assert done.returncode == 2
    assert str(policy) in done.stderr
    assert key in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    first = done.stderr.splitlines()[0]
    assert first.startswith("scrub: error: ")


def test_a_folder_of_garbage_is_scanned_without_a_traceback(world: World) -> None:
    folder = world.sandbox.root / "garbage"
    folder.mkdir()
    r = random.Random(12)
    (folder / "random.jsonl").write_bytes(
        bytes(r.randrange(1, 256) for _ in range(20_000))
    )  # no NUL: text
    (folder / "nul.bin").write_bytes(b"\0" * 1000)
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "deep.jsonl").write_bytes(b"[" * 200_000 + b"\n" + b"{" * 50_000)
    (folder / "utf8.txt").write_bytes(b"caf\xe9 \xff\xfe\n" * 100)
    (folder / "nested").mkdir()
    (folder / "nested" / "long.jsonl").write_bytes(b'{"a":"' + b"x" * 3_000_000 + b'"}\n')
    (folder / "dangling.jsonl").symlink_to(folder / "nowhere")
    os.mkfifo(folder / "fifo.jsonl")  # opening it would block: it must be skipped
    done = world.sandbox.scrub("audit", "--format", "json", folder, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    doc = json.loads(done.stdout)
    scanned = sorted(Path(f).name for f in {p["file"] for p in doc["problems"]})
    assert "deep.jsonl" in scanned and "random.jsonl" in scanned
    assert doc["files_scanned"] == 6


def test_a_transcript_linked_from_outside_is_named_as_skipped(
    sandbox_factory: Callable[[str], Any], transcript_builder: type[Any]
) -> None:
    world = sandbox_factory("audit-linked")
    outside = world.root / "elsewhere"
    outside.mkdir()
    t = transcript_builder(cwd="/w/app")
    t.prompt(f"my token is {fake_github_token(random.Random(13))}")
    real = t.write(outside / f"{t.session_id}.jsonl")
    folder = world.config / "projects" / "-w-app"
    folder.mkdir(parents=True)
    (folder / real.name).symlink_to(real)
    done = world.scrub("audit", "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["files_scanned"] == 0
    assert [w for w in doc["warnings"] if "symlink pointing outside" in w] == [
        f"skipped {folder / real.name}: symlink pointing outside the config dir, not followed"
    ]


def test_the_demo_runs_without_a_config_dir(sandbox_factory: Callable[[str], Any]) -> None:
    bare = sandbox_factory("audit-demo")
    done = bare.scrub("audit", "--demo")
    assert done.returncode == 1, done.stderr
    assert "scrub: demo: synthetic sessions with fake secrets" in done.stderr
    assert "checkout-500" in done.stdout
    assert not bare.config.exists()
    assert not list(bare.root.glob("**/*.jsonl"))  # nothing left behind


# -- filters, in process ---------------------------------------------------------------------


def _files(result: Any) -> set[str]:
    return {Path(f["file"]).name for f in json.loads(result.stdout)["findings"]}


def test_session_filter(world: World, scrub_in: Callable[..., Any]) -> None:
    done = scrub_in(world.sandbox, "audit", "--format", "json", "--session", INFRA[:8])
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert {f["session_id"] for f in doc["findings"]} == {INFRA}
    assert not any("history.jsonl" in f["file"] for f in doc["findings"])
    unknown = scrub_in(world.sandbox, "audit", "--session", "ffffffff")
    assert unknown.returncode == 2 and "no session matches" in unknown.stderr


def test_project_filter(world: World, scrub_in: Callable[..., Any]) -> None:
    done = scrub_in(world.sandbox, "audit", "--format", "json", "--project", "tools")
    assert done.returncode == 1, done.stderr
    assert {f["session_id"] for f in json.loads(done.stdout)["findings"]} == {world.extra_session}
    none = scrub_in(world.sandbox, "audit", "--project", "nothing-like-this")
    assert none.returncode == 2 and "no session matches --project" in none.stderr


def test_since_filter(world: World, scrub_in: Callable[..., Any], tmp_path: Path) -> None:
    # The demo's files are dated 2026-03; the crafted session was written just now.
    recent = scrub_in(world.sandbox, "audit", "--format", "json", "--since", "1d")
    assert recent.returncode == 1, recent.stderr
    assert _files(recent) == {world.extra_file.name}
    day = datetime.fromtimestamp(world.extra_file.stat().st_mtime, UTC).date().isoformat()
    assert _files(scrub_in(world.sandbox, "audit", "--format", "json", "--since", day)) == {
        world.extra_file.name
    }
    everything = scrub_in(world.sandbox, "audit", "--format", "json", "--since", "2026-01-01")
    assert len(_files(everything)) > 5
    bad = scrub_in(world.sandbox, "audit", "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr
    # Nothing that recent: said, so that "0 secrets" does not read as "all clear".
    future = datetime.fromtimestamp(world.extra_file.stat().st_mtime + 86_400, UTC).isoformat()
    empty = scrub_in(world.sandbox, "audit", "--since", future)
    assert empty.returncode == 0 and "Scanned 0 files" in empty.stdout
    assert "warning: --since" in empty.stderr and "nothing was scanned" in empty.stderr
    assert "warning" not in recent.stderr  # said only when nothing is left


def test_argument_errors_exit_2(world: World, scrub_in: Callable[..., Any]) -> None:
    both = scrub_in(world.sandbox, "audit", "--session", SHOP, world.extra_file)
    assert both.returncode == 2 and "without paths" in both.stderr
    fmt = scrub_in(world.sandbox, "audit", "--format", "xml")
    assert fmt.returncode == 2
    no_config = scrub_in(world.sandbox, "audit")
    assert no_config.returncode == 1  # the sandbox has one; now take it away:
    moved = world.sandbox.config.with_name("elsewhere")
    world.sandbox.config.rename(moved)
    try:
        gone = scrub_in(world.sandbox, "audit")
    finally:
        moved.rename(world.sandbox.config)
    assert gone.returncode == 2 and "is not a Claude Code config directory" in gone.stderr
