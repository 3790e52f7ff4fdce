"""The redact use case in process: copies, in-place rewrites (lock, tails appended meanwhile)
and the proof (`check_redacted`).

Copies are compared with their originals line by line: lines without findings byte-identical,
others the same structure (scrubber.redaction.structure) with protected strings unchanged, and
no planted fake value anywhere. Values are compared in the test only, never printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import DemoManifest, build_demo_config, demo_manifest, fake_github_token
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import FileScan, LineScan, SecretScanner
from scrubber.errors import BusyError, InputError, ScrubberError, UsageError
from scrubber.policy.model import Policy, ThinkingMode
from scrubber.redaction.lines import FileKind
from scrubber.redaction.structure import same_structure
from scrubber.transcript.jsonl import RawLine
from scrubber.usecases.redact import redact_copy
from scrubber.usecases.redact_in_place import file_lock, redact_in_place
from scrubber.usecases.verify import check_redacted

KEY = b"redacting-tests-key-of-32-bytes!"
SCANNER = SecretScanner(build_detectors(Policy.default()), Fingerprinter(KEY))
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
SHOP_FILE = f"projects/-home-demo-work-shop-api/{SHOP}.jsonl"
THINKING_LINE = 10  # the demo's line where the .env password is quoted in thinking only


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def needles(manifest: DemoManifest) -> list[tuple[str, bytes]]:
    return [(s.kind, n.encode()) for s in manifest.secrets for n in s.needles()]


def surviving(data: bytes, manifest: DemoManifest) -> list[str]:
    """Kinds of planted secrets still present in `data` (values stay in the test)."""
    return sorted({kind for kind, needle in needles(manifest) if needle in data})


def has_findings(line: bytes) -> bool:
    scan = SCANNER.new_file_scan()
    result = scan.scan_raw(RawLine(1, 0, line, True))
    return bool(result and result.leaves)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoManifest]:
    return build_demo_config(tmp_path_factory.mktemp("redact-demo")), demo_manifest()


@pytest.fixture(scope="module")
def copies(
    demo: tuple[Path, DemoManifest], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Every demo file, redacted into a tree of its own (thinking redacted: the default)."""
    config, manifest = demo
    out = tmp_path_factory.mktemp("redacted")
    written = {}
    for relative in manifest.files:
        result = redact_copy(config / relative, out / relative, SCANNER)
        assert result.skipped is None, relative
        written[relative] = out / relative
    return written


@pytest.fixture
def config_copy(demo: tuple[Path, DemoManifest], tmp_path: Path) -> Path:
    target = tmp_path / "cfg" / ".claude"
    shutil.copytree(demo[0], target, symlinks=True)
    return target


# -- copies ----------------------------------------------------------------------------------


def test_no_planted_secret_survives_in_any_copy(
    copies: dict[str, Path], demo: tuple[Path, DemoManifest]
) -> None:
    _, manifest = demo
    left = {rel: surviving(path.read_bytes(), manifest) for rel, path in copies.items()}
    assert {rel: kinds for rel, kinds in left.items() if kinds} == {}
    # Every place the demo hides a secret was covered: the files that held one were rewritten.
    holders = {file for s in manifest.secrets for file in s.files}
    assert holders >= {
        SHOP_FILE,
        "history.jsonl",
        f"file-history/{SHOP}/" + next(f.split("/")[-1] for f in holders if "file-history" in f),
    }
    assert any("/subagents/" in f for f in holders)
    assert any("/tool-results/" in f for f in holders)
    for rel in holders:
        assert copies[rel].read_bytes() != (demo[0] / rel).read_bytes(), rel


def test_copies_keep_every_line_and_its_structure(
    copies: dict[str, Path], demo: tuple[Path, DemoManifest]
) -> None:
    config, manifest = demo
    changed = 0
    for rel in manifest.files:
        if not rel.endswith(".jsonl"):
            continue
        before = (config / rel).read_bytes().split(b"\n")
        after = copies[rel].read_bytes().split(b"\n")
        assert len(before) == len(after), rel
        for number, (old, new) in enumerate(zip(before, after, strict=True), 1):
            if old == new:
                continue
            changed += 1
            assert has_findings(old), (rel, number)  # only lines with findings change
            assert same_structure(json.loads(old), json.loads(new)), (rel, number)
            assert PLACEHOLDER_RE.search(new.decode()), (rel, number)
    assert changed >= 10


def test_text_side_files_keep_their_lines(
    copies: dict[str, Path], demo: tuple[Path, DemoManifest]
) -> None:
    config, manifest = demo
    for rel in manifest.files:
        if rel.endswith(".jsonl"):
            continue
        before, after = (config / rel).read_bytes(), copies[rel].read_bytes()
        assert before.count(b"\n") == after.count(b"\n"), rel
        if not surviving(before, manifest):
            assert before == after, rel


def test_identifiers_signatures_and_images_stay_byte_identical(
    copies: dict[str, Path], demo: tuple[Path, DemoManifest]
) -> None:
    config, _ = demo

    def protected(record: Any, out: list[Any]) -> list[Any]:
        if isinstance(record, dict):
            for key, value in record.items():
                if key in ("uuid", "parentUuid", "signature", "id", "tool_use_id", "data",
                           "sessionId", "requestId", "timestamp"):  # fmt: skip
                    out.append((key, value))
                protected(value, out)
        elif isinstance(record, list):
            for item in record:
                protected(item, out)
        return out

    before = [json.loads(x) for x in (config / SHOP_FILE).read_bytes().splitlines()]
    after = [json.loads(x) for x in copies[SHOP_FILE].read_bytes().splitlines()]
    kept = [protected(a, []) == protected(b, []) for a, b in zip(before, after, strict=True)]
    assert all(kept)
    assert any(key == "data" for r in before for key, _ in protected(r, []))  # the image


def test_a_copy_is_private_and_keeps_the_source_mtime(
    copies: dict[str, Path], demo: tuple[Path, DemoManifest]
) -> None:
    config, _ = demo
    for rel, path in copies.items():
        assert path.stat().st_mode & 0o777 == 0o600, rel
        assert path.stat().st_mtime_ns == (config / rel).stat().st_mtime_ns, rel
    assert (next(iter(copies.values())).parent.stat().st_mode & 0o077) == 0


def test_thinking_is_redacted_in_copies_and_kept_on_request(
    demo: tuple[Path, DemoManifest], copies: dict[str, Path], tmp_path: Path
) -> None:
    config, manifest = demo
    source = config / SHOP_FILE
    line = THINKING_LINE - 1
    original = source.read_bytes().split(b"\n")[line]
    assert json.loads(original)["message"]["content"][0]["type"] == "thinking"
    redacted = copies[SHOP_FILE].read_bytes().split(b"\n")[line]
    assert surviving(original, manifest) == ["dotenv-value"]
    assert surviving(redacted, manifest) == []
    kept_path = tmp_path / "kept.jsonl"
    result = redact_copy(source, kept_path, SCANNER, thinking=ThinkingMode.KEEP)
    assert kept_path.read_bytes().split(b"\n")[line] == original
    assert result.left_in_thinking == 1
    check = check_redacted(kept_path, SCANNER, source)
    assert check.ok and check.findings_in_thinking == 1


def test_redacting_a_redacted_copy_changes_nothing(copies: dict[str, Path], tmp_path: Path) -> None:
    for rel, path in copies.items():
        again = tmp_path / "again" / rel
        result = redact_copy(path, again, SCANNER)
        assert (result.replaced, result.lines_changed) == (0, 0), rel
        assert again.read_bytes() == path.read_bytes(), rel


def test_the_input_is_never_modified(demo: tuple[Path, DemoManifest], tmp_path: Path) -> None:
    config, _ = demo
    source = config / SHOP_FILE
    before, mtime = sha256(source), source.stat().st_mtime_ns
    redact_copy(source, tmp_path / "out.jsonl", SCANNER)
    assert (sha256(source), source.stat().st_mtime_ns) == (before, mtime)


def test_a_torn_last_line_is_kept_and_redacted_as_text(tmp_path: Path) -> None:
    token = fake_github_token(random.Random(3))
    source = tmp_path / "torn.jsonl"
    good = b'{"type":"user","message":{"role":"user","content":"hello"}}\n'
    source.write_bytes(good + b'{"type":"user","message":{"content":"use ' + token.encode())
    result = redact_copy(source, tmp_path / "out.jsonl", SCANNER)
    data = (tmp_path / "out.jsonl").read_bytes()
    assert data.startswith(good)
    assert not data.endswith(b"\n")  # still torn: nothing invented
    assert token.encode() not in data
    assert data.endswith(b"]")  # the placeholder sits where the token was
    assert result.problems == [(2, "torn-last-line")]
    assert result.replaced == 1


@pytest.mark.parametrize("filler", [4000, 4080, 4100])
def test_a_long_value_under_a_sensitive_key_is_redacted_once(tmp_path: Path, filler: int) -> None:
    # Too long for the whole-value rule, so only the token is replaced at first; what is left
    # beside the placeholder must not then be taken for the whole value by a second run.
    token = fake_github_token(random.Random(6))
    record = {"type": "user", "toolUseResult": {"password": "x" * filler + "/" + token}}
    source = tmp_path / "in.jsonl"
    source.write_bytes(json.dumps(record).encode() + b"\n")
    redact_copy(source, tmp_path / "once.jsonl", SCANNER)
    again = redact_copy(tmp_path / "once.jsonl", tmp_path / "twice.jsonl", SCANNER)
    assert again.replaced == 0
    assert (tmp_path / "twice.jsonl").read_bytes() == (tmp_path / "once.jsonl").read_bytes()
    assert token.encode() not in (tmp_path / "once.jsonl").read_bytes()


def test_binary_symlinked_and_self_targets(demo: tuple[Path, DemoManifest], tmp_path: Path) -> None:
    binary = tmp_path / "cache.bin"
    binary.write_bytes(b"\0\1\2" * 100)
    result = redact_copy(binary, tmp_path / "out.bin", SCANNER)
    assert result.kind is FileKind.BINARY and result.skipped
    assert not (tmp_path / "out.bin").exists()
    link = tmp_path / "link.jsonl"
    link.symlink_to(demo[0] / SHOP_FILE)
    with pytest.raises(InputError, match="symbolic link"):
        redact_copy(link, tmp_path / "out.jsonl", SCANNER)
    own = tmp_path / "own.jsonl"
    shutil.copy(demo[0] / SHOP_FILE, own)
    with pytest.raises(UsageError, match="--in-place"):
        redact_copy(own, own, SCANNER)


def test_an_unwritable_destination_is_a_clear_error_and_leaves_nothing(
    demo: tuple[Path, DemoManifest], tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"")
    with pytest.raises(ScrubberError, match="cannot write") as caught:
        redact_copy(demo[0] / SHOP_FILE, blocker / "out.jsonl", SCANNER)
    assert caught.value.hint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]


def test_a_failure_mid_write_removes_the_temp_file(
    demo: tuple[Path, DemoManifest], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    # Wherever atomic_write lives (it moved to scrubber/durable.py): every fsync fails.
    monkeypatch.setattr(os, "fsync", full_disk)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ScrubberError, match="No space left on device"):
        redact_copy(demo[0] / SHOP_FILE, out / "copy.jsonl", SCANNER)
    assert list(out.iterdir()) == []


# -- in place --------------------------------------------------------------------------------


def test_in_place_on_a_file_without_a_final_newline_reports_nothing_appended(
    tmp_path: Path,
) -> None:
    token = fake_github_token(random.Random(7))
    record = {"type": "user", "uuid": "u1", "sessionId": "s1", "message": {"content": token}}
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b'{"type":"summary","summary":"x"}\n' + json.dumps(record).encode())
    result = redact_in_place(path, SCANNER, tmp_path / "locks")
    assert result.replaced == 1 and token.encode() not in path.read_bytes()
    assert result.folded_tail_bytes == 0  # the unterminated last line was there all along


def test_in_place_keeps_mode_owner_mtime_and_thinking(
    config_copy: Path, demo: tuple[Path, DemoManifest], tmp_path: Path
) -> None:
    _, manifest = demo
    path = config_copy / SHOP_FILE
    path.chmod(0o640)
    os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    if os.geteuid() == 0:
        os.chown(path, 4321, 4322)
    before = path.stat()
    original = path.read_bytes().split(b"\n")
    result = redact_in_place(path, SCANNER, tmp_path / "locks")
    after = path.stat()
    assert after.st_ino != before.st_ino  # a new file, renamed over the old one
    assert (after.st_mode, after.st_uid, after.st_gid) == (
        before.st_mode,
        before.st_uid,
        before.st_gid,
    )
    assert after.st_mtime_ns == before.st_mtime_ns
    rewritten = path.read_bytes().split(b"\n")
    assert len(rewritten) == len(original)
    assert rewritten[THINKING_LINE - 1] == original[THINKING_LINE - 1]  # signed: never edited
    assert result.left_in_thinking == 1
    assert surviving(path.read_bytes(), manifest) == ["dotenv-value"]  # in thinking only
    assert result.replaced > 0 and result.folded_tail_bytes == 0
    assert [p.name for p in path.parent.iterdir() if "scrub-tmp" in p.name] == []
    check = check_redacted(path, SCANNER, None)
    assert check.ok and check.findings_in_thinking == 1


def test_in_place_without_findings_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(b'{"type":"user","message":{"role":"user","content":"hello"}}\n')
    inode = path.stat().st_ino
    result = redact_in_place(path, SCANNER, tmp_path / "locks")
    assert (result.lines_changed, path.stat().st_ino) == (0, inode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.jsonl", "locks"]


def test_in_place_clears_temp_files_of_killed_runs(config_copy: Path, tmp_path: Path) -> None:
    path = config_copy / SHOP_FILE
    stale = path.parent / f".{path.name}.k1ll3d00.scrub-tmp"
    stale.write_bytes(path.read_bytes()[:1000])  # what a kill -9 mid-rewrite leaves
    other = path.parent / ".another.jsonl.k1ll3d00.scrub-tmp"
    other.write_bytes(b"")
    redact_in_place(path, SCANNER, tmp_path / "locks")
    assert not stale.exists()
    assert other.exists()  # another file's: its own next run clears it


def test_in_place_refuses_symlinks(config_copy: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(config_copy / SHOP_FILE)
    before = sha256(config_copy / SHOP_FILE)
    with pytest.raises(InputError, match="symbolic link"):
        redact_in_place(link, SCANNER, tmp_path / "locks")
    assert sha256(config_copy / SHOP_FILE) == before


def test_a_second_run_on_the_same_file_is_busy(config_copy: Path, tmp_path: Path) -> None:
    path = config_copy / SHOP_FILE
    before = sha256(path)
    with file_lock(tmp_path / "locks", path):
        with pytest.raises(BusyError) as caught:
            redact_in_place(path, SCANNER, tmp_path / "locks")
        assert caught.value.exit_code == 4
    assert sha256(path) == before
    redact_in_place(path, SCANNER, tmp_path / "locks")  # free again once released
    assert sha256(path) != before


class _AppendingScan(FileScan):
    """A real FileScan that, while the rewrite reads line `at`, appends lines to the file the
    way Claude Code does (open, append, close)."""

    def __init__(self, scanner: SecretScanner, path: Path, at: int, tail: list[bytes]) -> None:
        super().__init__(scanner)
        self._path, self._at, self._tail = path, at, tail

    def scan_raw(self, raw: RawLine) -> LineScan | None:
        if raw.number == self._at:
            for line in self._tail:
                with self._path.open("ab") as out:
                    out.write(line)
        return super().scan_raw(raw)


class _AppendingScanner(SecretScanner):
    def __init__(self, path: Path, at: int, tail: list[bytes]) -> None:
        super().__init__(build_detectors(Policy.default()), Fingerprinter(KEY))
        self._args = (path, at, tail)

    def new_file_scan(self) -> FileScan:
        return _AppendingScan(self, *self._args)


def _tail(token: str) -> list[bytes]:
    return [
        b'{"type":"user","n":1,"message":{"role":"user","content":"next"}}\n',
        b'{"type":"user","n":2,"message":{"role":"user","content":"key '
        + token.encode()
        + b'"}}\n',
        b'{"type":"user","n":3,"message":{"role":"user",',  # being written...
        b'"content":"done"}}\n',  # ...and finished
    ]


@pytest.mark.parametrize("finished", [True, False])
def test_lines_appended_during_the_rewrite_are_folded_in(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, finished: bool
) -> None:
    """Lines arrive while the main pass reads; the last one is half written when the main
    pass ends and (when `finished`) completed while the rewrite checks the size again."""
    from scrubber.usecases import redact_in_place as in_place

    path = config_copy / SHOP_FILE
    token = fake_github_token(random.Random(4))
    original = path.read_bytes()
    tail = _tail(token)
    scanner = _AppendingScanner(path, at=original.count(b"\n"), tail=tail[:3])
    calls = []
    real_fstat = os.fstat
    transcript = path.stat().st_ino

    def fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        if st.st_ino != transcript:
            return st  # the lock file's check (the patch is on the shared os module)
        calls.append(fd)
        if len(calls) == 2 and finished:  # the first size check after the main pass
            with path.open("ab") as out:
                out.write(tail[3])
            st = real_fstat(fd)
        return st

    monkeypatch.setattr(in_place.os, "fstat", fstat)
    result = redact_in_place(path, scanner, tmp_path / "locks")
    monkeypatch.undo()
    data = path.read_bytes()
    lines = data.split(b"\n")
    assert len(lines) == original.count(b"\n") + 3 + (1 if finished else 0)
    assert lines[-4 if finished else -3] == tail[0].rstrip(b"\n")
    second = lines[-3 if finished else -2]
    assert json.loads(second)["n"] == 2 and PLACEHOLDER_RE.search(second.decode())
    assert token.encode() not in data
    if finished:
        assert lines[-2] == tail[2] + tail[3].rstrip(b"\n") and lines[-1] == b""
        assert result.folded_tail_bytes == len(tail[2]) + len(tail[3])
        assert result.problems == []
    else:
        assert lines[-1] == tail[2]  # still half written: kept as it is, never completed by us
        assert result.problems == [(original.count(b"\n") + 3, "torn-last-line")]
    assert check_redacted(path, SCANNER, None).findings == 0


def test_lines_appended_just_before_the_rename_are_kept(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worst moment: after the last size check, before the rename. The writer appends to
    # the old inode; the rewrite must copy that over to the new file.
    path = config_copy / SHOP_FILE
    token = fake_github_token(random.Random(5))
    tail = _tail(token)[:2]
    real_replace = Path.replace

    def replace_late(self: Path, target: Any) -> Path:
        if Path(target) == path:
            with path.open("ab") as out:
                out.write(b"".join(tail))
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", replace_late)
    before = path.read_bytes().count(b"\n")
    result = redact_in_place(path, SCANNER, tmp_path / "locks")
    data = path.read_bytes()
    lines = data.split(b"\n")
    assert len(lines) == before + 2 + 1
    assert [json.loads(x)["n"] for x in lines[-3:-1]] == [1, 2]
    assert token.encode() not in data
    assert result.folded_tail_bytes == sum(len(x) for x in tail)


def test_a_line_from_a_writer_that_opened_the_file_before_the_rename_is_kept(
    config_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer opens the transcript just before the rename and writes a moment after it: its
    # line goes to the old inode, after the first look for a late tail. The rewrite watches the
    # old file until it holds still, so the line is copied over, redacted.
    path = config_copy / SHOP_FILE
    token = fake_github_token(random.Random(6))
    (line,) = _tail(token)[1:2]
    real_replace = Path.replace
    writers: list[threading.Thread] = []

    def replace_and_write_late(self: Path, target: Any) -> Path:
        if Path(target) != path:
            return real_replace(self, target)
        handle = path.open("ab")  # opened before the rename: the old inode

        def write_later() -> None:
            time.sleep(0.015)
            handle.write(line)
            handle.close()

        writers.append(threading.Thread(target=write_later))
        moved = real_replace(self, target)
        writers[-1].start()
        return moved

    monkeypatch.setattr(Path, "replace", replace_and_write_late)
    before = path.read_bytes().count(b"\n")
    result = redact_in_place(path, SCANNER, tmp_path / "locks")
    for writer in writers:
        writer.join()
    data = path.read_bytes()
    assert data.count(b"\n") == before + 1
    assert json.loads(data.split(b"\n")[-2])["n"] == 2
    assert token.encode() not in data
    assert result.folded_tail_bytes == len(line)


def test_a_file_that_shrinks_during_the_rewrite_is_left_alone(
    config_copy: Path, tmp_path: Path
) -> None:
    path = config_copy / SHOP_FILE

    class Truncating(FileScan):
        def scan_raw(self, raw: RawLine) -> LineScan | None:
            if raw.number == 5:
                with path.open("r+b") as out:
                    out.truncate(100)
            return super().scan_raw(raw)

    class Scanner(SecretScanner):
        def new_file_scan(self) -> FileScan:
            return Truncating(self)

    scanner = Scanner(build_detectors(Policy.default()), Fingerprinter(KEY))
    with pytest.raises(ScrubberError, match="shrank"):
        redact_in_place(path, scanner, tmp_path / "locks")
    assert path.stat().st_size == 100
    assert [p.name for p in path.parent.iterdir() if "scrub-tmp" in p.name] == []


# -- the proof -------------------------------------------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.fixture
def good_copy(demo: tuple[Path, DemoManifest], tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    source = demo[0] / SHOP_FILE
    out = tmp_path / "good.jsonl"
    redact_copy(source, out, SCANNER)
    yield source, out


def test_check_proves_a_good_copy(good_copy: tuple[Path, Path]) -> None:
    source, out = good_copy
    result = check_redacted(out, SCANNER, source)
    assert result.ok
    assert (result.findings, result.invalid_lines, result.structure_mismatches) == (0, [], [])
    assert result.lines == source.read_bytes().count(b"\n")
    assert check_redacted(out, SCANNER, None).ok
    assert not check_redacted(source, SCANNER, None).ok  # the original is not redacted


def test_check_catches_a_secret_put_back(
    good_copy: tuple[Path, Path], demo: tuple[Path, DemoManifest], tmp_path: Path
) -> None:
    source, out = good_copy
    secret = next(s for s in demo[1].secrets if s.kind == "github-token")
    lines = _lines(out)
    index = next(i for i, x in enumerate(lines) if b'"content":"The checkout' in x)
    record = json.loads(lines[index])
    record["message"]["content"] += f" {secret.value}"
    lines[index] = json.dumps(record, separators=(",", ":")).encode()
    result = check_redacted(_write(tmp_path / "bad.jsonl", lines), SCANNER, source)
    assert not result.ok
    assert result.findings >= 1 and result.finding_lines == [index + 1]
    assert result.structure_mismatches == []


@pytest.mark.parametrize("damage", ["number", "key", "list", "uuid", "drop-line", "garbage"])
def test_check_catches_a_structure_change(
    good_copy: tuple[Path, Path], tmp_path: Path, damage: str
) -> None:
    source, out = good_copy
    lines = _lines(out)
    index = next(i for i, x in enumerate(lines) if b'"usage"' in x)
    record = json.loads(lines[index])
    if damage == "number":
        record["message"]["usage"]["output_tokens"] += 1
    elif damage == "key":
        record["extra"] = "x"
    elif damage == "list":
        record["message"]["content"].append({"type": "text", "text": "x"})
    elif damage == "uuid":
        record["uuid"] = record["uuid"][::-1]
    lines[index] = json.dumps(record, separators=(",", ":")).encode()
    if damage == "drop-line":
        del lines[index]
    elif damage == "garbage":
        lines[index] = b"{not json"
    result = check_redacted(_write(tmp_path / "bad.jsonl", lines), SCANNER, source)
    assert not result.ok
    if damage == "drop-line":
        assert result.line_count_mismatch is not None or result.structure_mismatches
    elif damage == "garbage":
        assert result.invalid_lines == [index + 1]
    else:
        assert result.structure_mismatches == [index + 1]
