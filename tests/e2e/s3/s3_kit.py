"""What the object-storage tests share: a policy naming the local SeaweedFS bucket, a boto3
client of the test's own (to look into the bucket independently of scrubber), and env."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

from tests.e2e.archive_kit import World, keygen
from tests.e2e.s3.conftest import BUCKET, Key, Seaweed


def s3_policy(
    world: World,
    server: Seaweed,
    *,
    extra: str = "",
    retention: str = "",
    endpoint: str | None = None,
    bucket: str = BUCKET,
) -> tuple[Path, str, Path]:
    """A policy file for this world: recipients, an s3:// destination with a prefix of its
    own (tests share one server). Returns (policy, prefix, identity file)."""
    identity, recipient = keygen(world)
    prefix = "t-" + uuid.uuid4().hex[:12]
    text = (
        "version: 1\n"
        "archive:\n"
        f"  recipients: [{recipient}]\n"
        f"  destination: s3://{bucket}/{prefix}\n"
        "  s3:\n"
        f"    endpoint_url: {endpoint or server.endpoint}\n"
        "    region: us-east-1\n"
        "    addressing_style: path\n"
        "    host: web1\n"
        f"{extra}"
        f"{retention}"
    )
    policy = world.root / "policy.yaml"
    policy.write_text(text)
    return policy, prefix, identity


def env_with(world: World, key: Key, **extra: str) -> dict[str, str]:
    env = world.env(**key.env(), **extra)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE"):
        env.pop(name, None)
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(world.root / "no-aws-credentials")
    env.setdefault("AWS_MAX_ATTEMPTS", "1")  # a refused connection fails at once
    return env


def client(server: Seaweed) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        aws_access_key_id=server.read_write.access_key,
        aws_secret_access_key=server.read_write.secret_key,
        region_name="us-east-1",
        config=Config(
            s3={"addressing_style": "path"},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )


def keys_under(server: Seaweed, prefix: str) -> dict[str, int]:
    answer = client(server).list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/")
    return {item["Key"]: item["Size"] for item in answer.get("Contents", [])}


def object_bytes(server: Seaweed, key: str) -> bytes:
    data: bytes = client(server).get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return data


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
