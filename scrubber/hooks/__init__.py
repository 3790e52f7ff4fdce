"""Claude Code integration: the SessionEnd hook, its worker, and the status line."""
