"""The audit use case: what gets scanned, what is found and where, and what is reported.

One demo config dir is built and audited per module; tests that change files work on copies.
Every finding is resolved back to the file (line, JSON Pointer, span) and compared with the
planted fake values, in the test only: assertion messages name kinds and places, never values.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import DemoManifest, Planted, build_demo_config, demo_manifest, fake_github_token
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.detection.registry import build_detectors, build_scanner
from scrubber.detection.scan import SecretScanner
from scrubber.errors import InputError, UsageError
from scrubber.policy.model import DetectionPolicy, Policy
from scrubber.usecases.audit import audit, audit_file, permission_warnings
from scrubber.usecases.audit_report import FINGERPRINT_SHOWN, AuditReport, ScanTarget
from scrubber.usecases.audit_targets import targets_from_paths, targets_in_config

KEY = b"pipeline-audit-test-key-32-bytes"
SCANNER = SecretScanner(build_detectors(Policy.default()), Fingerprinter(KEY))
INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"  # the demo's private-key session (seed 0)
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"  # the demo's session with every side file

ValueAt = Callable[[str | Path, int, str | None, tuple[int, int]], str]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoManifest]:
    config = build_demo_config(tmp_path_factory.mktemp("audit-demo"))
    return config, demo_manifest()


@pytest.fixture(scope="module")
def report(demo: tuple[Path, DemoManifest]) -> AuditReport:
    return audit(targets_in_config(demo[0]), SCANNER)


def copy_config(demo: tuple[Path, DemoManifest], tmp_path: Path) -> Path:
    target = tmp_path / "copy" / ".claude"
    shutil.copytree(demo[0], target, symlinks=True)
    return target


def matches(value: str, secret: Planted) -> bool:
    """A finding's text is what was planted, exactly; or (a PEM key, stored with Read's line
    numbers) a block holding every body line."""
    if "\n" not in secret.value:
        return value == secret.value
    return all(needle in value for needle in secret.needles())


# -- what gets scanned -----------------------------------------------------------------------


def test_every_file_the_demo_wrote_is_a_target_once(demo: tuple[Path, DemoManifest]) -> None:
    config, manifest = demo
    targets = targets_in_config(config)
    paths = [t.path.relative_to(config).as_posix() for t in targets]
    assert sorted(paths) == sorted(manifest.files)
    assert [p for p, n in Counter(paths).items() if n > 1] == []
    assert not any(t.path.is_symlink() for t in targets)  # debug/latest is a symlink


def test_targets_know_their_session_project_and_role(demo: tuple[Path, DemoManifest]) -> None:
    config, _ = demo
    by_path = {t.path.relative_to(config).as_posix(): t for t in targets_in_config(config)}
    transcript = by_path[f"projects/-home-demo-work-infra/{INFRA}.jsonl"]
    assert (transcript.is_transcript, transcript.session_id, transcript.role) == (
        True,
        INFRA,
        "transcript",
    )
    assert transcript.project == "-home-demo-work-infra"
    assert transcript.title == "Rotate deploy key"
    roles = {path.split("/")[0]: t.role for path, t in by_path.items()}
    assert roles["history.jsonl"] == "history"
    assert roles["shell-snapshots"] == "shell-snapshot"
    assert roles["file-history"] == "file-history"
    subagent = next(t for p, t in by_path.items() if "/subagents/" in p and p.endswith(".jsonl"))
    assert (subagent.role, subagent.is_transcript, subagent.session_id) == ("subagent", True, INFRA)
    tool_result = next(t for p, t in by_path.items() if "/tool-results/" in p)
    assert (tool_result.role, tool_result.is_transcript) == ("tool-results", False)


def test_session_and_project_filters(demo: tuple[Path, DemoManifest]) -> None:
    config, manifest = demo
    one = targets_in_config(config, sessions=[SHOP[:8]])
    # history.jsonl, for the session's own lines only; no other global side file.
    [history] = [t for t in one if t.role == "history"]
    assert history.only_sessions == {SHOP} and history.session_id is None
    assert {t.session_id for t in one if t is not history} == {SHOP}
    assert not any(t.role in ("shell-snapshot", "paste-cache") for t in one)
    assert any(t.role == "file-history" for t in one)
    infra = targets_in_config(config, projects=["infra"])
    assert {t.session_id for t in infra if t.role != "history"} == {INFRA}
    assert {t.only_sessions for t in infra if t.role == "history"} == {frozenset({INFRA})}
    by_cwd = targets_in_config(config, projects=["/home/demo/work/infra"])
    assert {t.path for t in by_cwd} == {t.path for t in infra}
    with pytest.raises(UsageError, match="no session matches --project no-such-project"):
        targets_in_config(config, projects=["infra", "no-such-project"])
    with pytest.raises(UsageError, match="no session matches"):
        targets_in_config(config, projects=[""])  # never "every project"
    both = targets_in_config(config, sessions=[SHOP[:8], INFRA], projects=["infra"])
    assert {t.session_id for t in both if t.role != "history"} == {INFRA}
    only = targets_in_config(config, include_side_files=False)
    assert {t.role for t in only} == {"transcript"}
    assert {t.session_id for t in only} == set(manifest.sessions)
    with pytest.raises(UsageError, match="no session matches"):
        targets_in_config(config, sessions=["ffffffff"])


def test_paths_on_the_command_line(demo: tuple[Path, DemoManifest], tmp_path: Path) -> None:
    config, _ = demo
    folder = targets_from_paths([config / "projects" / "-home-demo-work-infra"])
    assert {t.role for t in folder} == {"transcript", "subagent"}
    session_file = next(t for t in folder if t.path.name == f"{INFRA}.jsonl")
    assert session_file.session_id == INFRA and session_file.is_transcript
    with pytest.raises(InputError, match="no such file or folder"):
        targets_from_paths([tmp_path / "missing.jsonl"])
    link = tmp_path / "link.jsonl"
    link.symlink_to(session_file.path)
    with pytest.raises(InputError, match="symbolic link"):
        targets_from_paths([link])
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "inside.jsonl").symlink_to(session_file.path)
    assert targets_from_paths([tmp_path / "tree"]) == []  # links inside folders: not followed


# -- what is found ---------------------------------------------------------------------------


def test_every_planted_secret_is_found_in_every_file_that_holds_it(
    demo: tuple[Path, DemoManifest], report: AuditReport, finding_value: ValueAt
) -> None:
    config, manifest = demo
    values: dict[str, list[str]] = {}
    for f in report.findings:
        rel = Path(f.file).relative_to(config).as_posix()
        values.setdefault(rel, []).append(finding_value(f.file, f.line, f.json_path, f.span))
    missing = [
        (secret.kind, file)
        for secret in manifest.secrets
        for file in secret.files
        if not any(matches(v, secret) for v in values.get(file, []))
    ]
    assert missing == []
    assert len(manifest.secrets) >= 9 and all(s.files for s in manifest.secrets)


def test_every_finding_points_exactly_at_a_planted_secret(
    demo: tuple[Path, DemoManifest], report: AuditReport, finding_value: ValueAt
) -> None:
    _, manifest = demo
    stray = []
    for f in report.findings:
        value = finding_value(f.file, f.line, f.json_path, f.span)
        if not any(matches(value, secret) for secret in manifest.secrets):
            stray.append((f.kind, Path(f.file).name, f.line, f.json_path))
        assert f.length == len(value)
    assert stray == []


def test_no_decoy_is_flagged(
    demo: tuple[Path, DemoManifest], report: AuditReport, finding_value: ValueAt
) -> None:
    _, manifest = demo
    flagged = {finding_value(f.file, f.line, f.json_path, f.span) for f in report.findings}
    hits = [d.kind for d in manifest.decoys if any(d.value in v or v in d.value for v in flagged)]
    assert hits == []


def test_findings_carry_place_record_and_source(report: AuditReport) -> None:
    for f in report.findings:
        assert f.line >= 1
        assert len(f.fingerprint) == FINGERPRINT_SHOWN
        assert f.kind and f.detector
        if f.file.endswith(".jsonl") and f.json_path is not None:
            assert f.json_path.startswith("/")
        if f.json_path is None:
            assert f.record_uuid is None
    env_reads = [f for f in report.findings if f.source == "Read(/home/demo/work/shop-api/.env)"]
    assert {f.json_path for f in env_reads} == {
        "/message/content/0/content",
        "/toolUseResult/file/content",
    }
    assert all(f.session_id == SHOP and f.record_uuid for f in env_reads)
    thinking = [f for f in report.findings if f.in_thinking]
    assert [(f.json_path, f.source) for f in thinking] == [("/message/content/0/thinking", None)]
    snapshot = [f for f in report.findings if "shell-snapshots" in f.file]
    assert [(f.line, f.json_path, f.session_id) for f in snapshot] == [(5, None, None)]


def test_totals_count_occurrences_and_distinct_secrets(report: AuditReport) -> None:
    findings = list(report.findings)
    totals = report.totals()
    assert totals["occurrences"] == len(findings)
    assert totals["distinct"] == len({f.fingerprint for f in findings})
    assert totals["occurrences"] > totals["distinct"]  # every tool output is stored twice
    assert totals["in_thinking"] == sum(f.in_thinking for f in findings)
    by_kind: Any = totals["by_kind"]
    assert sum(k["occurrences"] for k in by_kind.values()) == len(findings)
    assert totals["files_with_findings"] == sum(1 for a in report.files if a.findings)
    assert report.has_findings
    # The same secret has the same fingerprint wherever it is.
    per_kind_distinct = {kind: v["distinct"] for kind, v in by_kind.items()}
    assert per_kind_distinct["dotenv-value"] == 1
    assert per_kind_distinct["connection-string-password"] == 1


def test_titles_are_redacted_before_display(tmp_path: Path, transcript_builder: type[Any]) -> None:
    token = fake_github_token(__import__("random").Random(5))
    config = tmp_path / ".claude"
    t = transcript_builder()
    t.prompt("hello there")
    t.add({"type": "custom-title", "customTitle": f"fix {token} leak", "sessionId": t.session_id})
    t.write(config / "projects" / "-home-u-work-app" / f"{t.session_id}.jsonl")
    (result,) = audit(targets_in_config(config), SCANNER).files
    assert result.title is not None
    assert token not in result.title
    assert PLACEHOLDER_RE.search(result.title)
    assert result.title.startswith("fix ") and result.title.endswith(" leak")


def test_a_secret_in_a_command_is_a_placeholder_in_the_source(
    tmp_path: Path, transcript_builder: type[Any]
) -> None:
    token = fake_github_token(__import__("random").Random(6))
    t = transcript_builder()
    t.bash(f"curl -H 'Authorization: token {token}' https://api.github.com/user", '{"login": "u"}')
    path = t.write(tmp_path / f"{t.session_id}.jsonl")
    found = list(audit(targets_from_paths([path]), SCANNER).findings)
    assert found, "the command itself holds the token"
    for f in found:
        assert f.source is not None and f.source.startswith("Bash(curl -H")
        assert token not in f.source
        assert PLACEHOLDER_RE.search(f.source)


def test_a_torn_last_line_is_reported_and_still_scanned(
    demo: tuple[Path, DemoManifest], tmp_path: Path, finding_value: ValueAt
) -> None:
    config = copy_config(demo, tmp_path)
    path = config / "projects" / "-home-demo-work-infra" / f"{INFRA}.jsonl"
    token = fake_github_token(__import__("random").Random(8))
    lines_before = path.read_bytes().count(b"\n")
    with path.open("ab") as out:
        out.write(b'{"type":"user","message":{"role":"user","content":"try ' + token.encode())
    result = audit_file(ScanTarget(path, True, INFRA), SCANNER)
    torn = lines_before + 1
    assert result.problems == [(torn, "torn-last-line")]
    last = [f for f in result.findings if f.line == torn]
    assert [(f.json_path, f.record_uuid) for f in last] == [(None, None)]
    assert finding_value(path, torn, None, last[0].span) == token
    assert len(result.findings) == 3  # the key twice, as before, plus the torn line


def test_binary_missing_and_garbage_files(tmp_path: Path) -> None:
    binary = tmp_path / "image.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0" + os.urandom(2000))
    result = audit_file(ScanTarget(binary, False), SCANNER)
    assert (result.findings, result.error, result.size) == ([], None, binary.stat().st_size)
    gone = audit_file(ScanTarget(tmp_path / "gone.jsonl", True), SCANNER)
    assert gone.error is not None and gone.error.startswith("cannot read")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe{{{\n" + b"]" * 5000 + b"\n" + b"[" * 100_000 + b'\n{"a":')
    result = audit_file(ScanTarget(garbage, True), SCANNER)
    assert result.error is None
    assert [p for _, p in result.problems] == [
        "invalid-utf8",
        "not-json",
        "not-json",
        "torn-last-line",
    ]


def test_progress_reports_roughly_every_byte(demo: tuple[Path, DemoManifest]) -> None:
    reported: list[int] = []
    targets = targets_in_config(demo[0])
    result = audit(targets, SCANNER, progress=reported.append)
    assert result.bytes_scanned <= sum(reported) <= result.bytes_scanned + len(targets)


# -- permissions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "who"),
    [(0o644, "group and others"), (0o640, "group"), (0o604, "others"), (0o600, None)],
)
def test_permission_warnings_for_readable_transcripts(
    tmp_path: Path, mode: int, who: str | None
) -> None:
    folder = tmp_path / "p"
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    path = folder / "s.jsonl"
    path.write_bytes(b"{}\n")
    path.chmod(mode)
    warnings = permission_warnings([path])
    if who is None:
        assert warnings == []
    else:
        assert warnings == [f"{path} is readable by {who} (chmod 600 it)"]


def test_open_folders_are_summed_in_one_warning(tmp_path: Path) -> None:
    files = []
    for i in range(5):
        folder = tmp_path / f"p{i}"
        folder.mkdir()
        folder.chmod(0o755)
        files.append(folder / "s.jsonl")
        files[-1].write_bytes(b"")
        files[-1].chmod(0o600)
    (warning,) = permission_warnings(files)
    assert warning.startswith("5 folders holding transcripts are open to group or others: ")
    assert "and 2 more (chmod 700 them)" in warning


def test_audit_reports_permission_warnings(demo: tuple[Path, DemoManifest], tmp_path: Path) -> None:
    config = copy_config(demo, tmp_path)
    path = config / "projects" / "-home-demo-work-infra" / f"{INFRA}.jsonl"
    path.chmod(0o644)
    result = audit(targets_in_config(config, sessions=[INFRA]), SCANNER)
    assert f"{path} is readable by group and others (chmod 600 it)" in result.warnings


# -- the scanner a policy asks for -----------------------------------------------------------


def test_build_scanner_keeps_one_private_key_per_home(tmp_path: Path) -> None:
    token = fake_github_token(__import__("random").Random(9))
    home = tmp_path / "home"
    first = build_scanner(Policy.default(), home, env={})
    assert (home / "fingerprint.key").stat().st_mode & 0o777 == 0o600
    again = build_scanner(Policy.default(), home, env={"SCRUB_PREFILTER": "python"})
    other = build_scanner(Policy.default(), tmp_path / "other", env={})
    fp = [s.scan_text(f"t {token}")[0].fingerprint for s in (first, again, other)]
    assert fp[0] == fp[1] != fp[2]


def test_build_scanner_rejects_an_unknown_engine(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="SCRUB_PREFILTER"):
        build_scanner(Policy.default(), tmp_path, env={"SCRUB_PREFILTER": "fast"})


def test_disabled_detectors_do_not_run(tmp_path: Path) -> None:
    token = fake_github_token(__import__("random").Random(10))
    policy = Policy(
        detection=DetectionPolicy(disabled_detectors=("github-token", "detect-secrets"))
    )
    scanner = build_scanner(policy, tmp_path, env={})
    assert scanner.scan_text(f"use {token} now") == ()
    assert build_scanner(Policy.default(), tmp_path, env={}).scan_text(f"use {token} now")


def test_a_transcript_with_nul_padding_is_still_scanned(tmp_path: Path) -> None:
    """NUL bytes a crash left at the start of a transcript's line do not make it 'binary':
    the rest of the file is scanned (found by review: audit said 0 secrets where redact found
    one). A side file with NULs is still binary."""
    import json
    import random

    token = fake_github_token(random.Random(12))
    record = {"type": "user", "message": {"role": "user", "content": f"use {token}"}}
    body = b'{"type":"user","message":{"content":"hi"}}\n' + b"\0" * 64
    body += json.dumps(record).encode() + b"\n"
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(body)
    found = audit(targets_from_paths([transcript]), SCANNER)
    assert [f.kind for f in found.findings] == ["github-token"]
    side = tmp_path / "blob.bin"
    side.write_bytes(b"\0" * 64 + token.encode())
    assert not list(audit(targets_from_paths([side]), SCANNER).findings)
