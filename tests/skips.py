"""Why a test skips, said the same way everywhere: what to install or set to run it.

Paths outside the repository are never named as such: the shared folder is `../shared`, the
project's own folder beside the repository, which a user's clone does not have.
"""

from __future__ import annotations

INSTALL_AGE = "install the age CLI (apt-get install age): age and age-keygen are not on PATH"
INSTALL_HYPERSCAN = (
    "install hyperscan (pip install hyperscan; wheels exist for Linux x86_64): it is not importable"
)
INSTALL_PYRAGE = "install pyrage (pip install -e '.[test]'): it is not importable"
INSTALL_NODE = "install Node.js (apt-get install nodejs): node is not on PATH"
INSTALL_SYSTEMD_ANALYZE = (
    "install systemd (apt-get install systemd): systemd-analyze is not on PATH"
)
INSTALL_FLOCK_SHUF = (
    "install util-linux and coreutils (apt-get install util-linux coreutils): flock or shuf is "
    "not on PATH"
)

INSTALL_UNSHARE = (
    "install util-linux (apt-get install util-linux): unshare is not on PATH, to run scrub as a "
    "user other than root"
)
NO_USER_NAMESPACES = (
    "this machine refuses unprivileged user namespaces (`unshare -U` fails): allow them "
    "(sysctl kernel.unprivileged_userns_clone=1) to run scrub as a user other than root"
)


def needs_shared(what: str) -> str:
    """A test that reads the project's shared folder, which only developers and CI have."""
    return f"needs ../shared/{what} (the project's shared folder): absent in a user's clone"
