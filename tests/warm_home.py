"""Compiled prefilter databases shared by the test homes of one test process.

Compiling the gates' hyperscan databases costs about a second of CPU per `scrub` process that
scans, and every test starts from a fresh SCRUB_HOME (a new fingerprint key, so the product's
MAC'd cache of another home cannot be reused): the suite's `scrub` processes spent half their
CPU compiling the same databases again. A home a test has not given a key of its own is seeded
with one shared key and every database compiled under it so far (`seed`), as a home that has
scanned before holds them; what a run compiled is taken back afterwards (`keep`).

The product's cold path (no key, no cache, a cache that does not verify) is still what a test
meets when it makes its own key or cache, names a home none of the helpers run, or passes
`WARM_OFF` in the child's environment; tests/unit/detection/test_prefilter_cache.py and the
planted-cache tests cover it.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from scrubber import paths

# In a child's environment: run it with the home as the test left it (no seeding).
WARM_OFF = "SCRUBBER_TEST_COLD_HOME"

_lock = threading.Lock()
_template: Path | None = None


def _template_home() -> Path:
    global _template  # noqa: PLW0603 - one template per test process, made on first use
    if _template is None:
        _template = Path(tempfile.mkdtemp(prefix="scrub-warm-home-"))  # 0700
        atexit.register(shutil.rmtree, _template, True)
    return _template


def seed(home: Path, env: Mapping[str, str] | None = None) -> None:
    """Give `home` the shared key and databases, unless it has a key (its own: ours would
    replace it) or `env` says `WARM_OFF`. Creates the home (0700) when there is something to
    seed it with."""
    if env is not None and env.get(WARM_OFF):
        return
    with _lock:
        template = _template_home()
        key = paths.fingerprint_key_file(template)
        target_key = paths.fingerprint_key_file(home)
        if not key.exists() or target_key.exists() or target_key.is_symlink():
            return
        if home.is_symlink() or (home.exists() and not home.is_dir()):
            return
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        target_key.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copy2(key, target_key)
        _copy_databases(paths.prefilter_cache_dir(template), paths.prefilter_cache_dir(home))


def keep(home: Path) -> None:
    """Take the databases `home` compiled into the template: the first home to scan gives the
    template its key; a home with another key is left alone (its databases would not verify)."""
    with _lock:
        template = _template_home()
        key = paths.fingerprint_key_file(home)
        template_key = paths.fingerprint_key_file(template)
        if not key.is_file() or key.is_symlink():
            return
        if not template_key.exists():
            template_key.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            shutil.copy2(key, template_key)
        elif template_key.read_bytes() != key.read_bytes():
            return
        _copy_databases(paths.prefilter_cache_dir(home), paths.prefilter_cache_dir(template))


def _copy_databases(source: Path, target: Path) -> None:
    if not source.is_dir() or source.is_symlink():
        return
    for database in source.glob("*.hsdb"):
        if database.is_file() and not database.is_symlink():
            target.mkdir(mode=0o700, parents=True, exist_ok=True)
            for folder in (target, target.parent):
                folder.chmod(0o700)
            if not (target / database.name).exists():
                shutil.copy2(database, target / database.name)
