"""Synthetic Claude Code config directories, for the demo, the tests and the benchmark.

Everything is written in Claude Code's real on-disk format (records.py), with ordinary tool
output around (content.py) and fake secrets built at run time from a seeded generator
(fakes.py): nothing here looks like a credential, and the same seed gives the same bytes. The
manifest (`demo_manifest`, or the `LargeTranscript` returned by `write_large_transcript`) says
what was planted and where (manifest.py), so tests can check that nothing survives redaction;
decoys (git SHAs, uuids, lockfile integrity hashes, a certificate, signatures, image data) are
listed too, as things that must not be flagged. Manifests hold the values: never print them.

The names below are the package's API: a whole config dir (config.py), a large transcript
(large.py), and the fake-secret generators the tests plant by hand.
"""

from scrubber.demo.config import build_demo_config, demo_manifest, planted_secrets
from scrubber.demo.fakes import (
    fake_anthropic_key,
    fake_aws_access_key,
    fake_aws_secret_key,
    fake_certificate,
    fake_git_sha,
    fake_github_token,
    fake_integrity,
    fake_npm_token,
    fake_password,
    fake_png,
    fake_private_key,
    fake_stripe_key,
)
from scrubber.demo.large import write_large_transcript
from scrubber.demo.manifest import Decoy, DemoManifest, LargeTranscript, Planted
from scrubber.demo.records import MODEL, VERSION, project_folder_name

__all__ = [
    "MODEL",
    "VERSION",
    "Decoy",
    "DemoManifest",
    "LargeTranscript",
    "Planted",
    "build_demo_config",
    "demo_manifest",
    "fake_anthropic_key",
    "fake_aws_access_key",
    "fake_aws_secret_key",
    "fake_certificate",
    "fake_git_sha",
    "fake_github_token",
    "fake_integrity",
    "fake_npm_token",
    "fake_password",
    "fake_png",
    "fake_private_key",
    "fake_stripe_key",
    "planted_secrets",
    "project_folder_name",
    "write_large_transcript",
]
