"""scrubber: keep Claude Code session transcripts from becoming a leak."""

__version__ = "0.1.0"
