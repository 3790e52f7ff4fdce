"""`scrub redact` and `scrub verify` end to end, asserting on the files written.

Real processes for what only a process shows (a copy written and verified, a config-shaped
tree, `--all` rewriting global side files, an in-place run, the lock held by another process);
argument errors and variations run through the same entry point in this process.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import DemoManifest, build_demo_config, demo_manifest
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.redaction.structure import same_structure
from scrubber.usecases.redact_in_place import file_lock

pytestmark = pytest.mark.slow  # a few real processes

SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
PROJECT = "-home-demo-work-shop-api"
SHOP_FILE = f"projects/{PROJECT}/{SHOP}.jsonl"
THINKING_LINE = 10


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def surviving(data: bytes, manifest: DemoManifest) -> list[str]:
    return sorted({s.kind for s in manifest.secrets for n in s.needles() if n.encode() in data})


def fresh_world(sandbox_factory: Callable[[str], Any], name: str) -> Any:
    world = sandbox_factory(name)
    build_demo_config(world.config.parent)
    return world


@pytest.fixture(scope="module")
def manifest() -> DemoManifest:
    return demo_manifest()


@pytest.fixture(scope="module")
def world(sandbox_factory: Callable[[str], Any]) -> Any:
    return fresh_world(sandbox_factory, "redact-cli")


@pytest.fixture(scope="module")
def one_copy(world: Any) -> tuple[Path, Path, Any]:
    """`scrub redact FILE --output OUT` as a real process, the input's hash checked around it."""
    source = world.config / SHOP_FILE
    out = world.root / "out" / "copy.jsonl"
    before = hashlib.sha256(source.read_bytes()).hexdigest(), source.stat().st_mtime_ns
    done = world.scrub("redact", source, "--output", out)
    assert done.returncode == 0, done.stderr
    assert (hashlib.sha256(source.read_bytes()).hexdigest(), source.stat().st_mtime_ns) == before
    return source, out, done


# -- one file --------------------------------------------------------------------------------


def test_a_copy_keeps_every_line_and_its_structure(one_copy: tuple[Path, Path, Any]) -> None:
    source, out, done = one_copy
    before, after = source.read_bytes().split(b"\n"), out.read_bytes().split(b"\n")
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed
    for i in changed:
        assert same_structure(json.loads(before[i]), json.loads(after[i])), i + 1
    assert f"-> {out}: " in done.stdout and " secrets replaced in " in done.stdout


def test_no_planted_secret_survives_in_the_copy(
    one_copy: tuple[Path, Path, Any], manifest: DemoManifest
) -> None:
    source, out, _ = one_copy
    assert surviving(source.read_bytes(), manifest)  # the original holds several kinds
    assert surviving(out.read_bytes(), manifest) == []
    thinking = out.read_bytes().split(b"\n")[THINKING_LINE - 1]
    assert PLACEHOLDER_RE.search(json.loads(thinking)["message"]["content"][0]["thinking"])


def test_the_copy_is_private_and_keeps_the_mtime(one_copy: tuple[Path, Path, Any]) -> None:
    source, out, _ = one_copy
    assert out.stat().st_mode & 0o777 == 0o600
    assert out.stat().st_mtime_ns == source.stat().st_mtime_ns
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # no temp file left


def test_verify_and_check_prove_a_good_copy(
    one_copy: tuple[Path, Path, Any], world: Any, scrub_in: Callable[..., Any]
) -> None:
    source, out, _ = one_copy
    done = world.scrub("verify", out, "--original", source, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert (doc["ok"], doc["findings"], doc["structure_mismatches"]) == (True, 0, [])
    assert doc["lines"] == source.read_bytes().count(b"\n")
    check = scrub_in(world, "redact", "--check", out, "--original", source)
    assert check.returncode == 0 and check.stdout.rstrip().endswith("verified")
    assert scrub_in(world, "verify", source).returncode == 1  # the original is not redacted


def test_verify_says_how_the_line_counts_differ(
    one_copy: tuple[Path, Path, Any], world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    source, out, _ = one_copy
    short = tmp_path / "short.jsonl"
    short.write_bytes(out.read_bytes().split(b"\n", 1)[0] + b"\n")
    total = source.read_bytes().count(b"\n")
    done = scrub_in(world, "verify", short, "--original", source)
    assert done.returncode == 1
    assert f"NO, the original has {total} lines, this file 1" in done.stdout
    assert "NO, lines \n" not in done.stdout


@pytest.mark.parametrize("damage", ["secret", "structure"])
def test_verify_fails_on_a_damaged_copy(
    one_copy: tuple[Path, Path, Any],
    world: Any,
    manifest: DemoManifest,
    scrub_in: Callable[..., Any],
    tmp_path: Path,
    damage: str,
) -> None:
    source, out, _ = one_copy
    lines = out.read_bytes().split(b"\n")
    index = next(i for i, x in enumerate(lines) if b'"content":"The checkout' in x)
    record = json.loads(lines[index])
    if damage == "secret":
        token = next(s.value for s in manifest.secrets if s.kind == "stripe-key")
        record["message"]["content"] = f"key {token}"
    else:
        record["isSidechain"] = 1
    lines[index] = json.dumps(record, separators=(",", ":")).encode()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines))
    for args in (
        ("verify", bad, "--original", source),
        ("redact", "--check", bad, "--original", source),
    ):
        done = scrub_in(world, *args, "--format", "json")
        assert done.returncode == 1, args
        doc = json.loads(done.stdout)
        assert doc["ok"] is False
        if damage == "secret":
            assert doc["finding_lines"] == [index + 1]
        else:
            assert doc["structure_mismatches"] == [index + 1]


def test_redacting_a_copy_again_changes_nothing(
    one_copy: tuple[Path, Path, Any], world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    _, out, _ = one_copy
    again = tmp_path / "again.jsonl"
    done = scrub_in(world, "redact", out, "--output", again, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert again.read_bytes() == out.read_bytes()
    (entry,) = json.loads(done.stdout)["files"]
    assert (entry["replaced"], entry["lines_changed"]) == (0, 0)


def test_thinking_keep(
    world: Any, scrub_in: Callable[..., Any], tmp_path: Path, manifest: DemoManifest
) -> None:
    source = world.config / SHOP_FILE
    out = tmp_path / "kept.jsonl"
    done = scrub_in(world, "redact", source, "--output", out, "--thinking", "keep")
    assert done.returncode == 0, done.stderr
    line = THINKING_LINE - 1
    assert out.read_bytes().split(b"\n")[line] == source.read_bytes().split(b"\n")[line]
    assert "left in thinking text" in done.stdout
    others = out.read_bytes().split(b"\n")
    del others[line]
    assert surviving(b"\n".join(others), manifest) == []


# -- config-shaped trees ---------------------------------------------------------------------


def test_session_writes_a_tree_shaped_like_the_config_dir(
    world: Any, manifest: DemoManifest
) -> None:
    before = tree_hashes(world.config)
    done = world.scrub("redact", "--session", SHOP[:8], "--format", "json")
    assert done.returncode == 0, done.stderr
    assert tree_hashes(world.config) == before  # the originals are untouched
    dest = world.scrub_home / "redacted"
    written = sorted(tree_hashes(dest))
    ours = sorted(f for f in manifest.files if SHOP in f)
    assert written == ours
    assert any("/tool-results/" in f for f in written)
    assert any(f.startswith("file-history/") for f in written)
    for rel in written:
        assert surviving((dest / rel).read_bytes(), manifest) == [], rel
        assert (dest / rel).stat().st_mode & 0o777 == 0o600
    report = json.loads(done.stdout)
    assert report["schema"] == "scrubber.redact/1"
    assert {Path(f["dest"]).relative_to(dest).as_posix() for f in report["files"]} == set(ours)
    assert sum(f["replaced"] for f in report["files"]) > 10


def test_all_copies_every_session_and_the_global_side_files_without_touching_originals(
    sandbox_factory: Callable[[str], Any], manifest: DemoManifest
) -> None:
    # Contracts: `--all` copies history.jsonl, shell-snapshots/ and paste-cache/ into DEST
    # like the rest; only --in-place rewrites originals (it used to rewrite them in place).
    world = fresh_world(sandbox_factory, "redact-all")
    config = world.config
    before = tree_hashes(config)
    out = world.root / "tree"
    done = world.scrub("redact", "--all", "--output", out)
    assert done.returncode == 0, done.stderr
    assert tree_hashes(config) == before, "a copy changed an original"
    global_files = {
        "history.jsonl",
        next(f for f in before if f.startswith("shell-snapshots/")),
    }
    session_files = {f for f in manifest.files if f.startswith(("projects/", "file-history/",
                                                                 "todos/", "debug/", "session-env/"))}  # fmt: skip
    assert set(tree_hashes(out)) >= session_files | global_files
    copied = session_files | global_files
    leftovers = {rel: surviving((out / rel).read_bytes(), manifest) for rel in copied}
    assert {rel: kinds for rel, kinds in leftovers.items() if kinds} == {}


def test_a_destination_inside_projects_is_refused(world: Any, scrub_in: Callable[..., Any]) -> None:
    before = tree_hashes(world.config)
    inside = world.config / "projects" / PROJECT / "redacted"
    for args in (
        ("redact", "--session", SHOP, "--output", inside),
        ("redact", world.config / SHOP_FILE, world.config / "history.jsonl", "--output", inside),
        ("redact", "--session", SHOP, "--output", world.config / "projects"),
    ):
        done = scrub_in(world, *args)
        assert done.returncode == 2, args
        assert "projects/" in done.stderr
    assert tree_hashes(world.config) == before
    assert not inside.exists()


def test_argument_errors(world: Any, scrub_in: Callable[..., Any]) -> None:
    cases = [
        (("redact",), "nothing to redact"),
        (("redact", world.root / "missing.jsonl", "--output", world.root / "x"), "no such file"),
        (("redact", world.config / SHOP_FILE, "--session", SHOP), "not both"),
        (("redact", world.config / SHOP_FILE, "--in-place", "--thinking", "redact"), "thinking"),
        (("redact", world.config / SHOP_FILE, "--format", "yaml"), "--format"),
        (("verify", world.root / "missing.jsonl"), "no such file"),
    ]
    for args, message in cases:
        done = scrub_in(world, *args)
        assert done.returncode == 2, args
        assert message in done.stderr, args
        assert "Traceback" not in done.stderr


def test_an_unwritable_output_folder_is_a_clear_error(
    world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    done = scrub_in(world, "redact", world.config / SHOP_FILE, "--output", blocker / "out.jsonl")
    assert done.returncode == 3
    assert done.stderr.startswith(f"scrub: error: cannot write {blocker}")
    assert "nothing was written" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_file_already_at_output_is_replaced_only_with_force(
    world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    source = world.config / SHOP_FILE
    kept = tmp_path / "notes.jsonl"
    kept.write_bytes(b"someone's notes\n")
    refused = scrub_in(world, "redact", source, "--output", kept)
    assert refused.returncode == 2
    assert "not empty" in refused.stderr and "--force" in refused.stderr
    assert kept.read_bytes() == b"someone's notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.jsonl"]  # no temp left
    # What `mktemp` made for a script holds nothing to lose; --force replaces the rest.
    empty = tmp_path / "tmp.XXXX"
    empty.write_bytes(b"")
    assert scrub_in(world, "redact", source, "--output", empty).returncode == 0
    assert scrub_in(world, "redact", source, "--output", kept, "--force").returncode == 0
    assert kept.read_bytes() == empty.read_bytes() != b""
    assert scrub_in(world, "verify", kept, "--original", source).returncode == 0
    # Into a folder the user gave: the same, file by file.
    folder = tmp_path / "out"
    folder.mkdir()
    assert scrub_in(world, "redact", source, "--output", folder).returncode == 0
    [placed] = folder.rglob(source.name)
    placed.write_bytes(b"important\n")  # what someone keeps there since
    into = scrub_in(world, "redact", source, "--output", folder)
    assert into.returncode == 2 and "not empty" in into.stderr and "--force" in into.stderr
    assert placed.read_bytes() == b"important\n"
    assert scrub_in(world, "redact", source, "--output", folder, "--force").returncode == 0
    assert placed.read_bytes() == kept.read_bytes()
    # The input as its own output: the error says what is wrong, not "add --force".
    itself = scrub_in(world, "redact", kept, "--output", kept)
    assert itself.returncode == 2 and "--force" not in itself.stderr


def test_two_inputs_with_one_destination_are_refused_before_anything_is_written(
    world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    for name, source in (("a", SHOP_FILE), ("b", SHOP_FILE)):
        (tmp_path / name).mkdir()
        shutil.copy(world.config / source, tmp_path / name / "x.jsonl")
    out = tmp_path / "out"
    done = scrub_in(world, "redact", tmp_path / "a" / "x.jsonl", tmp_path / "b" / "x.jsonl",
                    "--output", out)  # fmt: skip
    assert done.returncode == 2 and "would both be copied to" in done.stderr
    assert not out.exists()


# -- in place --------------------------------------------------------------------------------


def test_in_place_keeps_mode_owner_mtime_and_thinking(
    sandbox_factory: Callable[[str], Any], manifest: DemoManifest
) -> None:
    world = fresh_world(sandbox_factory, "redact-in-place")
    path = world.config / SHOP_FILE
    path.chmod(0o640)
    os.utime(path, ns=(1_767_000_000_000_000_000, 1_767_000_000_000_000_000))
    if os.geteuid() == 0:
        os.chown(path, 2345, 2346)
    before = path.stat()
    original = path.read_bytes().split(b"\n")
    done = world.scrub("redact", path, "--in-place", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "--in-place rewrites the transcripts themselves" in done.stderr
    after = path.stat()
    assert (after.st_mode, after.st_uid, after.st_gid, after.st_mtime_ns) == (
        before.st_mode,
        before.st_uid,
        before.st_gid,
        before.st_mtime_ns,
    )
    rewritten = path.read_bytes().split(b"\n")
    assert len(rewritten) == len(original)
    assert rewritten[THINKING_LINE - 1] == original[THINKING_LINE - 1]
    (entry,) = json.loads(done.stdout)["files"]
    assert entry["left_in_thinking"] == 1 and entry["replaced"] > 0
    assert surviving(path.read_bytes(), manifest) == ["dotenv-value"]  # the thinking line only
    assert not [p for p in path.parent.iterdir() if "scrub-tmp" in p.name]


def test_in_place_refuses_a_symlink(
    world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(world.config / SHOP_FILE)
    before = tree_hashes(world.config)
    for args in (("--in-place",), ("--output", tmp_path / "out.jsonl")):
        done = scrub_in(world, "redact", link, *args)
        assert done.returncode == 3, args
        assert done.stderr.startswith(f"scrub: error: {link}: is a symbolic link")
    assert tree_hashes(world.config) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl"]


def test_in_place_with_an_output_is_refused_and_nothing_is_rewritten(
    world: Any, scrub_in: Callable[..., Any], tmp_path: Path
) -> None:
    before = tree_hashes(world.config)
    out = tmp_path / "wanted-copy.jsonl"
    done = scrub_in(world, "redact", world.config / SHOP_FILE, "--in-place", "--output", out)
    assert done.returncode == 2, done.stderr
    assert "--in-place rewrites the originals and writes no copy" in done.stderr
    assert tree_hashes(world.config) == before
    assert not out.exists()


def test_a_second_in_place_run_is_busy(sandbox_factory: Callable[[str], Any]) -> None:
    world = fresh_world(sandbox_factory, "redact-busy")
    path = world.config / SHOP_FILE
    before = path.read_bytes()
    # The lock another run would hold: same folder, same file.
    with file_lock(world.scrub_home / "state" / "locks", path):
        done = world.scrub("redact", path, "--in-place")
    assert done.returncode == 4, done.stderr
    assert "another scrubber run is rewriting it" in done.stderr
    assert path.read_bytes() == before
    shutil.rmtree(world.root)
