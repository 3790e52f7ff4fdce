"""Moved to scrubber.usecases.archive; kept for hooks.worker and bench/bench_archive.py until
their renovation."""

from scrubber.usecases.archive import Encryption as Encryption  # noqa: PLC0414
from scrubber.usecases.archive import archive_sessions as archive_sessions  # noqa: PLC0414
from scrubber.usecases.archive import resolve_encryption as resolve_encryption  # noqa: PLC0414
