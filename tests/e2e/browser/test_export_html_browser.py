"""The HTML export in a real browser (headless Chromium): it loads with no console message (a
CSP violation, a blocked load and a script error all show as one), no planted secret is in the
page the browser built, and a screenshot is kept as an artifact in the test's temp folder.

A page built to fail (an inline style its CSP forbids) is loaded in the same run, so the check
is shown to catch what it looks for. Chromium runs with its own profile, HOME and XDG folders
under the temp folder; it skips cleanly where it is absent or cannot start.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from scrubber.demo import build_demo_config, demo_manifest
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy
from scrubber.usecases.export import ExportFormat, ExportRequest, run_export

INSTALL_CHROMIUM = "install Chromium (apt-get install chromium): chromium is not on PATH"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CONSOLE = re.compile(r":CONSOLE[:(]")
SHOP = "e3e70682-c209-4cac-a29f-6fbed82c07cd"
NEEDLES = [n for s in demo_manifest().secrets for n in s.needles()]
FAILING_PAGE = (
    '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'none'\"><style>p { color: red }</style></head><body><p>x</p></body>"
    "</html>"
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=INSTALL_CHROMIUM)]


@dataclass(frozen=True)
class Loaded:
    dom: str
    console: list[str]
    screenshot: Path


def _chromium(page: Path, work: Path, *mode: str) -> subprocess.Popen[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work / "home"),
        "XDG_CONFIG_HOME": str(work / "xdg-config"),
        "XDG_CACHE_HOME": str(work / "xdg-cache"),
    }
    assert CHROMIUM is not None
    return subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # the test runs as root in CI containers
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={work / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2400",
            *mode,
            page.as_uri(),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _finish(run: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        run.kill()
        run.communicate()
        pytest.skip(f"{INSTALL_CHROMIUM} (or it did not start: it hung for 60 s)")
    if run.returncode != 0:
        pytest.skip(f"{INSTALL_CHROMIUM} (or it cannot start here: exit {run.returncode})")
    return out, err


def _console(err: str) -> list[str]:
    return [line for line in err.splitlines() if CONSOLE.search(line)]


def _load(export: Path, failing: Path, work: Path) -> tuple[Loaded, Loaded]:
    """Two Chromium runs side by side: the export (its DOM and a screenshot) and the failing
    page (its DOM); each with the console lines it logged."""
    shot = work / f"{export.stem}.png"
    runs = [
        _chromium(export, work / "export", "--dump-dom", f"--screenshot={shot}"),
        _chromium(failing, work / "failing", "--dump-dom"),
    ]
    (dom, dom_err), (failing_dom, failing_err) = [_finish(r) for r in runs]
    return (
        Loaded(dom, _console(dom_err), shot),
        Loaded(failing_dom, _console(failing_err), work / "failing.png"),
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Loaded, Loaded]:
    root = tmp_path_factory.mktemp("browser")
    config = build_demo_config(root)
    scanner = SecretScanner(
        build_detectors(Policy.default()), Fingerprinter(b"browser-test-key-of-32-bytes!!!!")
    )
    export = root / "artifacts" / "checkout-500.html"
    export.parent.mkdir()
    request = ExportRequest(SHOP, config, format=ExportFormat.HTML, output=export, thinking=True)
    run_export(request, scanner, "auto")
    failing = root / "artifacts" / "failing.html"
    failing.write_text(FAILING_PAGE)
    return _load(export, failing, root / "artifacts")


def test_the_export_loads_with_no_console_message(pages: tuple[Loaded, Loaded]) -> None:
    export, failing = pages
    assert export.console == []
    assert failing.console, "the harness must see a CSP violation on a page built to have one"


def test_no_planted_secret_is_in_the_page_the_browser_built(pages: tuple[Loaded, Loaded]) -> None:
    export, _ = pages
    text = html.unescape(re.sub(r"<[^>]*>", " ", export.dom))
    assert "checkout-500" in text and "[REDACTED:dotenv-value:" in text
    for needle in NEEDLES:
        assert needle not in text and needle not in export.dom


def test_a_screenshot_is_kept_as_an_artifact(pages: tuple[Loaded, Loaded]) -> None:
    export, _ = pages
    assert export.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert export.screenshot.stat().st_size > 10_000
