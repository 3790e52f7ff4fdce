"""`archive.destination: s3://bucket/prefix` and `archive.s3`, as values (Contracts, "Object
storage"). Standard library only, like the rest of the model.

Credentials are never part of this: they come from the standard AWS chain (environment,
shared credentials and config files, with `profile`), so a policy file never holds one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

S3_SCHEME = "s3://"

# S3 bucket naming rules (AWS "Bucket naming rules"): 3-63 characters, lowercase letters,
# digits, dots and hyphens, starting and ending with a letter or digit.
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# A prefix segment, a host name: what is safe in an object key and in a folder name alike.
_SEGMENT_RE = re.compile(r"[A-Za-z0-9_.+=@-]{1,128}")


class AddressingStyle(StrEnum):
    AUTO = "auto"
    PATH = "path"  # http://endpoint/bucket/key: most self-hosted servers
    VIRTUAL = "virtual"  # http://bucket.endpoint/key


class S3ValueError(ValueError):
    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


def _check_segments(key: str, text: str, what: str) -> None:
    for segment in text.split("/"):
        if segment != segment.strip():
            raise S3ValueError(key, f"the {what} has a part that begins or ends with a space")
        if not _SEGMENT_RE.fullmatch(segment) or segment in (".", ".."):
            raise S3ValueError(
                key,
                f"every part of the {what} must be 1-128 letters, digits or _.+=@- "
                "(no empty part, no '.' or '..')",
            )


@dataclass(frozen=True, slots=True)
class S3Destination:
    """Where archives go in object storage, and how to reach it."""

    bucket: str
    prefix: str = ""  # no leading or trailing slash; "" for the bucket's top
    endpoint_url: str | None = None  # None: AWS itself
    region: str | None = None
    addressing_style: AddressingStyle = AddressingStyle.AUTO
    profile: str | None = None  # a profile of the shared AWS config/credentials files
    host: str | None = None  # None: this machine's host name
    # Local copies go only after a verified upload, and only when asked (issue 17).
    remove_local_after_upload: bool = False

    def __post_init__(self) -> None:
        if not _BUCKET_RE.fullmatch(self.bucket) or ".." in self.bucket:
            raise S3ValueError(
                "destination",
                "the bucket name must be 3-63 lowercase letters, digits, dots or hyphens",
            )
        if self.prefix:
            _check_segments("destination", self.prefix, "prefix")
        if self.endpoint_url is not None and not re.fullmatch(
            r"https?://[A-Za-z0-9.\-\[\]:]+(/[^\s]*)?", self.endpoint_url
        ):
            raise S3ValueError("s3.endpoint_url", "expected an http:// or https:// URL")
        if self.host is not None:
            _check_segments("s3.host", self.host, "host")
            if "/" in self.host:
                raise S3ValueError("s3.host", "must be one name, without '/'")
        for key, value in (("s3.region", self.region), ("s3.profile", self.profile)):
            if value is not None and (not value or value != value.strip()):
                raise S3ValueError(key, "must not be empty or begin or end with a space")

    @property
    def url(self) -> str:
        return f"{S3_SCHEME}{self.bucket}/{self.prefix}" if self.prefix else S3_SCHEME + self.bucket

    def host_name(self) -> str:
        """The host part of object keys: `host`, else this machine's name (made key-safe)."""
        if self.host is not None:
            return self.host
        import socket  # here: every command loads policies, few name an archive's host

        name = re.sub(r"[^A-Za-z0-9_.+=@-]", "_", socket.gethostname().split(".")[0])
        return name[:128] or "host"


def parse_s3_url(text: str) -> tuple[str, str]:
    """(bucket, prefix) of `s3://bucket/prefix`; raises ValueError (with `.problem`)."""
    rest = text[len(S3_SCHEME) :]
    bucket, _, prefix = rest.partition("/")
    return bucket, prefix.rstrip("/")
