"""Where `scrub export -o` may write, through the real CLI: `-o -` is stdout; nothing that
exists is replaced without --force, and with it only a regular file (never a device, FIFO,
folder or symbolic link); never through a symlinked folder; never inside Claude Code's config
directory or scrubber's own folders, whatever path leads there; `-q` drops the notes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from scrubber.demo import build_demo_config
from tests.conftest import CliResult, Sandbox

SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"


@pytest.fixture(scope="module")
def box(sandbox_factory: Callable[[str], Sandbox]) -> Sandbox:
    world = sandbox_factory("export-output")
    build_demo_config(world.config.parent)
    return world


@pytest.fixture
def run(box: Sandbox, scrub_in: Callable[..., CliResult]) -> Callable[..., CliResult]:
    """`scrub export SHOP ARGS` through the real entry point, in this process, from box.root."""

    def export(*args: str | os.PathLike[str]) -> CliResult:
        before = Path.cwd()
        os.chdir(box.root)
        try:
            return scrub_in(box, "export", SHOP, *args)
        finally:
            os.chdir(before)

    return export


def _refused(done: CliResult, *words: str) -> None:
    assert done.returncode == 2, done.output
    assert done.stdout == "" and "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr


@pytest.mark.slow  # a real process: its stdout takes bytes
def test_dash_is_stdout_and_no_file_named_dash(box: Sandbox) -> None:
    done = box.scrub("export", SHOP, "-o", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# checkout-500\n")
    assert not (box.root / "-").exists()


def test_stdout_without_a_byte_layer_gets_the_text(run: Callable[..., CliResult]) -> None:
    # A program that embeds scrub (or a capture like this one) may give a text-only stdout.
    done = run()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# checkout-500\n") and "Traceback" not in done.stderr


def test_an_existing_file_needs_force_and_is_then_replaced_privately(
    box: Sandbox, run: Callable[..., CliResult]
) -> None:
    target = box.root / "existing.md"
    target.write_text("mine\n")
    target.chmod(0o644)
    _refused(run("-o", target), "already exists", "--force")
    assert target.read_text() == "mine\n"
    done = run("-o", target, "--force")
    assert done.returncode == 0, done.stderr
    assert target.read_text().startswith("# checkout-500\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert f"replaced {target}" in done.stderr


def test_a_new_file_is_created_0600(box: Sandbox, run: Callable[..., CliResult]) -> None:
    target = box.root / "fresh.html"
    done = run("--format", "html", "-o", target)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in box.root.iterdir() if p.name.startswith(".fresh")] == []


def test_a_device_is_never_replaced_even_with_force(
    box: Sandbox, run: Callable[..., CliResult]
) -> None:
    # A device node of our own (what /dev/null is), never the real one: a regression here
    # would replace the machine's /dev/null with a file.
    device = box.root / "null-device"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root (CAP_MKNOD)")
    for extra in ((), ("--force",)):
        _refused(run("-o", device, *extra), "character device", "-o -")
    assert stat.S_ISCHR(device.lstat().st_mode)


def test_a_fifo_a_folder_and_a_symlink_are_never_replaced(
    box: Sandbox, run: Callable[..., CliResult]
) -> None:
    fifo, folder, link = box.root / "pipe", box.root / "folder", box.root / "link.md"
    os.mkfifo(fifo)
    folder.mkdir()
    aim = box.root / "aim.md"
    aim.write_text("kept\n")
    link.symlink_to(aim)
    _refused(run("-o", fifo, "--force"), "FIFO")
    _refused(run("-o", folder, "--force"), "folder")
    _refused(run("-o", link, "--force"), "symbolic link")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and folder.is_dir() and link.is_symlink()
    assert aim.read_text() == "kept\n"


def test_a_symlinked_folder_is_not_followed(box: Sandbox, run: Callable[..., CliResult]) -> None:
    real = box.root / "real-folder"
    real.mkdir()
    (box.root / "via-link").symlink_to(real)
    _refused(run("-o", box.root / "via-link" / "out.md"), "symbolic link", str(real))
    assert list(real.iterdir()) == []


def test_nothing_is_written_inside_the_config_dir_or_scrubbers_folders(
    box: Sandbox, run: Callable[..., CliResult]
) -> None:
    history = box.config / "history.jsonl"
    before = history.read_bytes()
    _refused(run("-o", history, "--force"), "config directory")
    assert history.read_bytes() == before
    _refused(run("-o", box.config / "new.md"), "config directory")
    assert not (box.config / "new.md").exists()
    # The same folder reached through a link made by this user.
    (box.root / "claude-link").symlink_to(box.config)
    _refused(run("-o", box.root / "claude-link" / "x.md"), "symbolic link")
    box.scrub_home.mkdir(mode=0o700, exist_ok=True)
    _refused(run("-o", box.scrub_home / "state.md"), "scrubber's own folder")
    # A symlink named as the file, pointing into the config dir.
    pointer = box.root / "pointer.md"
    pointer.symlink_to(box.config / "settings-copy.md")
    _refused(run("-o", pointer), "config directory")
    assert not (box.config / "settings-copy.md").exists()


def test_quiet_drops_the_notes_but_not_the_errors(
    box: Sandbox, run: Callable[..., CliResult]
) -> None:
    target = box.root / "quiet.md"
    loud = run("-o", box.root / "loud.md")
    assert loud.returncode == 0 and "scrub: note:" in loud.stderr and "wrote" in loud.stderr
    done = run("-q", "-o", target)
    assert done.returncode == 0
    assert (done.stdout, done.stderr) == ("", "")
    assert target.read_text().startswith("# checkout-500\n")
    _refused(run("-q", "-o", target), "already exists")


@pytest.mark.slow
def test_help_documents_dash_and_force(box: Sandbox) -> None:
    done = box.scrub("export", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--force" in text and "-o - writes to stdout" in text
