"""Bad input for an s3:// destination (issue 17): an unknown bucket, an endpoint that answers
HTML, a key with a trailing space, an object already at the key with other content. Each is
a clear error; nothing is overwritten; nothing local is deleted; the upload stays queued."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scrubber.archive.layout import read_entry
from scrubber.archive.s3_queue import UploadQueue, object_key, read_receipt
from scrubber.errors import ConfigError
from scrubber.policy.load import parse_policy
from scrubber.policy.model import Policy
from scrubber.transcript.sessions import discover
from scrubber.usecases.archive import archive_sessions, resolve_encryption
from scrubber.usecases.archive_push import push_uploads
from tests.e2e.archive_kit import World
from tests.e2e.s3.conftest import BUCKET, Key, Seaweed
from tests.e2e.s3.s3_kit import client, env_with, keys_under, object_bytes, s3_policy
from tests.unit.retention.sessions_writer import write_session

pytestmark = pytest.mark.slow


@pytest.fixture
def small(tmp_path: Path) -> World:
    config = tmp_path / "home" / ".claude"
    (config / "projects").mkdir(parents=True)
    write_session(config, cwd="/srv/app", last=datetime.now(UTC) - timedelta(days=3), seed=91)
    return World(root=tmp_path, config=config, home=tmp_path / "scrub-home")


def _local(world: World, policy_file: Path) -> tuple[Policy, Path]:
    policy = parse_policy(policy_file.read_text(), origin="t", base_dir=world.root, env={})
    (outcome,) = archive_sessions(
        discover(world.config).sessions,
        policy=policy,
        home=world.home,
        encryption=resolve_encryption(policy, encrypt=True),
        now=datetime.now(UTC),
    )
    assert outcome.written is not None
    return policy, outcome.written.entry.path


def _push_fails(world: World, policy: Policy, archive: Path, key: Key, text: str) -> None:
    before = archive.read_bytes()
    report = push_uploads(policy, world.home, env_with(world, key), now=datetime.now(UTC))
    (outcome,) = report.outcomes
    assert outcome.error is not None and text in outcome.error.message, outcome.error
    assert archive.read_bytes() == before  # nothing deleted locally
    assert read_receipt(archive) is None
    assert len(UploadQueue(world.home).jobs()) == 1


def test_unknown_bucket(small: World, store: Seaweed) -> None:
    path, _prefix, _ = s3_policy(small, store, bucket="no-such-bucket-here")
    policy, archive = _local(small, path)
    _push_fails(
        small, policy, archive, store.read_write, "the bucket 'no-such-bucket-here' does not exist"
    )


class _HtmlPage(http.server.BaseHTTPRequestHandler):
    def _page(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = b"<html><body>Welcome to our portal</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_HEAD = _page

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def html_endpoint() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HtmlPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_endpoint_answering_html(small: World, store: Seaweed, html_endpoint: str) -> None:
    path, _prefix, _ = s3_policy(small, store, endpoint=html_endpoint)
    policy, archive = _local(small, path)
    _push_fails(small, policy, archive, store.read_write, "answered like a web server (text/html")


def test_access_key_with_a_trailing_space_is_named_not_shown(small: World, store: Seaweed) -> None:
    path, prefix, _ = s3_policy(small, store)
    spaced = Key(store.read_write.access_key + " ", store.read_write.secret_key)
    done = small.run("archive", "--all", "--policy", str(path), env=env_with(small, spaced))
    assert done.returncode == 2, done.stderr
    assert "the AWS access key id begins or ends with a space or line break" in done.stderr
    assert store.read_write.access_key not in done.stderr + done.stdout
    assert keys_under(store, prefix) == {}
    assert len(UploadQueue(small.home).jobs()) == 1


def test_prefix_with_a_trailing_space_is_a_policy_error(small: World) -> None:
    text = "version: 1\narchive:\n  destination: 's3://bucket-a/claude '\n"
    with pytest.raises(ConfigError) as caught:
        parse_policy(text, origin="p.yaml", base_dir=small.root, env={})
    assert "archive.destination" in caught.value.message
    assert "space" in caught.value.message


def test_existing_object_with_other_content_is_never_overwritten(
    small: World, store: Seaweed
) -> None:
    path, _prefix, _ = s3_policy(small, store)
    policy, archive = _local(small, path)
    assert policy.archive.s3 is not None
    key = object_key(policy.archive.s3, "web1", read_entry(archive))
    client(store).put_object(Bucket=BUCKET, Key=key, Body=b"someone else's object")
    _push_fails(small, policy, archive, store.read_write, "already exists with other content")
    assert object_bytes(store, key) == b"someone else's object"
    # A write-only key cannot look first: the conditional PUT refuses, and nothing changes.
    _push_fails(small, policy, archive, store.write_only, "already exists")
    assert object_bytes(store, key) == b"someone else's object"


def test_a_clock_the_server_refuses(small: World, store: Seaweed) -> None:
    path, prefix, _ = s3_policy(small, store)
    # This process's clock, as the S3 client sees it, two hours behind.
    code = (
        "import datetime, botocore.auth as auth; real = auth.get_current_datetime; "
        "auth.get_current_datetime = lambda remove_tzinfo=True: real(remove_tzinfo) "
        "- datetime.timedelta(hours=2); from scrubber.cli.app import main; "
        f"main(['archive', '--all', '--policy', {str(path)!r}])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env_with(small, store.read_write),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "refuses this machine's clock (RequestTimeTooSkewed)" in done.stderr
    assert "Traceback" not in done.stderr
    assert keys_under(store, prefix) == {}
    assert len(UploadQueue(small.home).jobs()) == 1
