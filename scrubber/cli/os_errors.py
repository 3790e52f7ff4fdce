"""How an error from the system that reached the top of a command is told to the user.

Commands turn the errors they expect into ScrubberErrors with their own words; what is left (a
disk that filled up in the middle of `restore` or `pin`, a folder of ours that is not ours, a
number too large for a date) must still read as a plain message with the path, never as
"internal error". Nothing here quotes input: an OSError carries the system's text for its
errno and the path, a ValueError's text is not shown.
"""

from __future__ import annotations

import errno

from scrubber.errors import ScrubberError, UsageError, path_error_hint

# The disk or the filesystem refused to take more: the same words redact and archive use.
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def os_error_as_scrubber_error(error: OSError) -> ScrubberError | None:
    """A ScrubberError (exit 3) for an OSError with an errno, None for one without (its text
    could be anything: it stays an internal error)."""
    if error.errno is None:
        return None
    text = error.strerror or errno.errorcode.get(error.errno, "I/O error")
    where = f"{error.filename}: " if error.filename is not None else ""
    hint = getattr(error, "hint", None)
    if error.errno in _FULL:
        target = f" {error.filename}" if error.filename is not None else ""
        return ScrubberError(f"cannot write{target}: {text}", path_error_hint(error))
    if isinstance(hint, str):
        return ScrubberError(f"{where}{text}", hint)
    return ScrubberError(f"{where}{text}", path_error_hint(error, writing=False))


def overflow_as_scrubber_error() -> ScrubberError:
    """An OverflowError: a count of days or a size too large for a date or a number in C.
    Every known way in is checked where it is parsed; this is the net behind them."""
    return UsageError(
        "a number given is too large (out of range for a date or a size)",
        "counts of days are at most 100000 (about 274 years)",
    )
