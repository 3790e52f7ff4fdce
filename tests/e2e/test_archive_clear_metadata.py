"""What archives hold in clear about a session: the manifest inside a redacted `.tar.gz` (anyone
can open it) and the sidecar beside every archive. A title, a tag, a cwd and the project folder
named after it can each quote a secret: there they show what the redaction of the session
shows (the detectors' finds and the values known in the session, the folder name also in its
folder form), while an encrypted archive's own manifest keeps them exactly (it restores the
session as it was). Restore, list and verify still work end to end. Fake values are built at
run time.
"""

from __future__ import annotations

import json
import random
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.keys import generate_identity, write_identity_file
from scrubber.demo import fake_aws_access_key, fake_github_token, fake_npm_token, fake_password
from scrubber.demo.records import SessionWriter, project_folder_name
from tests.conftest import Sandbox

PIECE = 12
META = "0a1b2c3d-1111-4aaa-8bbb-000000000001"  # title and tag quote secrets
IN_CWD = "0a1b2c3d-2222-4aaa-8bbb-000000000002"  # a GitHub token in its cwd
CLEAR_ALL = ["session_id", "project", "cwd", "title", "tags", "first_timestamp", "last_timestamp"]


def _write(config: Path, session: SessionWriter) -> Path:
    folder = config / "projects" / project_folder_name(session.cwd)
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{session.id}.jsonl"
    transcript.write_bytes(session.data())
    return transcript


@pytest.fixture
def planted(sandbox: Sandbox) -> tuple[str, ...]:
    """Two sessions; returns the planted values. The password is known by value only: from a
    file-history snapshot of a .env, which the transcript never reads."""
    rng = random.Random(2027)
    key, npm, token, password = (
        fake_aws_access_key(rng),
        fake_npm_token(rng),
        fake_github_token(rng),
        fake_password(rng),
    )
    sandbox.config.mkdir(parents=True, mode=0o700)
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    meta = SessionWriter(rng, META, "/home/u/work/api", start)
    meta.prompt("look at the deploy")
    meta.say("Done.")
    meta.emit(
        {"type": "custom-title", "customTitle": f"deploy {key} {password}", "sessionId": META}
    )
    meta.emit({"type": "tag", "tag": f"tok-{npm}", "sessionId": META})
    _write(sandbox.config, meta)
    snapshot = sandbox.config / "file-history" / META
    snapshot.mkdir(parents=True)
    (snapshot / "0123abcd@v1").write_text(f"DB_PASSWORD={password}\nDEBUG=1\n")
    in_cwd = SessionWriter(rng, IN_CWD, f"/home/u/w-{token}", start)
    in_cwd.prompt("list files")
    in_cwd.say("ok")
    _write(sandbox.config, in_cwd)
    return key, npm, token, password


def _pieces(secret: str) -> list[str]:
    """Every 12-character piece of a value, as itself and in its folder form."""
    forms = (secret, project_folder_name(secret))
    return [form[i : i + PIECE] for form in forms for i in range(len(form) - PIECE + 1)]


def _leaks(text: str, secrets: tuple[str, ...]) -> list[int]:
    """Which planted values (by their position, never the value) a text holds a piece of."""
    return [i for i, secret in enumerate(secrets) if any(p in text for p in _pieces(secret))]


def _tar_manifest(archive: Path) -> tuple[dict[str, object], list[str], bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        manifest_file = tar.extractfile("manifest.json")
        assert manifest_file is not None
        raw = manifest_file.read()
        contents = b"".join(
            handle.read() for m in members if m.isfile() and (handle := tar.extractfile(m))
        )
    return json.loads(raw), [m.name for m in members], raw + contents


def _by_session(archives: Path, pattern: str) -> dict[str, Path]:
    return {path.parent.name: path for path in archives.rglob(pattern)}


def test_a_redacted_archive_manifest_shows_the_session_redacted_and_restores(
    sandbox: Sandbox, planted: tuple[str, ...]
) -> None:
    done = sandbox.scrub("archive", "--all", "--redact")
    assert done.returncode == 0, done.stderr
    archives = _by_session(sandbox.scrub_home / "archives", "*.tar.gz")
    assert set(archives) == {META, IN_CWD}
    shown: dict[str, dict[str, object]] = {}
    for session, path in archives.items():
        manifest, names, everything = _tar_manifest(path)
        assert manifest["redacted"] is True and manifest["encrypted"] is False
        assert _leaks(everything.decode(errors="replace"), planted) == [], session
        assert _leaks("\n".join(names), planted) == [], session
        # The files are under the project folder's name as the manifest shows it.
        assert manifest["transcript"] == f"projects/{manifest['project']}/{session}.jsonl"
        assert manifest["transcript"] in names
        shown[session] = manifest
    title, tags = shown[META]["title"], shown[META]["tags"]
    assert isinstance(title, str) and title.startswith("deploy [REDACTED:aws-access-key:")
    assert title.count("[REDACTED:") == 2  # the password, known from file-history only
    assert tags == [tags[0]] and str(tags[0]).startswith("tok-[REDACTED:npm-token:")
    assert shown[META]["project"] == "-home-u-work-api"
    assert shown[META]["cwd"] == "/home/u/work/api"
    assert "[REDACTED:" in str(shown[IN_CWD]["project"])
    assert "[REDACTED:" in str(shown[IN_CWD]["cwd"])
    # Keyless listing and verification of the clear archives, then restore: the session
    # lands under the project name its redacted manifest holds.
    listed, verified = sandbox.scrub("archives", "list"), sandbox.scrub("archives", "verify")
    assert listed.returncode == 0 and verified.returncode == 0, (listed.stderr, verified.stderr)
    assert verified.stdout.count("ok ") + verified.stdout.count("ok\t") >= 2
    assert _leaks(listed.stdout + listed.stderr + verified.stdout, planted) == []
    target = sandbox.root / "restored"
    restored = sandbox.scrub("restore", archives[IN_CWD], "--to", target, "--create")
    assert restored.returncode == 0, restored.stderr
    assert _leaks(restored.stdout + restored.stderr, planted) == []
    transcript = target / "projects" / str(shown[IN_CWD]["project"]) / f"{IN_CWD}.jsonl"
    assert transcript.is_file()
    assert _leaks(transcript.read_text(), planted) == []


def test_sidecar_fields_in_clear_show_cwd_project_and_titles_redacted(
    sandbox: Sandbox, planted: tuple[str, ...]
) -> None:
    sandbox.scrub_home.mkdir(parents=True, mode=0o700, exist_ok=True)
    (sandbox.scrub_home / "policy.yaml").write_text(
        f"version: 1\narchive:\n  clear_manifest_fields: {json.dumps(CLEAR_ALL)}\n"
    )
    identity = generate_identity()
    key_file = sandbox.root / "key.txt"
    write_identity_file(key_file, identity, datetime.now(UTC))
    done = sandbox.scrub("archive", "--all", "-r", identity.recipient().encode())
    assert done.returncode == 0, done.stderr
    sidecars = _by_session(sandbox.scrub_home / "archives", "*.tar.gz.age.json")
    assert set(sidecars) == {META, IN_CWD}
    clear = {s: json.loads(p.read_text())["manifest"] for s, p in sidecars.items()}
    for session, path in sidecars.items():
        assert _leaks(path.read_text(), planted) == [], session
    assert str(clear[META]["title"]).count("[REDACTED:") == 2
    assert str(clear[META]["tags"][0]).startswith("tok-[REDACTED:npm-token:")
    assert clear[META]["cwd"] == "/home/u/work/api"
    assert "[REDACTED:" in clear[IN_CWD]["cwd"] and "[REDACTED:" in clear[IN_CWD]["project"]
    listed = sandbox.scrub("archives", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert _leaks(listed.stdout + listed.stderr, planted) == []
    # The encrypted archive itself keeps the session exactly: restore gives back its bytes.
    verified = sandbox.scrub("archives", "verify", "-i", key_file)
    assert verified.returncode == 0, verified.stderr
    original = next((sandbox.config / "projects").glob(f"*/{IN_CWD}.jsonl"))
    target = sandbox.root / "restored"
    restored = sandbox.scrub("restore", sidecars[IN_CWD].with_suffix(""), "-i", key_file,
                             "--to", target, "--create")  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    back = target / "projects" / original.parent.name / original.name
    assert back.read_bytes() == original.read_bytes()


def test_a_redacted_archive_restored_beside_its_original_is_a_conflict(
    sandbox: Sandbox, planted: tuple[str, ...]
) -> None:
    """Its project folder is the shown name, the original is under the real one: one session id
    must not end up in two folders. Without --force nothing moves; with it the original goes
    to the trash first and the redacted session is the only one left."""
    done = sandbox.scrub("archive", IN_CWD, "--redact")
    assert done.returncode == 0, done.stderr
    archive = _by_session(sandbox.scrub_home / "archives", "*.tar.gz")[IN_CWD]
    projects = sandbox.config / "projects"

    def copies() -> list[Path]:
        return sorted(projects.glob(f"*/{IN_CWD}.jsonl"))

    (original,) = copies()
    refused = sandbox.scrub("restore", archive)
    assert refused.returncode != 0
    assert "already in" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert _leaks(refused.stdout + refused.stderr, planted) == []
    assert copies() == [original]
    forced = sandbox.scrub("restore", archive, "--force")
    assert forced.returncode == 0, forced.stderr
    assert _leaks(forced.stdout + forced.stderr, planted) == []
    (restored,) = copies()
    assert restored != original and "[REDACTED:" in restored.parent.name
    assert _leaks(restored.read_text(), planted) == []
    trashed = list((sandbox.scrub_home / "trash" / IN_CWD).rglob(f"{IN_CWD}.jsonl"))
    assert len(trashed) == 1 and trashed[0].parent.name == original.parent.name


def test_an_archive_path_pasted_as_shown_is_found(
    sandbox: Sandbox, planted: tuple[str, ...]
) -> None:
    # An encrypted archive lies under the raw project folder (the layout's contract), and every
    # report prints that folder redacted: the printed path, pasted back, names the archive.
    identity = generate_identity()
    key_file = sandbox.root / "key.txt"
    write_identity_file(key_file, identity, datetime.now(UTC))
    done = sandbox.scrub("archive", IN_CWD, "-r", identity.recipient().encode())
    assert done.returncode == 0, done.stderr
    listed = sandbox.scrub("archives", "list", "--format", "json")
    (entry,) = json.loads(listed.stdout)["archives"]
    shown = str(entry["path"])
    assert "[REDACTED:" in shown and not Path(shown).exists()
    verified = sandbox.scrub("archives", "verify", shown)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    target = sandbox.root / "restored"
    restored = sandbox.scrub("restore", shown, "-i", key_file, "--to", target, "--create")
    assert restored.returncode == 0, restored.stderr
    assert _leaks(verified.stdout + restored.stdout + restored.stderr, planted) == []
    assert [p.name for p in target.glob("projects/*/*.jsonl")] == [f"{IN_CWD}.jsonl"]
