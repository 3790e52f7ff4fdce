"""The error of an archive payload that is not a bundle we wrote (its own module so that the
tar reader and the bundle format can both raise it without importing each other)."""

from __future__ import annotations

from scrubber.errors import ScrubberError

__all__ = ["BundleError"]


class BundleError(ScrubberError):
    """An archive's payload is not a bundle we wrote, or does not match its manifest (exit 3)."""
