"""The SessionEnd hook: validate, record a job, start a detached worker, exit 0.

Claude Code gives all SessionEnd hooks 1.5 s together and kills what runs over (reference note,
"Hooks"), so this module does the least that makes the work durable and imports only the
standard library, `scrubber.paths`, `scrubber.errors` and the spool. It never prints to stdout,
never exits non-zero (a non-zero exit makes Claude Code print a failure notice), and says what it
did in `$SCRUB_HOME/log/hook.log`.

The worker runs in a new session (so the kill of the hook's process group does not reach it),
with stdin on /dev/null, stdout and stderr on `log/worker.log`, and no other inherited
descriptor: a worker holding Claude Code's pipe would make it wait for the worker to finish.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scrubber import paths
from scrubber.durable import UnsafeFolderError
from scrubber.hooks.detach import spawn_detached
from scrubber.hooks.files import append_log_line, valid_session_id
from scrubber.hooks.spool import EnqueueResult, Job, Spool
from scrubber.hooks.status_state import plain_word

TYPE_CHECKING = False  # `typing` costs start-up time; only the type checker needs it
if TYPE_CHECKING:
    from typing import BinaryIO

MAX_INPUT_BYTES = 1 << 20  # the payload is a few hundred bytes; anything huge is not ours
HOOK_LOG = "hook.log"
WORKER_LOG = "worker.log"
WORKER_MODULE = "scrubber.hooks.worker"
# The worker needs these; the hook only checks that they can be found (no import).
WORKER_REQUIREMENTS = ("yaml", "cryptography", "detect_secrets")
DEFAULT_VENV = Path(".local") / "share" / "scrubber" / "venv"
ENV_VENV = "SCRUB_VENV"
ENV_NO_WORKER = "SCRUB_NO_WORKER"  # "1": queue only (tests, or a user who drains by cron)


def hook_log(home: Path) -> Path:
    return home / "log" / HOOK_LOG


def worker_log(home: Path) -> Path:
    return home / "log" / WORKER_LOG


class Rejected(Exception):
    """The payload cannot become a job; the message says why (no payload content in it)."""


@dataclass(frozen=True, slots=True)
class Payload:
    session_id: str
    transcript_path: str
    reason: str
    cwd: str | None


def parse_payload(data: bytes) -> Payload:
    """Validate the hook's stdin; raises Rejected with a reason fit for the log."""
    if not data.strip():
        raise Rejected("empty input")
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise Rejected("input is not JSON") from None
    if not isinstance(value, dict):
        raise Rejected("input is not a JSON object")
    event = value.get("hook_event_name")
    if event is not None and event != "SessionEnd":
        raise Rejected("not a SessionEnd event")
    session_id = value.get("session_id")
    if not isinstance(session_id, str) or not valid_session_id(session_id):
        raise Rejected("missing or malformed session_id")
    transcript = value.get("transcript_path")
    if not isinstance(transcript, str) or not transcript.strip():
        raise Rejected("missing transcript_path")
    reason = value.get("reason")
    cwd = value.get("cwd")
    return Payload(
        session_id=session_id,
        transcript_path=transcript,
        reason=reason if isinstance(reason, str) and plain_word(reason) else "other",
        cwd=cwd if isinstance(cwd, str) else None,
    )


def check_transcript_path(transcript: str, config: Path) -> Path:
    """The transcript must be a `.jsonl` file under the config dir's `projects/`: the worker
    archives and rewrites what a job names, so a job must not be able to name anything else."""
    path = Path(transcript)
    if not path.is_absolute():
        raise Rejected("transcript_path is not absolute")
    if path.suffix != ".jsonl":
        raise Rejected("transcript_path is not a .jsonl file")
    root = os.path.realpath(paths.projects_dir(config))
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root or real == root:
        raise Rejected("transcript_path is outside the config directory's projects/")
    return path


def worker_command(
    env: Mapping[str, str], worker_python: str | None = None
) -> tuple[list[str], dict[str, str]] | None:
    """How to start the worker: an interpreter that can import scrubber and its dependencies.

    `worker_python` is given by the launchers `scrub install` writes (they run in scrubber's
    own environment). The plugin's shim runs under whatever `python3` is on PATH: then the
    environment install.sh made is preferred, else this interpreter if it has what the worker
    needs (with this package's folder on PYTHONPATH). None: nothing can run the worker.
    """
    child_env = dict(env)
    if worker_python:
        return [worker_python, "-m", WORKER_MODULE], child_env
    venvs = []
    if env.get(ENV_VENV):
        venvs.append(Path(env[ENV_VENV]).expanduser())
    if env.get("XDG_DATA_HOME"):  # install.sh's default is ${XDG_DATA_HOME:-~/.local/share}/…
        venvs.append(Path(env["XDG_DATA_HOME"]).expanduser() / "scrubber" / "venv")
    home = env.get("HOME")
    if home:
        venvs.append(Path(home) / DEFAULT_VENV)
    for venv in venvs:
        python = venv / "bin" / "python"
        if os.access(python, os.X_OK):
            return [str(python), "-m", WORKER_MODULE], child_env
    import importlib.util  # only on this path (the plugin's shim without scrubber's venv)

    if all(importlib.util.find_spec(name) is not None for name in WORKER_REQUIREMENTS):
        root = str(Path(__file__).resolve().parents[2])
        existing = child_env.get("PYTHONPATH")
        child_env["PYTHONPATH"] = root + (os.pathsep + existing if existing else "")
        return [sys.executable, "-m", WORKER_MODULE], child_env
    return None


def _log(home: Path, message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        append_log_line(hook_log(home), f"{stamp} session-end: {message}", home=home)
    except UnsafeFolderError:
        # $SCRUB_HOME (or its log/) is refused: no log can be written there, so the one line
        # goes to stderr (Claude Code's debug output), and `scrub doctor` says why.
        with contextlib.suppress(OSError, ValueError):
            print(f"scrubber SessionEnd hook: {message} (see `scrub doctor`)", file=sys.stderr)
    except OSError:
        pass


def run(
    data: bytes,
    env: Mapping[str, str],
    *,
    worker_python: str | None = None,
    now: float | None = None,
) -> str:
    """Queue the job and start the worker; returns the log message (raises Rejected)."""
    home = paths.scrub_home(env)
    config = paths.config_dir(env)
    payload = parse_payload(data)
    transcript = check_transcript_path(payload.transcript_path, config)
    try:
        st = transcript.stat()
        size: int | None = st.st_size
        mtime_ns: int | None = st.st_mtime_ns
        seen = f"{st.st_size} bytes"
    except OSError:
        size = mtime_ns = None
        seen = "transcript not there (yet)"
    job = Job(
        session_id=payload.session_id,
        transcript_path=str(transcript),
        reason=payload.reason,
        cwd=payload.cwd,
        ended_at=time.time() if now is None else now,
        transcript_size=size,
        transcript_mtime_ns=mtime_ns,
    )
    paths.ensure_private_dir(home, home)  # the env given, not the process's
    result = Spool(home).enqueue(job)
    message = f"session {job.session_id} {result.value} (reason {job.reason}, {seen})"
    if env.get(ENV_NO_WORKER) == "1":
        return message + "; worker not started (SCRUB_NO_WORKER=1)"
    command = worker_command(env, worker_python)
    if command is None:
        return (
            message + "; the worker cannot run: scrubber is not installed for any Python here "
            "(run install.sh; `scrub doctor` explains). The job stays queued."
        )
    argv, child_env = command
    pid = spawn_detached(argv, child_env, worker_log(home), home, home=home)
    if result is EnqueueResult.DUPLICATE:
        return message + f"; worker {pid} started to check the queue"
    return message + f"; worker {pid} started"


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: BinaryIO | None = None,
    env: Mapping[str, str] | None = None,
    worker_python: str | None = None,
) -> int:
    """Entry point of the shim and of `scrub hook session-end`: always returns 0."""
    environment = os.environ if env is None else env
    home = paths.scrub_home(environment)
    try:
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = b"" if stream.isatty() else stream.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise Rejected("input larger than 1 MiB")
        _log(home, run(data, environment, worker_python=worker_python))
    except Rejected as why:
        _log(home, f"ignored: {why}")
    except UnsafeFolderError as error:
        # Our own folder, refused: its path and what is wrong with it are ours to say (the
        # path is $SCRUB_HOME or one below it, never the payload's).
        _log(home, f"{error.filename} {error.strerror}; nothing queued")
    except Exception as error:  # a hook must never fail Claude Code
        # The type and errno only: an exception's text can quote a path or the payload.
        detail = f" (errno {error.errno})" if isinstance(error, OSError) else ""
        _log(home, f"internal error {type(error).__name__}{detail}; nothing queued")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
