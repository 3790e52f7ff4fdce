"""Archives on disk (archive.layout, sidecar, write, verify, restore, decrypt): atomic writes with read-back, sidecars, listing, verification, restore.

Sessions come from demo config dirs; archives are opened with pyrage (rage) as well as ours.
Failures (a full disk, a read-back mismatch) are simulated by patching the one function that
would meet them, and each test checks that nothing was left behind.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import stat
import tarfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pyrage
import pytest

from scrubber.archive import layout, write
from scrubber.archive import restore as restore_module
from scrubber.archive.age import (
    AgeHeaderError,
    AgeMacError,
    AgePayloadError,
    NoIdentityMatchedError,
)
from scrubber.archive.bundle import MANIFEST_NAME, collect_bundle, sha256_file
from scrubber.archive.decrypt import decrypt_file
from scrubber.archive.errors import (
    ArchiveError,
    ArchiveIntegrityError,
    ArchiveVersionError,
    ArchiveWriteError,
    RestoreConflictError,
    SidecarError,
)
from scrubber.archive.keys import ScryptIdentity, ScryptRecipient, X25519Identity, generate_identity
from scrubber.archive.layout import archives_of, list_archives, sidecar_path, version_name
from scrubber.archive.restore import restore_archive
from scrubber.archive.sidecar import SIDECAR_FORMAT
from scrubber.archive.verify import verify_archive
from scrubber.archive.write import WrittenArchive, write_archive
from scrubber.demo import build_demo_config
from scrubber.errors import ExitCode, UsageError
from scrubber.transcript.sessions import SessionInfo, discover
from scrubber.usecases.archive import facts_of

CREATED = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
IDENTITY = generate_identity()
OTHER = generate_identity()
DEFAULT_CLEAR = ("session_id", "first_timestamp", "last_timestamp", "sizes")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return build_demo_config(tmp_path / "home")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "archives"


def _session(config: Path, prefix: str = "e3e70682") -> SessionInfo:
    (found,) = [s for s in discover(config).sessions if s.id.startswith(prefix)]
    return found


def _write(
    config: Path,
    root: Path,
    session: SessionInfo | None = None,
    *,
    recipients: list[X25519Identity] | None = None,
    clear: tuple[str, ...] = DEFAULT_CLEAR,
    **kwargs: object,
) -> WrittenArchive:
    session = session or _session(config)
    keys = [i.recipient() for i in (recipients if recipients is not None else [IDENTITY])]
    return write_archive(
        root,
        facts_of(session),
        collect_bundle(config, session.bundle_paths()),
        config,
        keys,
        created=CREATED,
        scrubber_version="test",
        clear_fields=clear,
        **kwargs,  # type: ignore[arg-type]
    )


def _files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------- write


def test_archive_lands_at_the_contract_path_private_and_complete(config: Path, root: Path) -> None:
    session = _session(config)
    written = _write(config, root)
    assert written.created
    expected = (
        root / session.project / session.id / f"2026-03-02T09-01-30.948Z{layout.ENCRYPTED_SUFFIX}"
    )
    assert written.entry.path == expected
    assert _files_under(root) == sorted(
        p.relative_to(root).as_posix() for p in (expected, sidecar_path(expected))
    )
    for path in (expected, sidecar_path(expected)):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (root, root / session.project, expected.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # Anyone holding the identity can open it with rage, and finds the manifest first.
    plain = pyrage.decrypt(
        expected.read_bytes(), [pyrage.x25519.Identity.from_str(IDENTITY.encode())]
    )
    with tarfile.open(fileobj=io.BytesIO(plain), mode="r:gz") as tar:
        names = tar.getnames()
        assert names[0] == MANIFEST_NAME
        raw = tar.extractfile(MANIFEST_NAME)
        assert raw is not None
        manifest = json.loads(raw.read())
    assert manifest["session_id"] == session.id
    assert manifest["recipients"] == list(written.manifest.recipients)
    assert set(names) >= {f.path for f in written.manifest.files}


def test_sidecar_holds_only_the_allowed_fields(config: Path, root: Path) -> None:
    session = _session(config)
    written = _write(config, root)
    sidecar = json.loads(sidecar_path(written.entry.path).read_bytes())
    assert set(sidecar["manifest"]) == set(DEFAULT_CLEAR)
    assert sidecar["manifest"]["sizes"]["transcript"] == session.size
    assert sidecar["ciphertext_sha256"] == sha256_file(written.entry.path)[0]
    assert sidecar["size"] == written.entry.path.stat().st_size
    assert sidecar["recipients"] == list(written.manifest.recipients)
    assert len(sidecar["recipients"][0]) == 16
    assert sidecar["stanza_types"] == ["X25519"]
    assert sidecar["format_version"] == SIDECAR_FORMAT
    assert sidecar["content_sha256"] == written.manifest.content_sha256
    text = sidecar_path(written.entry.path).read_text()
    assert session.cwd is not None and session.cwd not in text
    assert session.title is not None and session.title not in text
    assert IDENTITY.encode() not in text and IDENTITY.recipient().encode() not in text


def test_sidecar_titles_go_through_the_redactor(config: Path, root: Path) -> None:
    session = _session(config)
    written = _write(
        config,
        root,
        clear=(*DEFAULT_CLEAR, "title", "tags", "cwd", "project"),
        redact_text=lambda text: "[title:" + str(len(text)) + "]",
    )
    clear = json.loads(sidecar_path(written.entry.path).read_bytes())["manifest"]
    assert clear["title"] == f"[title:{len(session.title or '')}]"
    # A cwd and the project folder named after it are free text too (a token in a path).
    assert clear["cwd"] == f"[title:{len(session.cwd or '')}]"
    assert clear["project"] == f"[title:{len(session.project)}]"
    assert clear["tags"] == [f"[title:{len(tag)}]" for tag in session.tags]
    with pytest.raises(UsageError, match="unknown manifest field"):
        _write(config, root, clear=("secret_sauce",))


def test_the_sidecar_shows_the_facts_it_is_given_and_the_manifest_keeps_its_own(
    config: Path, root: Path
) -> None:
    session = _session(config)
    shown = replace(facts_of(session), project="p-shown", cwd="/c-shown", title="t", tags=("g",))
    written = _write(
        config, root, clear=(*DEFAULT_CLEAR, "title", "tags", "cwd", "project"), sidecar_facts=shown
    )
    clear = json.loads(sidecar_path(written.entry.path).read_bytes())["manifest"]
    assert (clear["project"], clear["cwd"], clear["title"], clear["tags"]) == (
        "p-shown",
        "/c-shown",
        "t",
        ["g"],
    )
    # The encrypted archive restores the session exactly: its manifest is as it was, and it
    # sits in the session's own project folder.
    assert written.manifest.session == facts_of(session)
    assert written.entry.path.parent.parent.name == session.project


def test_the_same_version_is_not_written_twice(config: Path, root: Path) -> None:
    first = _write(config, root)
    again = _write(config, root)
    assert not again.created
    assert again.entry.path == first.entry.path
    assert len(list_archives(root)) == 1
    # Other recipients: a new archive, never an overwrite.
    other = _write(config, root, recipients=[OTHER])
    assert other.created and other.entry.path.name.startswith("2026-03-02T09-01-30.948Z-2")
    assert first.entry.path.read_bytes() != other.entry.path.read_bytes()


def test_changed_content_with_the_same_last_timestamp_gets_a_new_name(
    config: Path, root: Path
) -> None:
    session = _session(config)
    first = _write(config, root)
    before = first.entry.path.read_bytes()
    (config / "debug" / f"{session.id}.txt").write_text("a later debug line\n")
    second = _write(config, root)
    assert second.created
    assert second.entry.path.name == f"2026-03-02T09-01-30.948Z-2{layout.ENCRYPTED_SUFFIX}"
    assert first.entry.path.read_bytes() == before
    assert [e.path for e in archives_of(root, session.project, session.id)] == [
        first.entry.path,
        second.entry.path,
    ]


def test_an_unencrypted_archive_needs_a_redacted_bundle(config: Path, root: Path) -> None:
    with pytest.raises(UsageError, match="unencrypted archive of an unredacted"):
        _write(config, root, recipients=[])
    assert not root.exists()
    written = _write(config, root, recipients=[], redacted=True)
    assert written.entry.path.name.endswith(layout.CLEAR_SUFFIX)
    assert not written.entry.encrypted
    assert written.entry.path.read_bytes()[:2] == b"\x1f\x8b"
    assert verify_archive(written.entry.path).full  # a clear archive verifies fully, keyless


def _redacted_under(config: Path, root: Path, tmp: Path, shown: str) -> WrittenArchive:
    """A clear redacted archive of the demo session whose manifest names its project `shown`
    (its files staged under that name), placed in the session's own project folder."""
    session = _session(config)
    staging = tmp / "staging"
    shutil.copytree(config, staging, symlinks=True)
    (staging / "projects" / session.project).rename(staging / "projects" / shown)
    staged = [
        staging / "projects" / shown / p.relative_to(config / "projects" / session.project)
        if p.is_relative_to(config / "projects" / session.project)
        else staging / p.relative_to(config)
        for p in session.bundle_paths()
    ]
    return write_archive(
        root,
        facts_of(session),
        collect_bundle(staging, staged),
        staging,
        [],
        created=CREATED,
        scrubber_version="test",
        clear_fields=(*DEFAULT_CLEAR, "project"),
        redacted=True,
        manifest_facts=replace(facts_of(session), project=shown),
    )


def test_a_redacted_manifest_may_name_its_project_folder_redacted_and_nothing_else(
    config: Path, root: Path, tmp_path: Path
) -> None:
    project = _session(config).project
    hidden = project[:6] + "[REDACTED:github-token:0123abcd]" + project[-4:]
    written = _redacted_under(config, root, tmp_path / "a", hidden)
    assert written.entry.project == project and written.manifest.session.project == hidden
    clear = json.loads(sidecar_path(written.entry.path).read_bytes())["manifest"]
    assert clear["project"] == hidden  # the sidecar shows the manifest's facts
    assert verify_archive(written.entry.path).full
    # A name that is not the folder's with parts hidden is another session's.
    other = _redacted_under(config, tmp_path / "other", tmp_path / "b", project + "-x")
    with pytest.raises(ArchiveIntegrityError, match="another session"):
        verify_archive(other.entry.path)


def test_a_full_disk_leaves_nothing_behind(
    config: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written_so_far = 0
    real_write = write._HashingWriter.write

    def full_disk(self: write._HashingWriter, data: bytes) -> int:
        nonlocal written_so_far
        written_so_far += len(memoryview(data))
        if written_so_far > 20_000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(self, data)

    monkeypatch.setattr(write._HashingWriter, "write", full_disk)
    with pytest.raises(ArchiveWriteError, match="No space left on device") as caught:
        _write(config, root)
    assert caught.value.exit_code is ExitCode.RUNTIME
    assert _files_under(root) == []


def test_a_read_back_mismatch_leaves_nothing_behind(
    config: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(write, "sha256_file", lambda path: ("0" * 64, 1))
    with pytest.raises(ArchiveWriteError, match="read back differs"):
        _write(config, root)
    assert _files_under(root) == []


def test_a_failing_sidecar_takes_the_archive_with_it(
    config: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = write.publish_by_link

    def publish(tmp: Path, final: Path) -> bool:
        if final.name.endswith(".json"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(tmp, final)

    monkeypatch.setattr(write, "publish_by_link", publish)
    with pytest.raises(ArchiveWriteError):
        _write(config, root)
    assert _files_under(root) == []


def test_an_unwritable_destination_is_one_clear_error(config: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the archive folder should be")
    with pytest.raises(ArchiveWriteError, match="cannot write the archive"):
        _write(config, blocker)
    assert blocker.read_text().startswith("a file")


# ----------------------------------------------------------------------------------- list


def test_list_reads_sidecars_and_reports_strays(config: Path, root: Path) -> None:
    a = _write(config, root)
    b = _write(config, root, _session(config, "31660e65"))
    folder = a.entry.path.parent
    (folder / ".2026-01-01T00-00-00.000Z.abc.tmp").write_bytes(b"half-written")
    orphan = folder / f"2025-01-01T00-00-00.000Z{layout.ENCRYPTED_SUFFIX}"
    sidecar_path(orphan).write_bytes(sidecar_path(a.entry.path).read_bytes())
    lonely = folder / f"2025-06-01T00-00-00.000Z{layout.ENCRYPTED_SUFFIX}"
    lonely.write_bytes(a.entry.path.read_bytes())
    entries = list_archives(root)
    by_path = {e.path: e for e in entries}
    assert set(by_path) == {a.entry.path, b.entry.path, orphan, lonely}
    assert by_path[a.entry.path].sidecar == a.entry.sidecar
    assert by_path[orphan].problem is not None and "missing" in by_path[orphan].problem
    assert by_path[lonely].problem is not None and "no sidecar" in by_path[lonely].problem
    assert by_path[a.entry.path].last_timestamp == _session(config).last_timestamp
    # Within a session, oldest first: the newest version is last.
    assert archives_of(root, a.entry.project, a.entry.session_id)[-1].path == a.entry.path


def test_version_names_have_no_colons_and_read_back() -> None:
    moment = datetime(2026, 3, 2, 9, 1, 30, 948000, tzinfo=UTC)
    name = version_name(moment)
    assert name == "2026-03-02T09-01-30.948Z"
    assert layout._parse_version(name) == moment
    assert layout._parse_version(name + "-3") == moment
    assert layout._parse_version("not-a-version") is None


# --------------------------------------------------------------------------------- verify


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x20
    path.write_bytes(bytes(data))


def _payload_offset(path: Path) -> int:
    from scrubber.archive.age import read_header

    with path.open("rb") as handle:
        return read_header(handle).size + 16


def test_verify_keyless_and_full_pass_on_a_good_archive(config: Path, root: Path) -> None:
    written = _write(config, root)
    keyless = verify_archive(written.entry.path)
    assert not keyless.full and keyless.manifest is None
    full = verify_archive(written.entry.path, [IDENTITY])
    assert full.full and full.manifest == written.manifest


def test_a_flipped_payload_byte_fails_keyless_on_the_hash_and_full_on_the_chunk(
    config: Path, root: Path
) -> None:
    path = _write(config, root).entry.path
    _flip(path, _payload_offset(path) + 100)
    with pytest.raises(ArchiveIntegrityError, match="SHA-256 mismatch") as keyless:
        verify_archive(path)
    assert keyless.value.exit_code is ExitCode.RUNTIME
    with pytest.raises(AgePayloadError, match="failed authentication"):
        verify_archive(path, [IDENTITY])


def test_a_flipped_header_byte_fails_each_way(config: Path, root: Path) -> None:
    path = _write(config, root).entry.path
    header = _payload_offset(path) - 16
    _flip(path, header - 5)  # inside the MAC
    with pytest.raises(ArchiveIntegrityError):
        verify_archive(path)
    with pytest.raises((AgeMacError, AgeHeaderError)):
        verify_archive(path, [IDENTITY])


def test_a_truncated_archive_fails_each_way(config: Path, root: Path) -> None:
    path = _write(config, root).entry.path
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(ArchiveIntegrityError, match="bytes, the sidecar recorded"):
        verify_archive(path)
    with pytest.raises(AgePayloadError):
        verify_archive(path, [IDENTITY])


def test_wrong_key_is_a_key_error(config: Path, root: Path) -> None:
    path = _write(config, root).entry.path
    with pytest.raises(NoIdentityMatchedError) as caught:
        verify_archive(path, [OTHER])
    assert caught.value.exit_code is ExitCode.USAGE


def test_verify_checks_the_sidecar_it_relies_on(config: Path, root: Path) -> None:
    path = _write(config, root).entry.path
    side = sidecar_path(path)
    original = json.loads(side.read_bytes())

    def edited(**changes: object) -> None:
        side.write_text(json.dumps({**original, **changes}))

    edited(stanza_types=["X25519", "X25519"])
    with pytest.raises(ArchiveIntegrityError, match="recipients and stanzas disagree"):
        verify_archive(path)
    edited(stanza_types=["X25519", "X25519"], recipients=[*original["recipients"], "f" * 16])
    with pytest.raises(ArchiveIntegrityError, match="recipient stanzas differ"):
        verify_archive(path)
    edited(format_version=99)
    with pytest.raises(ArchiveVersionError, match="newer scrubber") as newer:
        verify_archive(path)
    assert newer.value.exit_code is ExitCode.USAGE
    edited(content_sha256="0" * 64)
    verify_archive(path)  # keyless cannot see the content hash ...
    with pytest.raises(ArchiveIntegrityError, match="content hash"):
        verify_archive(path, [IDENTITY])  # ... a full check does
    side.unlink()
    with pytest.raises(SidecarError, match="no sidecar"):
        verify_archive(path)
    assert verify_archive(path, [IDENTITY]).full  # the archive alone is enough with a key


def test_passphrase_archives_verify_with_the_passphrase(config: Path, root: Path) -> None:
    session = _session(config)
    written = write_archive(
        root,
        facts_of(session),
        collect_bundle(config, session.bundle_paths()),
        config,
        [ScryptRecipient("correct horse battery", work_factor=10)],
        created=CREATED,
        scrubber_version="test",
        clear_fields=DEFAULT_CLEAR,
    )
    sidecar = written.entry.sidecar
    assert sidecar is not None
    assert sidecar.recipients == ("passphrase",) and sidecar.stanza_types == ("scrypt",)
    assert verify_archive(written.entry.path, [ScryptIdentity("correct horse battery")]).full
    with pytest.raises(NoIdentityMatchedError):
        verify_archive(written.entry.path, [ScryptIdentity("wrong horse")])


# -------------------------------------------------------------------------------- restore


def test_restore_puts_the_session_back_where_discovery_finds_it(
    config: Path, root: Path, tmp_path: Path
) -> None:
    session = _session(config)
    written = _write(config, root)
    target = tmp_path / "restored"
    before = time.time()
    result = restore_archive(written.entry.path, [IDENTITY], target)
    assert result.transcript == target / "projects" / session.project / f"{session.id}.jsonl"
    (found,) = discover(target).sessions
    assert (found.id, found.project, found.title) == (session.id, session.project, session.title)
    assert found.last_timestamp == session.last_timestamp
    for item in written.manifest.files:
        restored = target / item.path
        assert restored.read_bytes() == (config / item.path).read_bytes()
        assert stat.S_IMODE(restored.stat().st_mode) == 0o600
        assert restored.stat().st_mtime >= before - 1  # mtime now: a full cleanup period
    assert not [p for p in target.iterdir() if p.name.startswith(".scrub-restore-")]


def test_restore_keep_mtime_keeps_the_archived_times(
    config: Path, root: Path, tmp_path: Path
) -> None:
    session = _session(config)
    written = _write(config, root)
    result = restore_archive(written.entry.path, [IDENTITY], tmp_path / "r", keep_mtime=True)
    assert result.transcript.stat().st_mtime_ns == session.transcript.stat().st_mtime_ns


def test_restore_never_overwrites_without_force(config: Path, root: Path) -> None:
    session = _session(config)
    written = _write(config, root)
    archived = session.transcript.read_bytes()
    session.transcript.write_bytes(b'{"type":"user","note":"newer local work"}\n')
    with pytest.raises(RestoreConflictError, match="already in") as caught:
        restore_archive(written.entry.path, [IDENTITY], config)
    assert caught.value.exit_code is ExitCode.USAGE
    assert session.transcript.read_bytes() == b'{"type":"user","note":"newer local work"}\n'
    result = restore_archive(written.entry.path, [IDENTITY], config, force=True)
    assert session.transcript.read_bytes() == archived
    assert result.replaced == (f"projects/{session.project}/{session.id}.jsonl",)
    assert verify_archive(written.entry.path, [IDENTITY]).full
    assert not [p for p in config.iterdir() if p.name.startswith(".scrub-restore-")]


def test_a_file_that_appears_while_restoring_is_kept_and_named_without_its_folder(
    config: Path, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code may write the session between the conflict check and the move: the file is
    left alone, and the error does not name the project folder (its name is the cwd, which can
    quote a token)."""
    session = _session(config)
    written = _write(config, root)
    target = tmp_path / "restored"
    real_conflicts = restore_module._conflicts

    def nothing_there_yet(manifest: object, config_dir: Path) -> tuple[set[str], list[str]]:
        found = real_conflicts(manifest, config_dir)  # type: ignore[arg-type]
        late = config_dir / "projects" / session.project / f"{session.id}.jsonl"
        late.parent.mkdir(parents=True, exist_ok=True)
        late.write_bytes(b'{"type":"user","note":"written meanwhile"}\n')
        return found

    monkeypatch.setattr(restore_module, "_conflicts", nothing_there_yet)
    with pytest.raises(RestoreConflictError, match="appeared while restoring") as caught:
        restore_archive(written.entry.path, [IDENTITY], target)
    message = str(caught.value)
    assert session.project not in message
    assert f"projects/<project folder>/{session.id}.jsonl" in message
    late = target / "projects" / session.project / f"{session.id}.jsonl"
    assert late.read_bytes() == b'{"type":"user","note":"written meanwhile"}\n'


def test_a_damaged_archive_restores_nothing(config: Path, root: Path, tmp_path: Path) -> None:
    path = _write(config, root).entry.path
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 200])  # the last chunk is gone
    target = tmp_path / "restored"
    with pytest.raises(AgePayloadError):
        restore_archive(path, [IDENTITY], target)
    assert _files_under(target) == []
    with pytest.raises(NoIdentityMatchedError):
        restore_archive(_write(config, root, recipients=[OTHER]).entry.path, [IDENTITY], target)
    assert _files_under(target) == []


def test_restore_refuses_a_symlink_leading_out_of_the_config_dir(
    config: Path, root: Path, tmp_path: Path
) -> None:
    written = _write(config, root)
    target = tmp_path / "restored"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target.mkdir()
    (target / "projects").symlink_to(elsewhere)
    with pytest.raises(ArchiveError, match="symlink out of the config dir"):
        restore_archive(written.entry.path, [IDENTITY], target)
    assert list(elsewhere.iterdir()) == []


# -------------------------------------------------------------------------------- decrypt


def test_decrypt_writes_the_plaintext_or_nothing(config: Path, root: Path, tmp_path: Path) -> None:
    path = _write(config, root).entry.path
    out = tmp_path / "plain.tar.gz"
    size = decrypt_file(path, out, [IDENTITY])
    assert size == out.stat().st_size
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    expected = pyrage.decrypt(
        path.read_bytes(), [pyrage.x25519.Identity.from_str(IDENTITY.encode())]
    )
    assert out.read_bytes() == expected
    with pytest.raises(UsageError, match="already exists"):
        decrypt_file(path, out, [IDENTITY])
    damaged = tmp_path / "damaged.age"
    damaged.write_bytes(path.read_bytes()[:-30])
    out2 = tmp_path / "out2"
    with pytest.raises(AgePayloadError):
        decrypt_file(damaged, out2, [IDENTITY])
    assert sorted(p.name for p in tmp_path.iterdir() if "out2" in p.name) == []
    with pytest.raises(NoIdentityMatchedError):
        decrypt_file(path, out2, [OTHER])
    assert not out2.exists()


def test_restore_after_claude_codes_sweep_needs_no_force(config: Path, root: Path) -> None:
    """The sweep deletes the transcript and side folder by their mtime and may leave the
    session's file-history, todos or debug file: identical leftovers are no conflict."""
    session = _session(config)
    written = _write(config, root)
    original = session.transcript.read_bytes()
    session.transcript.unlink()
    leftover = config / "debug" / f"{session.id}.txt"
    old = leftover.stat().st_mtime
    result = restore_archive(written.entry.path, [IDENTITY], config)
    assert session.transcript.read_bytes() == original
    assert result.replaced == ()
    assert leftover.stat().st_mtime > old  # touched: a full cleanup period for the whole bundle
