"""The session bundle: what goes into an archive's payload, and what a reader accepts back.

Bundles are built from demo config dirs (Claude Code's real layout); hostile tar streams are
built by hand with tarfile, each breaking one rule the reader must enforce.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import stat
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.bundle import (
    MANIFEST_NAME,
    BundleChangedError,
    BundleError,
    BundleFile,
    BundleVersionError,
    Manifest,
    SessionFacts,
    collect_bundle,
    content_digest,
    make_manifest,
    safe_relative_path,
    unpack_bundle,
    write_bundle,
)
from scrubber.demo import build_demo_config
from scrubber.errors import ExitCode
from scrubber.transcript.sessions import SessionInfo, discover
from scrubber.usecases.archive import facts_of

CREATED = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
# The scripted demo session with every kind of side file (side folder, file-history,
# session-env, debug, todos).
FULL_SESSION_PREFIX = "e3e70682"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return build_demo_config(tmp_path / "home")


def _session(config: Path, prefix: str = FULL_SESSION_PREFIX) -> SessionInfo:
    (found,) = [s for s in discover(config).sessions if s.id.startswith(prefix)]
    return found


def _manifest(config: Path, session: SessionInfo) -> Manifest:
    contents = collect_bundle(config, session.bundle_paths())
    return make_manifest(
        facts_of(session), contents, created=CREATED, scrubber_version="test", recipients=["ab" * 8]
    )


def _payload(config: Path, manifest: Manifest) -> bytes:
    out = io.BytesIO()
    write_bundle(out, manifest, config)
    return out.getvalue()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------- collecting


def test_collect_lists_every_file_of_the_bundle_with_its_hash(config: Path) -> None:
    session = _session(config)
    contents = collect_bundle(config, session.bundle_paths())
    on_disk = sorted(
        p.relative_to(config).as_posix()
        for top in session.bundle_paths()
        for p in ([top] if top.is_file() else top.rglob("*"))
        if p.is_file() and not p.is_symlink()
    )
    assert sorted(f.path for f in contents.files) == on_disk
    for item in contents.files:
        data = (config / item.path).read_bytes()
        assert item.size == len(data)
        assert item.sha256 == _sha(data)
        assert item.mode == 0o600
    # The side folder, its tool-results, file-history and session-env folders are kept as
    # folders, so that empty ones survive a round trip.
    assert f"projects/{session.project}/{session.id}" in {d.path for d in contents.dirs}
    assert f"file-history/{session.id}" in {d.path for d in contents.dirs}
    kinds = {f.path.split("/")[0] for f in contents.files}
    assert kinds == {"projects", "file-history", "session-env", "debug", "todos"}


def test_symlinks_in_a_bundle_are_skipped_not_followed(config: Path, tmp_path: Path) -> None:
    session = _session(config)
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of any session")
    (session.side_dir / "tool-results" / "link.txt").symlink_to(outside)
    contents = collect_bundle(config, session.bundle_paths())
    rel = f"projects/{session.project}/{session.id}/tool-results/link.txt"
    assert rel not in {f.path for f in contents.files}
    assert [(s.path, s.reason) for s in contents.skipped] == [(rel, "symlink (not followed)")]


def test_a_path_outside_the_config_dir_is_refused(config: Path, tmp_path: Path) -> None:
    stray = tmp_path / "stray.txt"
    stray.write_text("x")
    with pytest.raises(BundleError, match="not inside the config directory"):
        collect_bundle(config, [stray])


def test_a_manifest_needs_the_transcript(config: Path) -> None:
    session = _session(config)
    without = [p for p in session.bundle_paths() if p != session.transcript]
    contents = collect_bundle(config, without)
    with pytest.raises(BundleError, match="transcript"):
        make_manifest(facts_of(session), contents, created=CREATED, scrubber_version="t")


@pytest.mark.parametrize(
    "name", ["", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "a\x00b"]
)
def test_safe_relative_path_refuses_escapes(name: str) -> None:
    with pytest.raises(BundleError):
        safe_relative_path(name)


def test_content_digest_does_not_depend_on_order(config: Path) -> None:
    manifest = _manifest(config, _session(config))
    files = list(manifest.files)
    assert content_digest(files) == content_digest(reversed(files))
    changed = [files[0].__class__(files[0].path, files[0].size, "0" * 64, 0o600, 0), *files[1:]]
    assert content_digest(changed) != content_digest(files)


# ------------------------------------------------------------------------------- writing


def test_payload_is_gzip_tar_with_manifest_first_then_transcript(config: Path) -> None:
    session = _session(config)
    manifest = _manifest(config, session)
    payload = _payload(config, manifest)
    assert payload[:2] == b"\x1f\x8b"
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        assert names[0] == MANIFEST_NAME
        assert names[1] == f"projects/{session.project}/{session.id}.jsonl"
        assert all(not n.startswith("/") and ".." not in n.split("/") for n in names)
        assert {m.name for m in members if m.isfile()} - {MANIFEST_NAME} == {
            f.path for f in manifest.files
        }
        assert all(m.isfile() or m.isdir() for m in members)
        for item in manifest.files:
            extracted = tar.extractfile(item.path)
            assert extracted is not None
            assert extracted.read() == (config / item.path).read_bytes()
        raw = tar.extractfile(MANIFEST_NAME)
        assert raw is not None
        stored = json.loads(raw.read())
    assert stored["session_id"] == session.id
    assert stored["project"] == session.project
    assert stored["cwd"] == session.cwd
    assert stored["last_timestamp"] == session.last_timestamp.isoformat()  # type: ignore[union-attr]
    assert stored["first_timestamp"] == session.first_timestamp.isoformat()  # type: ignore[union-attr]
    assert stored["recipients"] == ["ab" * 8]
    assert stored["content_sha256"] == manifest.content_sha256
    assert stored["sizes"] == {
        "total": sum(f.size for f in manifest.files),
        "transcript": session.size,
        "files": len(manifest.files),
    }
    assert stored["format_version"] == 1
    assert stored["scrubber_version"] == "test"


def test_manifest_round_trips(config: Path) -> None:
    manifest = _manifest(config, _session(config))
    assert Manifest.from_bytes(manifest.to_bytes()) == manifest


def test_a_file_changed_after_hashing_is_caught(config: Path) -> None:
    session = _session(config)
    manifest = _manifest(config, session)
    data = session.transcript.read_bytes()
    # Same size, different bytes: only the second hash can notice.
    session.transcript.write_bytes(data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])
    with pytest.raises(BundleChangedError, match="changed while"):
        _payload(config, manifest)


def test_a_file_that_shrank_or_vanished_is_caught(config: Path) -> None:
    session = _session(config)
    manifest = _manifest(config, session)
    session.transcript.write_bytes(session.transcript.read_bytes()[:100])
    with pytest.raises(BundleChangedError):
        _payload(config, manifest)
    session.transcript.unlink()
    with pytest.raises(BundleChangedError, match="disappeared"):
        _payload(config, manifest)


def test_a_file_that_grew_is_caught(config: Path) -> None:
    session = _session(config)
    manifest = _manifest(config, session)
    with session.transcript.open("ab") as handle:
        handle.write(b'{"type":"late"}\n')
    with pytest.raises(BundleChangedError):
        _payload(config, manifest)


# ----------------------------------------------------------------------------- unpacking


def test_unpack_writes_the_bundle_back_privately(config: Path, tmp_path: Path) -> None:
    manifest = _manifest(config, _session(config))
    dest = tmp_path / "dest"
    dest.mkdir()
    assert unpack_bundle(io.BytesIO(_payload(config, manifest)), dest) == manifest
    for item in manifest.files:
        target = dest / item.path
        assert target.read_bytes() == (config / item.path).read_bytes()
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert target.stat().st_mtime_ns == item.mtime_ns
    for folder in manifest.dirs:
        assert stat.S_IMODE((dest / folder.path).stat().st_mode) == 0o700


def test_unpack_without_dest_only_checks(config: Path, tmp_path: Path) -> None:
    manifest = _manifest(config, _session(config))
    before = set(tmp_path.rglob("*"))
    assert unpack_bundle(io.BytesIO(_payload(config, manifest))) == manifest
    assert set(tmp_path.rglob("*")) == before


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return gzip.compress(raw.getvalue())


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = 0o600
    return info, data


def _small_manifest(files: dict[str, bytes], **extra: object) -> bytes:
    facts = SessionFacts("s1", "p1")
    value = Manifest(
        session=facts,
        files=tuple(
            BundleFile(path, len(data), _sha(data), 0o600, 0) for path, data in files.items()
        ),
        dirs=(),
        created=CREATED,
        scrubber_version="t",
    ).to_json()
    value.update(extra)
    return json.dumps(value).encode()


TRANSCRIPT = "projects/p1/s1.jsonl"
GOOD = {TRANSCRIPT: b'{"type":"user"}\n'}


def _hostile(
    *members: tuple[tarfile.TarInfo, bytes | None], files: dict[str, bytes] = GOOD
) -> bytes:
    return _tar([_file(MANIFEST_NAME, _small_manifest(files)), *members])


def _link(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def test_a_well_formed_hand_made_bundle_is_accepted(tmp_path: Path) -> None:
    payload = _hostile(_file(TRANSCRIPT, GOOD[TRANSCRIPT]))
    manifest = unpack_bundle(io.BytesIO(payload), tmp_path)
    assert manifest.session.session_id == "s1"
    assert (tmp_path / TRANSCRIPT).read_bytes() == GOOD[TRANSCRIPT]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (_hostile(_file(TRANSCRIPT, b'{"type":"USER"}\n')), "does not match its manifest hash"),
        (_hostile(_file(TRANSCRIPT, b"short")), "size other than"),
        (_hostile(), "lacks 1 member"),
        (
            _hostile(_file(TRANSCRIPT, GOOD[TRANSCRIPT]), _file("extra.txt", b"x")),
            "not listed in the manifest",
        ),
        (
            _hostile(_file(TRANSCRIPT, GOOD[TRANSCRIPT]), _file(TRANSCRIPT, GOOD[TRANSCRIPT])),
            "appears twice",
        ),
        (_hostile(_file("../escape.txt", b"x")), "unsafe path"),
        (_hostile(_file("/etc/cron.d/x", b"x")), "unsafe path"),
        (_hostile(_link(TRANSCRIPT, tarfile.SYMTYPE, "/etc/passwd")), "a symlink"),
        (_hostile(_link(TRANSCRIPT, tarfile.LNKTYPE, "/etc/passwd")), "a hard link"),
        (_hostile(_link(TRANSCRIPT, tarfile.CHRTYPE)), "a device"),
        (_hostile(_link(TRANSCRIPT, tarfile.FIFOTYPE)), "a FIFO"),
        (_tar([_file(TRANSCRIPT, GOOD[TRANSCRIPT])]), "does not start with manifest.json"),
        (_tar([_file(MANIFEST_NAME, b"{not json")]), "not valid JSON"),
        (_tar([_file(MANIFEST_NAME, b'{"schema": "other"}')]), "not a scrubber archive manifest"),
        (b"not gzip at all", "not a readable gzip tar stream"),
        (gzip.compress(b"gzip, but no tar inside" * 40), "gzip tar stream"),
    ],
    ids=[
        "altered-content",
        "wrong-size",
        "missing-member",
        "unlisted-member",
        "duplicate",
        "dotdot",
        "absolute",
        "symlink",
        "hardlink",
        "device",
        "fifo",
        "no-manifest",
        "manifest-not-json",
        "foreign-manifest",
        "not-gzip",
        "not-tar",
    ],
)
def test_hostile_or_damaged_payloads_are_refused(
    payload: bytes, message: str, tmp_path: Path
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(BundleError, match=message):
        unpack_bundle(io.BytesIO(payload), dest)
    # Nothing outside the staging folder, and no link or device inside it.
    assert not (tmp_path / "escape.txt").exists()
    for path in dest.rglob("*"):
        assert path.is_dir() or stat.S_ISREG(path.lstat().st_mode)


def test_manifest_paths_are_checked_too() -> None:
    payload = _tar([_file(MANIFEST_NAME, _small_manifest({**GOOD, "../x": b"x"}))])
    with pytest.raises(BundleError, match="unsafe path"):
        unpack_bundle(io.BytesIO(payload))


def test_a_newer_manifest_format_is_refused_with_exit_2() -> None:
    payload = _tar([_file(MANIFEST_NAME, _small_manifest(GOOD, format_version=2))])
    with pytest.raises(BundleVersionError, match="newer scrubber") as caught:
        unpack_bundle(io.BytesIO(payload))
    assert caught.value.exit_code is ExitCode.USAGE


def test_unpack_never_overwrites_inside_dest(config: Path, tmp_path: Path) -> None:
    manifest = _manifest(config, _session(config))
    dest = tmp_path / "dest"
    target = dest / manifest.files[0].path
    target.parent.mkdir(parents=True)
    target.write_bytes(b"already here")
    with pytest.raises(FileExistsError):
        unpack_bundle(io.BytesIO(_payload(config, manifest)), dest)
    assert target.read_bytes() == b"already here"
