"""End-to-end tests with the real Claude Code CLI, run offline against a fake Messages API."""
