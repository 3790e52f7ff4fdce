"""Moved to archive.layout, sidecar, write, verify, decrypt and restore; kept for
bench/bench_archive.py until its renovation."""

from scrubber.archive.layout import list_archives as list_archives  # noqa: PLC0414
from scrubber.archive.restore import restore_archive as restore_archive  # noqa: PLC0414
from scrubber.archive.verify import verify_archive as verify_archive  # noqa: PLC0414
