"""The console script's quick exit: the status, the atexit handlers and the output a normal
exit gives, and a running thread still waited for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _run(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        """
        import atexit, sys, threading, time
        from pathlib import Path
        from scrubber.cli.quick_exit import run_and_exit
        out = Path(sys.argv[1])
        """
    ) + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "mark")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        # Buffered, as a console script's output normally is (the dev VMs set it unbuffered).
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
    )


@pytest.mark.parametrize(
    ("raised", "status", "stderr"),
    [("None", 0, ""), ("3", 3, ""), ("'scrub: gone'", 1, "scrub: gone\n"), ("256 + 7", 7, "")],
)
def test_status_is_what_a_normal_exit_gives(
    tmp_path: Path, raised: str, status: int, stderr: str
) -> None:
    done = _run(
        f"""
        def main():
            raise SystemExit({raised})
        run_and_exit(main)
        """,
        tmp_path,
    )
    assert done.returncode == status
    assert done.stderr == stderr


def test_atexit_handlers_run_and_output_is_flushed(tmp_path: Path) -> None:
    done = _run(
        """
        atexit.register(lambda: out.write_text("handler ran"))
        def main():
            sys.stdout.write("x" * 100_000)  # more than any buffer holds
        run_and_exit(main)
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout == "x" * 100_000
    assert (tmp_path / "mark").read_text() == "handler ran"


def test_a_running_thread_is_waited_for(tmp_path: Path) -> None:
    done = _run(
        """
        def late():
            time.sleep(0.3)
            out.write_text("thread finished")
        def main():
            threading.Thread(target=late).start()
        run_and_exit(main)
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert (tmp_path / "mark").read_text() == "thread finished"


def test_closed_stdout_gives_120(tmp_path: Path) -> None:
    done = _run(
        """
        import os
        def main():
            sys.stdout.write("never read")
            os.close(1)
        run_and_exit(main)
        """,
        tmp_path,
    )
    assert done.returncode == 120
