"""The s3:// destination as policy values, object keys, receipts, the upload queue and the
checksums the store must report (no server needed)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrubber.archive.layout import ArchiveEntry
from scrubber.archive.s3 import MULTIPART_THRESHOLD, PART_SIZE, expected_checksum
from scrubber.archive.s3_queue import (
    Receipt,
    UploadQueue,
    object_key,
    parse_key,
    read_receipt,
    receipt_path,
    write_receipt,
)
from scrubber.errors import ConfigError
from scrubber.policy.load import parse_policy
from scrubber.policy.model import Policy
from scrubber.policy.object_store import AddressingStyle, S3Destination

BASE = "version: 1\narchive:\n  destination: s3://my-archives/claude/prod\n"


def _parse(text: str, tmp_path: Path) -> Policy:
    return parse_policy(text, origin="p.yaml", base_dir=tmp_path, env={})


def test_destination_and_keys_are_read(tmp_path: Path) -> None:
    policy = _parse(
        BASE + "  s3:\n    endpoint_url: http://127.0.0.1:9000\n    region: eu-west-1\n"
        "    addressing_style: path\n    profile: archiver\n    host: web1\n",
        tmp_path,
    )
    s3 = policy.archive.s3
    assert s3 == S3Destination(
        bucket="my-archives",
        prefix="claude/prod",
        endpoint_url="http://127.0.0.1:9000",
        region="eu-west-1",
        addressing_style=AddressingStyle.PATH,
        profile="archiver",
        host="web1",
    )
    assert policy.archive.destination is None  # local copies go to $SCRUB_HOME/archives


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            BASE + "  s3:\n    aws_secret_access_key: x\n",
            "unknown key 'archive.s3.aws_secret_access_key'",
        ),
        (BASE + "  s3:\n    addressing_style: sideways\n", "archive.s3.addressing_style"),
        ("version: 1\narchive:\n  destination: s3://Bad_Bucket/x\n", "bucket name"),
        ("version: 1\narchive:\n  destination: 's3://b-1/a /c'\n", "space"),
        ("version: 1\narchive:\n  destination: s3://b-1/a//c\n", "no empty part"),
        ("version: 1\narchive:\n  destination: s3://b-1/../c\n", "'..'"),
        (BASE + "  s3:\n    endpoint_url: ftp://host\n", "archive.s3.endpoint_url"),
        (BASE + "  s3:\n    host: a/b\n", "archive.s3.host"),
        ("version: 1\narchive:\n  s3:\n    region: x\n", "archive.destination is not an s3://"),
    ],
)
def test_bad_s3_settings_name_the_key(text: str, said: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _parse(text, tmp_path)
    assert said in caught.value.message
    assert "x\n" not in caught.value.message


def _entry(tmp_path: Path) -> ArchiveEntry:
    folder = tmp_path / "archives" / "-srv-app" / "0a6d4322-b66f-48ad-baa1-e7da225260eb"
    folder.mkdir(parents=True)
    path = folder / "2026-11-30T07-00-00.000Z.tar.gz.age"
    path.write_bytes(b"age")
    return ArchiveEntry(path, "-srv-app", folder.name, path.name[:-11], True)


def test_object_keys_mirror_the_local_layout_and_parse_back(tmp_path: Path) -> None:
    destination = S3Destination(bucket="b-1", prefix="claude")
    entry = _entry(tmp_path)
    key = object_key(destination, "web1", entry)
    assert key == f"claude/web1/-srv-app/{entry.session_id}/{entry.path.name}"
    name = parse_key(destination, key)
    assert name is not None and (name.host, name.project, name.session_id) == (
        "web1",
        "-srv-app",
        entry.session_id,
    )
    assert parse_key(destination, key + ".json") is None
    assert parse_key(destination, "claude/web1/../x/y.tar.gz.age") is None
    top = S3Destination(bucket="b-1")
    assert object_key(top, "h", entry).startswith("h/-srv-app/")


def test_receipt_round_trip_is_private(tmp_path: Path) -> None:
    entry = _entry(tmp_path)
    receipt = Receipt("s3://b-1/claude", "k", 3, "ab" * 32, "c2", "read back", datetime.now(UTC))
    write_receipt(entry.path, receipt)
    assert read_receipt(entry.path) == receipt
    assert receipt_path(entry.path).stat().st_mode & 0o777 == 0o600
    receipt_path(entry.path).write_text(json.dumps({"schema": "other"}))
    assert read_receipt(entry.path) is None


def test_queue_keeps_one_job_per_archive_and_backs_off(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    queue = UploadQueue(home)
    archive = _entry(tmp_path).path
    queue.add(archive, now=100.0)
    queue.add(archive, now=200.0)
    (job,) = queue.jobs()
    first = queue.failed_attempt(job, "down", now=1000.0)
    second = queue.failed_attempt(first, "down", now=1000.0)
    assert (first.not_before, second.not_before) == (1030.0, 1060.0)
    queue.add(archive, now=300.0)  # a new archive run does not reset the wait
    assert queue.jobs()[0].attempts == 2
    (queue.root / "planted.json").write_text(json.dumps({"format": 1, "archive": "/etc/passwd"}))
    assert [j.archive for j in queue.jobs()] == [archive]  # a name that is not its own: skipped
    queue.done(second)
    assert queue.jobs() == []


def test_expected_checksum_single_and_composite(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.write_bytes(b"hello")
    digest = hashlib.sha256(b"hello").digest()
    assert expected_checksum(small, 5) == (digest.hex(), base64.b64encode(digest).decode(), 1)
    big = tmp_path / "big"
    data = os.urandom(MULTIPART_THRESHOLD + 1)
    big.write_bytes(data)
    parts = [data[i : i + PART_SIZE] for i in range(0, len(data), PART_SIZE)]
    composite = hashlib.sha256(b"".join(hashlib.sha256(p).digest() for p in parts)).digest()
    whole, checksum, count = expected_checksum(big, len(data))
    assert whole == hashlib.sha256(data).hexdigest()
    assert checksum == f"{base64.b64encode(composite).decode()}-{len(parts)}"
    assert count == len(parts) == 3
