"""activity: the activity log's lines (0600, one write each) and the healthcheck ping, which
never raises and never repeats the URL (it carries its own token)."""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.activity import append_activity, ping_healthcheck


def test_activity_log_lines(tmp_path: Path) -> None:
    home = tmp_path / "scrubber"
    append_activity(home, {"event": "retention", "exit": 0})
    append_activity(home, {"event": "undelete", "when": datetime(2026, 1, 1, tzinfo=UTC)})
    log = home / "log" / "activity.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[0] == {"event": "retention", "exit": 0} and lines[1]["event"] == "undelete"
    assert log.stat().st_mode & 0o777 == 0o600


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(500 if "fail" in self.path else 200)
            self.end_headers()
            self.wfile.write(b"OK")

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()


def test_healthcheck(server: tuple[str, list[str]]) -> None:
    base, seen = server
    token = "ping-" + os.urandom(6).hex()
    assert ping_healthcheck(f"{base}/{token}") is None
    assert seen == [f"/{token}"]
    failure = ping_healthcheck(f"{base}/fail-{token}")
    assert failure == "HTTP 500"
    unreachable = ping_healthcheck(f"http://127.0.0.1:9/{token}", timeout=2)
    assert unreachable is not None and token not in unreachable and "127.0.0.1" not in unreachable
    assert ping_healthcheck("file:///etc/passwd") == "not an http(s) URL"
