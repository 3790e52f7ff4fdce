"""The `scrub` command line (typer lives here and nowhere else)."""
