"""Policies: what to detect, redact, archive and keep (model.py), read from YAML (load.py)."""
