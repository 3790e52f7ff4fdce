"""A progress line on stderr for long scans, only when stderr is a terminal (never under --quiet)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from scrubber.cli.quiet import is_quiet


class ProgressLine:
    """Call with byte counts; draws `label  42%  120.3/286.0 MB  55 MB/s` at most 10 times a second."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._enabled = total > 8 << 20 and ProgressLine.can_draw(self._stream)
        self._total = max(total, 1)
        self._done = 0
        self._label = label
        self._started = time.monotonic()
        self._last = 0.0

    @staticmethod
    def can_draw(stream: TextIO | None = None) -> bool:
        """Whether a progress line would be drawn on `stream` (stderr by default) at all."""
        stream = stream or sys.stderr
        return stream.isatty() and not is_quiet()

    def __call__(self, nbytes: int) -> None:
        self._done += nbytes
        if not self._enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        elapsed = max(now - self._started, 1e-6)
        pct = min(100, self._done * 100 // self._total)
        rate = self._done / elapsed / 1e6
        self._stream.write(
            f"\r{self._label}  {pct:3d}%  {self._done / 1e6:.1f}/{self._total / 1e6:.1f} MB"
            f"  {rate:.0f} MB/s "
        )
        self._stream.flush()

    def close(self) -> None:
        if self._enabled:
            self._stream.write("\r\033[K")
            self._stream.flush()
