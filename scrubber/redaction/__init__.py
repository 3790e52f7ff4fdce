"""Rewriting transcripts with secrets replaced, changing string leaves only."""
