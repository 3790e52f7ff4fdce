"""Registering scrubber with Claude Code: pure settings merges (settings.py), the settings
file (settings_file.py), the launchers (launchers.py), the install record (record.py), the
nightly schedule (scheduling.py), and the install and uninstall runs (run.py)."""
