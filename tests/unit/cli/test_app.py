"""The lazy command table in scrubber/cli/app.py must match what each module registers."""

from __future__ import annotations

import importlib
import subprocess
import sys

import typer

from scrubber.cli.app import COMMAND_MODULES, build_app


def _registered(module: str) -> tuple[str, ...]:
    app = typer.Typer()
    importlib.import_module(f"scrubber.cli.{module}").register(app)
    names = [c.name or c.callback.__name__ for c in app.registered_commands]  # type: ignore[union-attr]
    names += [g.name or g.typer_instance.info.name for g in app.registered_groups]  # type: ignore[misc]
    return tuple(str(n) for n in names)


def test_every_module_registers_exactly_the_commands_the_table_names() -> None:
    for module, names in COMMAND_MODULES.items():
        assert _registered(module) == names, module


def test_command_names_are_unique() -> None:
    names = [n for group in COMMAND_MODULES.values() for n in group]
    assert len(names) == len(set(names))


def test_building_for_one_command_imports_only_its_module() -> None:
    code = (
        "import sys; from scrubber.cli.app import build_app; build_app('audit'); "
        "print(','.join(m for m in sys.modules if m.startswith('scrubber.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.strip().split(","))
    assert "scrubber.cli.audit_cmd" in loaded
    assert not {"scrubber.cli.archive_cmd", "scrubber.cli.retention_cmd"} & loaded


def test_version_loads_no_command_module() -> None:
    code = (
        "import sys\nfrom scrubber.cli.app import main\ntry:\n    main(['--version'])\n"
        "except SystemExit:\n    pass\n"
        "print('LOADED=' + ','.join(m for m in sys.modules if m.endswith('_cmd')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "scrub " in out.stdout
    assert out.stdout.strip().endswith("LOADED=")


def test_the_whole_app_lists_every_command() -> None:
    app = build_app()
    names = {c.name for c in app.registered_commands} | {
        g.typer_instance.info.name
        for g in app.registered_groups  # type: ignore[misc]
    }
    assert {"audit", "redact", "archive", "archives", "retention", "install", "hook"} <= names
