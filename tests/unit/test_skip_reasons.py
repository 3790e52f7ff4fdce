"""A skipped test says what to install or set to run it, and names no path outside the
repository (the shared folder is `../shared`, "absent in a user's clone").

Reads every test module's `pytest.skip(...)`, `pytest.importorskip(...)` and
`pytest.mark.skipif(..., reason=...)`: literal reasons, f-strings (their literal parts), and names
from tests/skips.py, whose constants are checked here too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests import skips

TESTS = Path(__file__).resolve().parents[1]
# Said of a missing tool or package: such a reason must say what to install (or set).
MISSING = re.compile(r"not (?:on PATH|installed|importable|found)", re.I)
SAYS_HOW = re.compile(r"\binstall\b|SCRUB_CLAUDE_BIN|\bset\b", re.I)
# Path constants of the tests that point outside the repository: never formatted into a reason.
OUTSIDE = {"TESTKIT", "SHARED", "LEAKBENCH", "LEAKBENCH_DATA", "CARRIERS"}


def _calls(tree: ast.AST) -> list[tuple[str, ast.expr | None, int]]:
    """(which skip, its reason expression or None, line) for every skip in a module."""
    found: list[tuple[str, ast.expr | None, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        keyword = {k.arg: k.value for k in node.keywords}
        if name == "pytest.skip":
            found.append((name, node.args[0] if node.args else keyword.get("reason"), node.lineno))
        elif name in {"pytest.importorskip", "pytest.mark.skipif"}:
            found.append((name, keyword.get("reason"), node.lineno))
    return found


def _problems(reason: ast.expr | None, kind: str) -> list[str]:
    if reason is None:
        return [] if kind == "pytest.mark.skipif" else ["gives no reason"]
    if isinstance(reason, ast.Name) and hasattr(skips, reason.id):
        return []  # checked below, with the others in tests/skips.py
    if isinstance(reason, ast.Call) and ast.unparse(reason.func) == "needs_shared":
        return []
    texts = [n.value for n in ast.walk(reason) if isinstance(n, ast.Constant)]
    formatted = {n.id for n in ast.walk(reason) if isinstance(n, ast.Name)}
    problems = [f"formats {name}, a path outside the repository" for name in formatted & OUTSIDE]
    text = " ".join(t for t in texts if isinstance(t, str))
    if MISSING.search(text) and not SAYS_HOW.search(text):
        problems.append(f"says something is missing but not what to install: {text!r}")
    if "../" in text and "absent in a user's clone" not in text:
        problems.append(f"names a path outside the repository: {text!r}")
    return problems


def test_skip_reasons_say_what_to_install_and_name_no_outside_path() -> None:
    problems = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for kind, reason, line in _calls(tree):
            for problem in _problems(reason, kind):
                problems.append(f"{path.relative_to(TESTS)}:{line}: {kind} {problem}")
    assert problems == []


def test_the_shared_reasons_say_what_to_install() -> None:
    for name in dir(skips):
        value = getattr(skips, name)
        if name.startswith("INSTALL_"):
            assert isinstance(value, str) and value.startswith("install "), name
    assert skips.needs_shared("leakbench") == (
        "needs ../shared/leakbench (the project's shared folder): absent in a user's clone"
    )
