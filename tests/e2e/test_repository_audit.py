"""The repository passes its own audit: fake secrets in tests are built at run time, and the few
intentional literals carry detect-secrets' `pragma: allowlist secret` marker."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrubber.detection.registry import build_scanner
from scrubber.policy.model import Policy
from scrubber.usecases.audit import audit
from scrubber.usecases.audit_targets import targets_from_paths

REPO = Path(__file__).resolve().parents[2]
SOURCES = ["scrubber", "tests", "bench", "hooks", "policies", ".ci", ".claude-plugin"]
FILES = ["README.md", "install.sh", "pyproject.toml"]


def _paths() -> list[Path]:
    found: list[Path] = []
    for name in SOURCES:
        folder = REPO / name
        if folder.is_dir():
            found.extend(
                p
                for p in folder.rglob("*")
                if p.is_file()
                and not p.is_symlink()
                and "node_modules" not in p.parts
                and "__pycache__" not in p.parts
                and p.suffix in {".py", ".sh", ".md", ".json", ".yaml", ".toml", ""}
                and "out" not in p.relative_to(REPO).parts[:2]
            )
    found.extend(REPO / f for f in FILES if (REPO / f).is_file())
    return found


@pytest.mark.slow
def test_the_repository_holds_no_secret_by_its_own_audit(tmp_path: Path) -> None:
    scanner = build_scanner(Policy.default(), tmp_path, env={})
    report = audit(targets_from_paths(_paths()), scanner)
    places = sorted({(f.file, f.line, f.kind) for f in report.findings})
    assert report.files, "nothing was scanned"
    assert places == [], "findings (file, line, kind): " + repr(places[:20])
