"""`scrub search` argument handling through the real CLI: a pattern that starts with '-' (after
`--`; the error never repeats it), a --project or --dir that names nothing, a catastrophic
regex refused up front, Ctrl-C in the middle of a long match (exit 130, no traceback, no worker
left running), and a reader that closes the pipe early."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from scrubber.demo import build_demo_config
from tests.conftest import CliResult, Sandbox

pytestmark = pytest.mark.slow  # real processes

# Not a secret: a shape that starts with dashes, as a PEM header does.
DASHED = "-----" + "BEGIN"
# No top-level literal, so every line is decoded; on a long run of `a` without a `b`, `re`
# tries every way to share it among the seven repeats (the static check allows it: no repeat
# is nested). A search that only Ctrl-C ends.
SLOW_REGEX = "a*" * 7 + "b"


@pytest.fixture(scope="module")
def box(sandbox_factory: Callable[[str], Sandbox]) -> Sandbox:
    world = sandbox_factory("search-args")
    build_demo_config(world.config.parent)
    return world


def _refused(done: CliResult, *words: str) -> None:
    assert done.returncode == 2, done.output
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr


def test_a_dashed_pattern_goes_after_double_dash_and_the_error_never_repeats_it(
    box: Sandbox,
) -> None:
    bare = box.scrub("search", DASHED)
    _refused(bare, "scrub search -- PATTERN")
    assert DASHED not in bare.output and "BEGIN" not in bare.output
    after = box.scrub("search", "--format", "json", "--", DASHED)
    assert after.returncode == 0, after.stderr
    assert '"total_hits": 0' not in after.stdout


def test_words_given_apart_are_refused_without_repeating_them(box: Sandbox) -> None:
    done = box.scrub("search", "connection", "refusedword")
    _refused(done, "quote a phrase")
    assert "refusedword" not in done.output


def test_a_project_that_names_nothing_is_a_usage_error_listing_the_known_ones(
    box: Sandbox,
) -> None:
    done = box.scrub("search", "password", "--project", "no-such-project")
    _refused(done, "no session matches --project no-such-project", "-home-demo-work-shop-api")
    known = box.scrub("search", "password", "--project", "shop-api")
    assert known.returncode == 0, known.stderr


def test_an_archive_folder_that_does_not_exist_is_refused(box: Sandbox) -> None:
    missing = box.root / "no-such-archives"
    _refused(box.scrub("search", "x1y", "--archives", "--dir", missing), "no such folder")
    _refused(box.scrub("search", "x1y", "--dir", box.root), "are for --archives")


def test_a_catastrophic_regex_is_refused_at_once(box: Sandbox) -> None:
    done = box.scrub("search", "--regex", "(a+)+b", timeout=60)
    _refused(done, "take for ever", "a++")
    assert "(a+)+b" not in done.stderr


def _ours(marker: str) -> list[int]:
    """Processes whose environment holds `marker` (this test's sandbox path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_ctrl_c_stops_a_long_match_with_exit_130_and_no_worker_left(
    sandbox_factory: Callable[[str], Sandbox], transcript_builder: type
) -> None:
    world = sandbox_factory("search-sigint")
    folder = world.config / "projects" / "-home-u-work-slow"
    # Eight sessions, over 2 x 16 MB in all: two workers search them, each one taking the next
    # session when it is done (a worker that a Ctrl-C reaches in a match printed a traceback).
    padding = "filler " * (5 << 17)
    for _ in range(8):
        builder = transcript_builder(cwd="/home/u/work/slow")
        builder.prompt("a" * 48 + "c")
        builder.say(padding)
        builder.write(folder / f"{builder.session_id}.jsonl")
    process = subprocess.Popen(
        [sys.executable, "-m", "scrubber.cli", "search", "--regex", SLOW_REGEX],
        env=world.environ(SCRUB_JOBS="2"),
        cwd=world.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        # Started, scanner built, both workers forked (this process, the killable child and
        # its two workers), then a moment for them to be deep in the match. Waited for rather
        # than slept: on a loaded machine a fixed 4 s could end while this process still built
        # its scanner, where the Ctrl-C is only noticed once that is done.
        deadline = time.monotonic() + 60
        while len(_ours(str(world.root))) < 4 and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        assert len(_ours(str(world.root))) >= 4, "the search's two workers never started"
        time.sleep(1)
        assert process.poll() is None, process.communicate()
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, stderr
    assert b"Traceback" not in stderr and b"KeyboardInterrupt" not in stderr
    deadline = time.monotonic() + 5
    while _ours(str(world.root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _ours(str(world.root)) == []


def test_a_reader_that_stops_early_is_no_error(box: Sandbox) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `| head -1` does once it has its line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "scrubber.cli", "search", "password"],
            env=box.environ(),
            cwd=box.root,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")


def test_help_documents_double_dash(box: Sandbox) -> None:
    done = box.scrub("search", "--help")
    assert done.returncode == 0 and "scrub search -- '-----BEGIN'" in done.stdout


def test_a_config_dir_that_does_not_exist_is_refused(
    sandbox_factory: Callable[[str], Sandbox],
) -> None:
    bare = sandbox_factory("search-no-config")  # CLAUDE_CONFIG_DIR names a folder never made
    _refused(bare.scrub("search", "x1y"), "is not a Claude Code config directory")
    assert not bare.config.exists()
