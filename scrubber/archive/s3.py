"""Object storage with the S3 API as an archive destination: the only boto3 import.

An upload counts only when the store confirmed it: every PUT carries the SHA-256 of its body
(`ChecksumSHA256`), which the server checks before it stores anything, and the object is then
read back (HeadObject with checksums, else GetObjectAttributes) for its size and checksum. A key
that may only PutObject cannot read back: the proof is then the PUT response's own checksum, and
the proof says so. Large files go up in parts of `PART_SIZE` (one part in memory at a time); the
object's checksum is then the composite one (SHA-256 of the parts' digests, "-N"), computed here
first from the file. Nothing is overwritten: every write is conditional (`If-None-Match: *`),
and a HEAD first finds an object already there on servers that ignore the condition.

Errors never quote a credential or a response body: the store's error code, the bucket and the
key at most.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

from scrubber.archive.s3_errors import (
    StoreAccessError,
    StoreConflictError,
    StoreDeniedError,
    StoreError,
    error_code,
    error_status,
    require_s3_answer,
    translate_error,
)
from scrubber.errors import ConfigError, KeyMaterialError, ScrubberError
from scrubber.policy.object_store import AddressingStyle, S3Destination

PART_SIZE = 8 * 1024 * 1024  # multipart: 8 MiB parts (S3's minimum is 5 MiB)
MULTIPART_THRESHOLD = 16 * 1024 * 1024
MAX_KEYS_LISTED = 100_000
_READ_BLOCK = 1 << 20

# Our own metadata on every object: the full file's SHA-256, and the checksum the store must
# report for it (for a multipart object, the composite one), so a keyless check of an object
# needs only its sidecar and a HEAD.
META_SHA256 = "scrub-sha256"
META_CHECKSUM = "scrub-checksum"

INSTALL_HINT = "install the S3 extra: pip install 'scrubber[s3]' (boto3)"


class ProofSource(StrEnum):
    READ_BACK = "read back"  # HeadObject / GetObjectAttributes after the upload
    PUT_RESPONSE = "put response"  # write-only: what the store answered to the PUT itself
    EXISTING = "already stored"  # the same content was there (an earlier, interrupted run)


@dataclass(frozen=True, slots=True)
class RemoteObject:
    key: str
    size: int
    checksum: str | None  # the store's ChecksumSHA256 (base64, "-N" when composite)
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UploadProof:
    key: str
    size: int
    sha256: str  # hex, of the whole file
    checksum: str  # what the store confirmed
    parts: int  # 1 for a single PUT
    proven_by: ProofSource


def boto3_missing() -> str | None:
    """Why object storage cannot work here, or None (for `scrub doctor`)."""
    if importlib.util.find_spec("boto3") is None:
        return "boto3 is not installed: s3:// destinations cannot be used"
    return None


def b64_digest(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


def expected_checksum(path: Path, size: int) -> tuple[str, str, int]:
    """(sha256 hex, the checksum the store will report, parts) for a file, reading it once."""
    whole = hashlib.sha256()
    if size <= MULTIPART_THRESHOLD:
        with path.open("rb") as handle:
            while block := handle.read(_READ_BLOCK):
                whole.update(block)
        return whole.hexdigest(), b64_digest(whole.digest()), 1
    parts = hashlib.sha256()
    count = 0
    for chunk in _parts(path):
        whole.update(chunk)
        parts.update(hashlib.sha256(chunk).digest())
        count += 1
    return whole.hexdigest(), f"{b64_digest(parts.digest())}-{count}", count


def _parts(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(PART_SIZE):
            yield chunk


class ObjectStore:
    """One bucket and prefix, reached with credentials from the standard AWS chain."""

    def __init__(self, destination: S3Destination, env: Mapping[str, str]) -> None:
        self.destination = destination
        self._client = _make_client(destination, env)

    @property
    def where(self) -> str:
        endpoint = self.destination.endpoint_url or "AWS"
        return f"{self.destination.url} ({endpoint})"

    # -- reading ------------------------------------------------------------------------------

    def head(self, key: str) -> RemoteObject | None:
        """The object at `key`, None when there is none. StoreDeniedError without read access."""
        try:
            answer = self._client.head_object(
                Bucket=self.destination.bucket, Key=key, ChecksumMode="ENABLED"
            )
        except Exception as error:
            if error_status(error) == 404 and error_code(error) not in ("NoSuchBucket",):
                return None
            raise self._translate(error, "read", key) from None
        require_s3_answer(answer, self.destination)
        checksum = answer.get("ChecksumSHA256")
        if checksum is None:
            checksum = self._attributes_checksum(key)
        metadata = {str(k).lower(): str(v) for k, v in (answer.get("Metadata") or {}).items()}
        return RemoteObject(key, int(answer.get("ContentLength", -1)), checksum, metadata)

    def _attributes_checksum(self, key: str) -> str | None:
        try:
            answer = self._client.get_object_attributes(
                Bucket=self.destination.bucket, Key=key, ObjectAttributes=["Checksum"]
            )
        except Exception:  # an older server without the call: the checksum stays unknown
            return None
        value = (answer.get("Checksum") or {}).get("ChecksumSHA256")
        return str(value) if value else None

    def list_keys(self, prefix: str) -> list[tuple[str, int]]:
        """(key, size) of every object under `prefix` (bounded). Needs ListBucket."""
        found: list[tuple[str, int]] = []
        try:
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.destination.bucket, Prefix=prefix
            )
            for page in pages:
                for item in page.get("Contents", ()):
                    found.append((str(item["Key"]), int(item.get("Size", 0))))
                if len(found) >= MAX_KEYS_LISTED:
                    raise StoreError(f"more than {MAX_KEYS_LISTED} objects under {prefix!r}")
        except StoreError:
            raise
        except Exception as error:
            raise self._translate(error, "list", prefix) from None
        return found

    def read_small(self, key: str, limit: int) -> bytes:
        """An object's whole content, refused when larger than `limit` (a sidecar)."""
        try:
            answer = self._client.get_object(Bucket=self.destination.bucket, Key=key)
            body = answer["Body"]
            data: bytes = body.read(limit + 1)
            body.close()
        except Exception as error:
            raise self._translate(error, "read", key) from None
        if len(data) > limit:
            raise StoreError(f"s3 object {key}: larger than {limit} bytes, not a sidecar")
        return data

    def download(self, key: str, out: BinaryIO, *, max_size: int) -> tuple[int, str]:
        """Stream an object into `out`; (size, sha256 hex) of what came."""
        digest = hashlib.sha256()
        size = 0
        try:
            answer = self._client.get_object(Bucket=self.destination.bucket, Key=key)
            body = answer["Body"]
            while block := body.read(_READ_BLOCK):
                size += len(block)
                if size > max_size:
                    raise StoreError(f"s3 object {key}: larger than its sidecar says")
                digest.update(block)
                out.write(block)
            body.close()
        except StoreError:
            raise
        except Exception as error:
            raise self._translate(error, "read", key) from None
        return size, digest.hexdigest()

    # -- writing ------------------------------------------------------------------------------

    def upload(self, path: Path, key: str) -> UploadProof:
        """Put `path` at `key`, verified; never over an object with other content."""
        size = path.stat().st_size
        sha256, checksum, parts = expected_checksum(path, size)
        readable = True
        try:
            existing = self.head(key)
        except StoreDeniedError:
            existing, readable = None, False  # a write-only key: the condition guards alone
        if existing is not None:
            return self._existing(existing, size, sha256, checksum, parts)
        metadata = {META_SHA256: sha256, META_CHECKSUM: checksum}
        try:
            if parts == 1:
                answered = self._put(path, key, checksum, metadata, head_said_absent=readable)
            else:
                answered = self._put_parts(path, key, checksum, metadata)
        except StoreConflictError:
            found = self.head(key) if readable else None
            if found is None:
                raise
            return self._existing(found, size, sha256, checksum, parts)
        if answered != checksum:
            raise StoreError(
                f"s3 object {key}: the store's answer does not confirm the SHA-256 sent "
                "(is endpoint_url an S3 API endpoint that checks checksums?)",
                hint="the local archive is kept; nothing counts as uploaded",
            )
        if not readable:
            return UploadProof(key, size, sha256, checksum, parts, ProofSource.PUT_RESPONSE)
        stored = self.head(key)
        if stored is None or stored.size != size or stored.checksum != checksum:
            raise StoreError(
                f"s3 object {key}: read back with another size or checksum than uploaded",
                hint="the local archive is kept; the next push tries again",
            )
        return UploadProof(key, size, sha256, checksum, parts, ProofSource.READ_BACK)

    def _existing(
        self, found: RemoteObject, size: int, sha256: str, checksum: str, parts: int
    ) -> UploadProof:
        if found.size == size and found.checksum == checksum:
            return UploadProof(found.key, size, sha256, checksum, parts, ProofSource.EXISTING)
        raise StoreConflictError(
            f"s3 object {found.key} already exists with other content; nothing was overwritten",
            hint="the local archive is kept; move the object aside in the bucket or choose "
            "another archive.s3.host, then run `scrub archives push`",
        )

    def _put(
        self,
        path: Path,
        key: str,
        checksum: str,
        metadata: dict[str, str],
        *,
        head_said_absent: bool,
    ) -> str | None:
        condition: dict[str, str] = {"IfNoneMatch": "*"}
        answer: Mapping[str, Any] = {}
        for _attempt in range(2):
            with path.open("rb") as body:
                try:
                    answer = self._client.put_object(
                        Bucket=self.destination.bucket,
                        Key=key,
                        Body=body,
                        ChecksumSHA256=checksum,
                        Metadata=metadata,
                        ContentType="application/octet-stream",
                        **condition,
                    )
                    break
                except Exception as error:
                    # A server without conditional writes: the HEAD just before found no
                    # object, which is then the only guard (issue 17: "else a HEAD check").
                    if condition and head_said_absent and error_code(error) == "NotImplemented":
                        condition = {}
                        continue
                    raise self._translate(error, "write", key) from None
        require_s3_answer(answer, self.destination)
        value = answer.get("ChecksumSHA256")
        return str(value) if value else None

    def _put_parts(
        self, path: Path, key: str, checksum: str, metadata: dict[str, str]
    ) -> str | None:
        bucket = self.destination.bucket
        try:
            started = self._client.create_multipart_upload(
                Bucket=bucket, Key=key, ChecksumAlgorithm="SHA256", Metadata=metadata
            )
        except Exception as error:
            raise self._translate(error, "write", key) from None
        upload_id = started["UploadId"]
        try:
            done: list[dict[str, Any]] = []
            for number, chunk in enumerate(_parts(path), start=1):
                sent = b64_digest(hashlib.sha256(chunk).digest())
                answer = self._client.upload_part(
                    Bucket=bucket,
                    Key=key,
                    UploadId=upload_id,
                    PartNumber=number,
                    Body=chunk,
                    ChecksumSHA256=sent,
                )
                if answer.get("ChecksumSHA256") != sent:
                    raise StoreError(f"s3 object {key}: part {number} not confirmed by the store")
                done.append({"PartNumber": number, "ETag": answer["ETag"], "ChecksumSHA256": sent})
            answer = self._client.complete_multipart_upload(
                Bucket=bucket,
                Key=key,
                UploadId=upload_id,
                MultipartUpload={"Parts": done},
                IfNoneMatch="*",
            )
        except Exception as error:
            # No partial object is left: an aborted (or, with the store down, abandoned)
            # multipart upload is never an object. A lifecycle rule clears abandoned parts.
            with contextlib.suppress(Exception):  # the store may be the thing that failed
                self._client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            if isinstance(error, StoreError):
                raise
            raise self._translate(error, "write", key) from None
        value = answer.get("ChecksumSHA256")
        return str(value) if value else None

    # -- errors -------------------------------------------------------------------------------

    def _translate(self, error: Exception, action: str, key: str) -> ScrubberError:
        return translate_error(error, action, key, self.destination)


def _make_client(destination: S3Destination, env: Mapping[str, str]) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise ConfigError(
            f"archive.destination is {destination.url}, but boto3 is not installed",
            hint=INSTALL_HINT,
        ) from None
    key_id = env.get("AWS_ACCESS_KEY_ID")
    secret = env.get("AWS_SECRET_ACCESS_KEY")
    if key_id and secret and destination.profile is None:
        session = boto3.Session(
            aws_access_key_id=key_id,
            aws_secret_access_key=secret,
            aws_session_token=env.get("AWS_SESSION_TOKEN") or None,
        )
    else:
        try:
            session = boto3.Session(profile_name=destination.profile)
        except Exception as error:
            raise StoreAccessError(
                f"{destination.url}: the AWS profile {destination.profile!r} is not "
                f"configured ({type(error).__name__})",
                hint="add it to ~/.aws/credentials, or fix archive.s3.profile",
            ) from None
    _check_credentials(session, destination)
    config = Config(
        region_name=destination.region or env.get("AWS_REGION") or "us-east-1",
        s3={"addressing_style": str(destination.addressing_style or AddressingStyle.AUTO)},
        # Exponential backoff with jitter; AWS_MAX_ATTEMPTS (the SDKs' own variable) may change it.
        retries={"mode": "standard", "max_attempts": _max_attempts(env)},
        connect_timeout=5,
        read_timeout=60,
        # We send SHA-256 ourselves; botocore's own CRC trailers are not understood everywhere.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    try:
        return session.client("s3", endpoint_url=destination.endpoint_url, config=config)
    except Exception as error:  # botocore refuses an endpoint or region it cannot use
        raise ConfigError(
            f"{destination.url}: cannot set up the S3 client ({type(error).__name__})",
            hint="check archive.s3.endpoint_url and archive.s3.region",
        ) from None


def _max_attempts(env: Mapping[str, str]) -> int:
    text = env.get("AWS_MAX_ATTEMPTS", "")
    return int(text) if text.isdigit() and 1 <= int(text) <= 20 else 4


def _check_credentials(session: Any, destination: S3Destination) -> None:
    credentials = session.get_credentials()
    if credentials is None:
        raise StoreAccessError(
            f"{destination.url}: no AWS credentials found",
            hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in "
            "~/.aws/credentials (archive.s3.profile); never in the policy file",
        )
    frozen = credentials.get_frozen_credentials()
    for what, value in (("access key id", frozen.access_key), ("secret key", frozen.secret_key)):
        if value and value != value.strip():
            # Named, never shown: a pasted key with a trailing space or line break.
            raise KeyMaterialError(
                f"{destination.url}: the AWS {what} begins or ends with a space or line break",
                hint="remove it where the key is set (environment or ~/.aws/credentials)",
            )
