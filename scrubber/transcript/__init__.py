"""What a Claude Code session file is: stdlib only (orjson is used when installed)."""
