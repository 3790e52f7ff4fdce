"""`scrub doctor` for the plugin's hook: is it registered, and can anything run the worker.

The plugin's SessionEnd hook is not in `settings.json` (Claude Code reads it from the plugin),
and when the `scrub` package is not installed for any Python the hook still queues each session
and starts no worker (ARCHITECTURE.md, "SessionEnd"). Doctor must then say so, not "not
registered" and "draining" (issue 14, item 15).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scrubber.hooks.session_end import DEFAULT_VENV, ENV_VENV, WORKER_REQUIREMENTS, hook_log

PLUGIN_NAME = "scrubber"


def _names(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(name) for name, on in value.items() if on]
    if isinstance(value, list):
        return [str(name) for name in value]
    return []


def plugin_enabled(settings: Mapping[str, Any], config: Path) -> bool:
    """The scrubber plugin is enabled in the user settings or installed for this config dir
    (`plugins/installed_plugins.json`, where `/plugin install` records it)."""
    names = _names(settings.get("enabledPlugins"))
    try:
        installed = json.loads((config / "plugins" / "installed_plugins.json").read_text("utf-8"))
    except (OSError, ValueError):
        installed = None
    if isinstance(installed, dict):
        names += _names(installed.get("plugins", installed))
    return any(name.split("@")[0] == PLUGIN_NAME for name in names)


def hook_has_run(home: Path) -> bool:
    """A SessionEnd hook of ours has run here (it logs every run), whoever registered it."""
    return hook_log(home).exists()


def plugin_worker_python(env: Mapping[str, str]) -> str | None:
    """The interpreter the plugin's hook would start the worker with (as
    `session_end.worker_command` finds it), or None when scrubber is installed for none."""
    venvs = []
    if env.get(ENV_VENV):
        venvs.append(Path(env[ENV_VENV]).expanduser())
    if env.get("XDG_DATA_HOME"):  # where install.sh puts it then
        venvs.append(Path(env["XDG_DATA_HOME"]) / "scrubber" / "venv")
    if env.get("HOME"):
        venvs.append(Path(env["HOME"]) / DEFAULT_VENV)
    for venv in venvs:
        if os.access(venv / "bin" / "python", os.X_OK):
            return str(venv / "bin" / "python")
    python = shutil.which("python3", path=env.get("PATH"))
    if python is None:
        return None
    probe = "import importlib.util as u, sys; sys.exit(any(u.find_spec(n) is None for n in %r))"
    try:
        done = subprocess.run(
            [python, "-c", probe % (WORKER_REQUIREMENTS,)],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return python if done.returncode == 0 else None
