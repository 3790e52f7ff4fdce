"""Moved to the package scrubber.install; kept for bench/bench_hooks.py until its renovation."""

from scrubber.install.report import InstallOptions as InstallOptions  # noqa: PLC0414
from scrubber.install.run import install as install  # noqa: PLC0414
