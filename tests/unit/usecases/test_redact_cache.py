"""`scrub redact --all` (and the worker) skip what is already current (usecases/redact_cache.py):
what a run with the cache writes is byte for byte what a run without it writes, whatever
happened to the sources, the copies in DEST or the cache in between; a run over nothing that
changed writes nothing.

Fake secrets are built at run time; assertion messages name files, never values.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import string
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import build_demo_config, demo_manifest, fake_github_token
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy, ThinkingMode
from scrubber.redaction.lines import FileRedaction
from scrubber.usecases.redact import run_redact
from scrubber.usecases.redact_cache import CACHE_FOLDER
from scrubber.usecases.redact_targets import RedactRequest

POLICY = Policy.default()
SCANNER = SecretScanner(build_detectors(POLICY), Fingerprinter(b"redact-cache-test-key-32-bytes.."))
INFRA = "31660e65-ecdc-4273-b0df-b9ca9fe1662d"  # the demo's private-key session (seed 0)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_config(tmp_path_factory.mktemp("redact-cache-demo") / ".claude")


@pytest.fixture
def config(demo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "claude"
    shutil.copytree(demo, copy, symlinks=True)
    return copy


def redact_all(
    config: Path, home: Path, dest: Path, *, use_cache: bool = True, in_place: bool = False
) -> list[FileRedaction]:
    request = RedactRequest(home, config, all_sessions=True, in_place=in_place,
                            output=None if in_place else dest, use_cache=use_cache)  # fmt: skip
    return run_redact(request, SCANNER, ThinkingMode.REDACT, note=lambda _: None, policy=POLICY)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def identities(root: Path) -> dict[str, tuple[int, int]]:
    """Which file each copy is: a rewrite makes a new inode or a new ctime."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            st = path.stat()
            found[path.relative_to(root).as_posix()] = (st.st_ino, st.st_ctime_ns)
    return found


def cold(config: Path, tmp_path: Path, name: str) -> dict[str, bytes]:
    """What a run without the cache writes, in a destination of its own."""
    dest = tmp_path / name
    redact_all(config, tmp_path / f"{name}-home", dest, use_cache=False)
    return tree(dest)


def reports(results: list[FileRedaction]) -> list[tuple[Any, ...]]:
    return [(r.source, r.dest, r.kind, r.lines, r.lines_changed, r.replaced, dict(r.by_kind),
             r.left_in_thinking, r.problems, r.skipped) for r in results]  # fmt: skip


def _context_only_value(seed: int) -> str:
    """A value only its context (the result of a Read of `.env`) makes a secret."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(18))


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _read_env(tool_id: str, text: str) -> bytes:
    call = {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": "/srv/.env"}}
    result = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
    return _line({"type": "assistant", "sessionId": INFRA, "uuid": tool_id + "-a",
                  "message": {"role": "assistant", "content": [call]}}) + _line(
        {"type": "user", "sessionId": INFRA, "uuid": tool_id + "-u",
         "message": {"role": "user", "content": [result]}})  # fmt: skip


def _infra(config: Path) -> Path:
    return next(config.glob(f"projects/*/{INFRA}.jsonl"))


def test_a_warm_run_writes_nothing_and_reports_the_same(config: Path, tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "dest"
    first = redact_all(config, home, dest)
    written, made = tree(dest), identities(dest)
    assert written == cold(config, tmp_path, "cold")
    again = redact_all(config, home, dest)
    assert identities(dest) == made  # not one copy written again
    assert tree(dest) == written
    assert reports(again) == reports(first)
    # --no-cache writes every copy again, the same bytes.
    redact_all(config, home, dest, use_cache=False)
    assert tree(dest) == written
    assert all(identities(dest)[name] != made[name] for name in made)


def test_a_changed_session_is_redone_and_only_it(config: Path, tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "dest"
    redact_all(config, home, dest)
    made = identities(dest)
    transcript = _infra(config)
    with transcript.open("ab") as out:
        out.write(_read_env("toolu_rc1", f"APP_SETTING={_context_only_value(1)}\nDEBUG=0"))
    redact_all(config, home, dest)
    assert tree(dest) == cold(config, tmp_path, "cold")
    now = identities(dest)
    changed = {name for name in made if now[name] != made[name]}
    relative = transcript.relative_to(config).as_posix()
    assert relative in changed
    assert not any("e3e70682" in name or "896642b1" in name for name in changed), changed


def test_a_deleted_or_tampered_copy_is_written_again(config: Path, tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "dest"
    redact_all(config, home, dest)
    expected = tree(dest)
    copies = sorted(dest.glob("projects/*/*.jsonl"))
    copies[0].unlink()
    tampered = copies[1]
    st = tampered.stat()
    data = tampered.read_bytes()
    tampered.write_bytes(data[:-3] + b"X" + data[-2:])  # same size, mtime put back
    os.utime(tampered, ns=(st.st_atime_ns, st.st_mtime_ns))
    shell = next(dest.glob("shell-snapshots/*"))
    shell.chmod(0o600)
    shell.write_bytes(b"")
    redact_all(config, home, dest)
    assert tree(dest) == expected


def test_a_skipped_sessions_values_are_redacted_in_history(config: Path, tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "dest"
    value = _context_only_value(7)
    with _infra(config).open("ab") as out:
        out.write(_read_env("toolu_rc7", f"APP_SETTING={value}\nDEBUG=0"))
    redact_all(config, home, dest)
    made = identities(dest)
    # Only history.jsonl changes: a prompt of the infra session quoting the value, bare (no
    # detector would find it alone: only the value found in the session's transcript does).
    with (config / "history.jsonl").open("ab") as out:
        out.write(_line({"display": f"why does {value} fail", "pastedContents": {},
                         "timestamp": 1772496000001, "sessionId": INFRA}))  # fmt: skip
    redact_all(config, home, dest)
    now = identities(dest)
    assert now["history.jsonl"] != made["history.jsonl"]
    assert (
        now[_infra(config).relative_to(config).as_posix()]
        == made[_infra(config).relative_to(config).as_posix()]
    )  # the session itself was answered from the cache
    assert value.encode() not in (dest / "history.jsonl").read_bytes(), "history copy"
    assert tree(dest) == cold(config, tmp_path, "cold")


def test_a_new_value_in_history_redoes_its_session(config: Path, tmp_path: Path) -> None:
    """A value found in history.jsonl's lines of a session is a value of that session: its
    copies take it in, though none of its files changed."""
    home, dest = tmp_path / "home", tmp_path / "dest"
    value = _context_only_value(8)
    with _infra(config).open("ab") as out:  # bare: nothing but the value makes it a secret
        out.write(_line({"type": "system", "sessionId": INFRA, "content": f"saw {value}"}))
    redact_all(config, home, dest)
    relative = _infra(config).relative_to(config).as_posix()
    assert value.encode() in (dest / relative).read_bytes()
    with (config / "history.jsonl").open("ab") as out:
        out.write(_line({"display": f"export SERVICE_API_KEY={value}", "pastedContents": {},
                         "timestamp": 1772496000002, "sessionId": INFRA}))  # fmt: skip
    redact_all(config, home, dest)
    assert value.encode() not in (dest / relative).read_bytes(), relative
    assert tree(dest) == cold(config, tmp_path, "cold")


def test_a_damaged_or_open_cache_is_ignored(config: Path, tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "dest"
    redact_all(config, home, dest)
    expected = tree(dest)
    [cache] = (home / "state" / CACHE_FOLDER).glob("*.json")
    data = cache.read_bytes()
    cache.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    made = identities(dest)
    redact_all(config, home, dest)
    assert tree(dest) == expected
    assert all(identities(dest)[name] != made[name] for name in made)  # all written again
    cache.chmod(0o644)
    made = identities(dest)
    redact_all(config, home, dest)
    assert all(identities(dest)[name] != made[name] for name in made)
    assert cache.stat().st_mode & 0o777 == 0o600  # written afresh, private
    assert cache.parent.stat().st_mode & 0o777 == 0o700
    blob = cache.read_bytes()
    for secret in demo_manifest().secrets:
        for needle in secret.needles():
            assert needle.encode() not in blob, secret.kind
            assert json.dumps(needle)[1:-1].encode() not in blob, secret.kind


def test_in_place_a_rewritten_unchanged_file_needs_nothing(config: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = redact_all(config, home, tmp_path, in_place=True)
    assert any(r.replaced for r in first)
    files = {r.source: r.source.stat() for r in first}
    again = redact_all(config, home, tmp_path, in_place=True)
    assert {r.source for r in again} == set(files)
    assert all(r.replaced == 0 and r.lines_changed == 0 for r in again)
    assert [r.left_in_thinking for r in again] == [r.left_in_thinking for r in first]
    assert all(r.source.stat().st_ctime_ns == files[r.source].st_ctime_ns for r in again)
    # A file that changed: the run is done in full again (lock, fold-in and all).
    transcript = _infra(config)
    token = fake_github_token(random.Random(5))
    with transcript.open("ab") as out:
        out.write(_line({"type": "user", "sessionId": INFRA, "uuid": "u-rc",
                         "message": {"role": "user", "content": f"token {token}"}}))  # fmt: skip
    third = redact_all(config, home, tmp_path, in_place=True)
    assert next(r for r in third if r.source == transcript).replaced == 1
    assert token.encode() not in transcript.read_bytes()


def test_the_session_end_worker_skips_a_current_session(config: Path, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from scrubber.policy.model import SessionEndAction
    from scrubber.usecases.session_end import EndedSession, PipelineActions

    home = tmp_path / "home"
    session = EndedSession(INFRA, _infra(config), config, home, POLICY, {},
                           datetime(2026, 5, 1, tzinfo=UTC))  # fmt: skip
    actions = PipelineActions()
    first = actions.run(SessionEndAction.REDACT_COPY, session)
    dest = home / "redacted"
    made, written = identities(dest), tree(dest)
    assert first["replaced"] and made
    assert actions.run(SessionEndAction.REDACT_COPY, session) == first
    assert identities(dest) == made and tree(dest) == written
    with _infra(config).open("ab") as out:
        out.write(_read_env("toolu_rc9", f"APP_SETTING={_context_only_value(9)}\nDEBUG=0"))
    again = actions.run(SessionEndAction.REDACT_COPY, session)
    assert again["replaced"] == first["replaced"] + 1
    assert identities(dest) != made
    # In place: the second run over the rewritten, unchanged session rewrites nothing.
    done = actions.run(SessionEndAction.REDACT_IN_PLACE, session)
    assert done["replaced"] > 0
    stamps = {p: p.stat().st_ctime_ns for p in _infra(config).parent.rglob("*") if p.is_file()}
    assert actions.run(SessionEndAction.REDACT_IN_PLACE, session)["replaced"] == 0
    assert {p: p.stat().st_ctime_ns for p in stamps} == stamps


def test_cache_hygiene_named_files_leave_none_and_deleted_sessions_leave(
    config: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    request = RedactRequest(home, config, paths=(_infra(config),), output=tmp_path / "one.jsonl")
    run_redact(request, SCANNER, ThinkingMode.REDACT, note=lambda _: None, policy=POLICY)
    assert not (home / "state" / CACHE_FOLDER).exists()  # a script's thousands leave nothing
    redact_all(config, home, tmp_path / "dest")
    [cache] = (home / "state" / CACHE_FOLDER).glob("*.json")

    def sources() -> set[str]:
        body = json.loads(cache.read_bytes().partition(b"\n")[2])
        return {entry[0] for entry in body["copies"].values()}

    gone = next(config.glob("projects/*/896642b1-*.jsonl"))
    assert str(gone) in sources()
    gone.unlink()
    redact_all(config, home, tmp_path / "dest")
    assert str(gone) not in sources() and sources()


def _token_folder_session(config: Path) -> tuple[str, Path]:
    """A session whose cwd holds a token (so its project folder's name does)."""
    token = fake_github_token(random.Random(11))
    cwd = f"/home/u/{token}/app"
    folder = config / "projects" / "".join(c if c.isalnum() else "-" for c in cwd)
    sid = "7b1e0c2a-5d4f-4e3a-9c8b-1a2b3c4d5e6f"
    folder.mkdir(parents=True)
    record = {"type": "user", "cwd": cwd, "sessionId": sid, "message": {"content": "hi"}}
    (folder / f"{sid}.jsonl").write_text(json.dumps(record) + "\n")
    return folder.name, folder / f"{sid}.jsonl"


@pytest.mark.parametrize("changed_since", [False, True])
def test_a_copy_under_the_folders_old_name_goes_once_it_is_copied_under_the_new(
    config: Path, tmp_path: Path, changed_since: bool
) -> None:
    """Copies made before folders were named as shown (an earlier version) sit under the raw
    name: the next run writes the copy under the shown name and removes the old one, when it
    is still the file written; one changed since is left alone."""
    from scrubber.usecases.shown_names import FolderNames

    home, dest = tmp_path / "home", tmp_path / "out"
    raw, transcript = _token_folder_session(config)
    redact_all(config, home, dest)  # no folder names: the old placing
    old = dest / "projects" / raw / transcript.name
    assert old.is_file()
    if changed_since:
        old.write_text(old.read_text() + "\n")
    request = RedactRequest(home, config, all_sessions=True, output=dest)
    folders = FolderNames(POLICY, home, {}, SCANNER)
    run_redact(request, SCANNER, ThinkingMode.REDACT, note=lambda _: None, policy=POLICY,
               folders=folders)  # fmt: skip
    [new] = [p for p in (dest / "projects").glob(f"*/{transcript.name}") if p != old]
    assert "[REDACTED:github-token:" in new.parent.name
    assert old.exists() is changed_since
    assert (dest / "projects" / raw).exists() is changed_since  # its empty folder went too
