"""Object-store failures as errors a user can act on (exit codes, hints), read from
botocore's exceptions by their names and their `response` (no botocore import here, so the
rest of the package can name these errors without loading the S3 client)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scrubber.errors import ExitCode, ScrubberError
from scrubber.policy.object_store import S3Destination

# botocore's connection failures (botocore.exceptions), by class name.
_UNREACHABLE = {
    "EndpointConnectionError",
    "ConnectionError",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ConnectionClosedError",
    "ProxyConnectionError",
    "SSLError",
    "HTTPClientError",
}


class StoreError(ScrubberError):
    """The object store failed or refused (exit 3): it may work on a later try."""

    transient = True


class StoreAccessError(StoreError):
    """Wrong credentials, no permission, an unknown bucket, a refused clock (exit 2)."""

    exit_code = ExitCode.USAGE
    transient = False


class StoreDeniedError(StoreAccessError):
    """AccessDenied for one operation: a write-only key reading, for instance."""


class StoreConflictError(StoreError):
    """An object with other content is already at the key; nothing was overwritten (exit 3)."""

    transient = False


def require_s3_answer(answer: Mapping[str, Any], destination: S3Destination) -> None:
    """An S3 server answers an object request with an ETag; a web page (a login portal, a
    proxy's error page, a plain web server) does not."""
    if not answer.get("ETag"):
        kind = str(answer.get("ContentType") or "no content type")
        raise StoreError(
            f"{destination.url}: the endpoint answered like a web server ({kind}), not an S3 "
            "API (no ETag)",
            hint="check archive.s3.endpoint_url; the local archive is kept and the upload "
            "stays queued",
        )


def error_code(error: Exception) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str((response.get("Error") or {}).get("Code", ""))
    return ""


def error_status(error: Exception) -> int:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        meta = response.get("ResponseMetadata") or {}
        return int(meta.get("HTTPStatusCode", 0) or 0)
    return 0


_CREDENTIAL_CODES = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidToken",
    "ExpiredToken",
    "AuthorizationHeaderMalformed",
    "InvalidSecurity",
}


def translate_error(
    error: Exception, action: str, key: str, destination: S3Destination
) -> ScrubberError:
    """A boto3/botocore failure as an error a user can act on, without any value in it."""
    where = destination.url
    kind = type(error).__name__
    if kind in ("NoCredentialsError", "PartialCredentialsError"):
        return StoreAccessError(
            f"{where}: no AWS credentials found",
            hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in "
            "~/.aws/credentials (archive.s3.profile); never in the policy file",
        )
    if kind in _UNREACHABLE:
        return StoreError(
            f"{where}: cannot reach the object store ({type(error).__name__})",
            hint="check archive.s3.endpoint_url and the network; the local archive is kept "
            "and the upload stays queued",
        )
    if not isinstance(getattr(error, "response", None), dict):
        return StoreError(f"{where}: {action} of {key!r} failed ({kind})")
    code, status = error_code(error), error_status(error)
    if code == "NoSuchBucket":
        return StoreAccessError(
            f"{where}: the bucket {destination.bucket!r} does not exist",
            hint="create it, or fix archive.destination in the policy",
        )
    if code in _CREDENTIAL_CODES:
        return StoreAccessError(
            f"{where}: the store refused the credentials ({code})",
            hint="check the access key id and secret key of the AWS credential chain "
            "(environment or archive.s3.profile)",
        )
    if code == "RequestTimeTooSkewed":
        return StoreAccessError(
            f"{where}: the store refuses this machine's clock (RequestTimeTooSkewed)",
            hint="set the clock right (timedatectl set-ntp true, or ntpdate), then retry",
        )
    if code in ("AccessDenied", "Forbidden") or (status == 403 and not code.isalpha()):
        return StoreDeniedError(
            f"{where}: access denied to {action} {key!r}",
            hint="the key lacks the permission for this operation (a write-only key can "
            "upload, not list, read or restore)",
        )
    if code == "PreconditionFailed" or status == 412:
        return StoreConflictError(
            f"s3 object {key} already exists; nothing was overwritten",
            hint="if an earlier run uploaded it and stopped before its receipt, `scrub archives "
            "push` with a key that may read (HeadObject) confirms it is the same",
        )
    if not code or code.isdigit():
        return StoreError(
            f"{where}: the endpoint answered HTTP {status or code} without an S3 error "
            "(is archive.s3.endpoint_url an S3 API endpoint?)",
            hint="the local archive is kept and the upload stays queued",
        )
    return StoreError(f"{where}: {action} of {key!r} failed ({code}, HTTP {status})")
