"""Sessions in Claude Code's on-disk format (as observed in 2.1.332), backdated, for retention
tests: a transcript whose records carry real envelopes and timestamps, its side folder
(subagents, tool-results), file-history, session-env, debug, todos and tasks, and mtimes set to
the time of the last record (or any time a test wants)."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

VERSION = "2.1.332"


def iso(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def project_folder(cwd: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def _stamp(path: Path, moment: datetime) -> None:
    value = moment.timestamp()
    os.utime(path, (value, value), follow_symlinks=False)


@dataclass
class WrittenSession:
    session_id: str
    project: str
    cwd: str
    last: datetime
    transcript: Path
    paths: list[Path] = field(default_factory=list)  # every path of the bundle, transcript first

    def relative(self, config: Path) -> list[str]:
        return sorted(p.relative_to(config).as_posix() for p in self.paths)


def write_session(
    config: Path,
    *,
    cwd: str,
    last: datetime,
    session_id: str | None = None,
    title: str | None = None,
    tags: tuple[str, ...] = (),
    turns: int = 2,
    side: bool = True,
    mtime: datetime | None = None,
    seed: int = 0,
) -> WrittenSession:
    """Write one session whose newest record is at `last`; files get mtime `mtime or last`."""
    digest = hashlib.sha256(f"session {seed}".encode()).digest()
    session_id = session_id or str(uuid.UUID(bytes=digest[:16], version=4))
    project = project_folder(cwd)
    folder = config / "projects" / project
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{session_id}.jsonl"
    clock = last - timedelta(minutes=2 * turns + 1)
    parent: str | None = None
    lines: list[str] = []
    envelope = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": VERSION,
        "gitBranch": "main",
    }
    for turn in range(turns):
        for role in ("user", "assistant"):
            record_id = str(uuid.uuid4())
            clock += timedelta(minutes=1)
            content: Any = (
                f"please look at step {turn}"
                if role == "user"
                else [{"type": "text", "text": f"done with step {turn}"}]
            )
            message: dict[str, Any] = {"role": role, "content": content}
            if role == "assistant":
                message.update(
                    id=f"msg_{uuid.uuid4().hex[:24]}", model="claude-sonnet-4-5", type="message"
                )
            lines.append(
                _dump(
                    {
                        "parentUuid": parent,
                        **envelope,
                        "type": role,
                        "message": message,
                        "uuid": record_id,
                        "timestamp": iso(clock),
                    }
                )
            )
            parent = record_id
    if title is not None:
        lines.append(_dump({"type": "custom-title", "customTitle": title, "sessionId": session_id}))
    for tag in tags:
        lines.append(_dump({"type": "tag", "tag": tag, "sessionId": session_id}))
    # The newest record, exactly at `last`.
    lines.append(
        _dump(
            {
                "parentUuid": parent,
                **envelope,
                "type": "system",
                "subtype": "turn_duration",
                "uuid": str(uuid.uuid4()),
                "timestamp": iso(last),
            }
        )
    )
    transcript.write_text("\n".join(lines) + "\n")
    transcript.chmod(0o600)
    written = WrittenSession(session_id, project, cwd, last, transcript, [transcript])
    if side:
        side_dir = folder / session_id
        agent = side_dir / "subagents" / "agent-a1b2c3.jsonl"
        agent.parent.mkdir(parents=True, exist_ok=True)
        agent.write_text(
            _dump(
                {
                    **envelope,
                    "type": "user",
                    "isSidechain": True,
                    "message": {"role": "user", "content": "sub"},
                    "uuid": str(uuid.uuid4()),
                    "parentUuid": None,
                    "timestamp": iso(last),
                }
            )
            + "\n"
        )
        result = side_dir / "tool-results" / "toolu_01.txt"
        result.parent.mkdir(parents=True, exist_ok=True)
        result.write_text("a long tool output\n" * 10)
        history = config / "file-history" / session_id / "3f2a9c@v1"
        history.parent.mkdir(parents=True, exist_ok=True)
        history.write_text("the file before the edit\n")
        env = config / "session-env" / session_id / "env"
        env.parent.mkdir(parents=True, exist_ok=True)
        env.write_text("PATH=/usr/bin\n")
        debug = config / "debug" / f"{session_id}.txt"
        debug.parent.mkdir(parents=True, exist_ok=True)
        debug.write_text("debug log\n")
        todo = config / "todos" / f"{session_id}-agent-{session_id}.json"
        todo.parent.mkdir(parents=True, exist_ok=True)
        todo.write_text("[]\n")
        task = config / "tasks" / session_id / "1.json"
        task.parent.mkdir(parents=True, exist_ok=True)
        task.write_text("{}\n")
        for top in (side_dir, history.parent, env.parent, debug, todo, task.parent):
            written.paths.append(top)
        for path in (agent, result, history, env, debug, todo, task):
            _stamp(path, mtime or last)
        for path in (
            agent.parent,
            result.parent,
            side_dir,
            history.parent,
            env.parent,
            task.parent,
        ):
            _stamp(path, mtime or last)
    _stamp(transcript, mtime or last)
    return written


def tree(root: Path) -> dict[str, str]:
    """Every file and link under `root` (relative path -> content or link target), for
    comparing layouts before and after."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*files, *(d for d in dirs if (Path(folder) / d).is_symlink())):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            found[rel] = (
                "-> " + str(path.readlink())
                if path.is_symlink()
                else path.read_text(errors="replace")
            )
    return found
