"""Retention: which sessions to keep, archive, trash and purge."""
