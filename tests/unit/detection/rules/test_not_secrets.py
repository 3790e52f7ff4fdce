"""What no rule may ever match: identifiers, digests, public material, our own placeholders,
and the code and tool output a session is made of."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_cases import B62, B64, CREDENTIALS, DOTENV, HEX, fake

from scrubber.detection.detector import PLAIN, ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.rules.catalog import ALL_RULES


def scan(text: str, context: ScanContext = PLAIN) -> list[Hit]:
    """What the scanner would run: rules whose anchors occur, context-only rules in context."""
    lowered = text.lower()
    hits: list[Hit] = []
    for rule in ALL_RULES:
        if rule.anchors and not any(a in lowered for a in rule.anchors):
            continue
        if not rule.anchors and not context.sensitive:
            continue
        hits.extend(rule.find(text, context))
    return hits


SHA1S = [fake(HEX, 40, i) for i in range(3)]
CERT = (
    "-----BEGIN CERTIFICATE-----\n"
    + "\n".join(fake(B64, 64, i) for i in range(5))
    + "\n-----END CERTIFICATE-----"
)
PUBKEY = "-----BEGIN PUBLIC KEY-----\n" + fake(B64, 64, "pub") + "\n-----END PUBLIC KEY-----"
CA_DATA = base64.b64encode(CERT.encode()).decode()
SIGNATURE = "Er" + fake(B64, 600, "sig") + "=="
USAGE = json.dumps(
    {"input_tokens": 4, "cache_creation_input_tokens": 1536, "cache_read_input_tokens": 21820,
     "output_tokens": 57, "service_tier": "standard", "max_tokens": 32000}
)  # fmt: skip

NOT_SECRETS = {
    "uuids": "Created job 38221fc8-a780-4300-a78d-895f26407e06\n  - e2853a6d-2847-402e-9f5d-db1d4e2e29f1",
    "git log": "".join(f"commit {s}\nAuthor: Oscar <o@example.com>\n\n    fix\n\n" for s in SHA1S),
    "git diff": f"diff --git a/x.py b/x.py\nindex {SHA1S[0][:7]}..{SHA1S[1][:7]} 100644\n",
    "sha256sum": f"{fake(HEX, 64, 'a')}  dist/pkg-1.0.whl\n{fake(HEX, 64, 'b')}  dist/pkg-1.0.tar.gz",
    "sha512sum": f"{fake(HEX, 128, 'c')}  release.tar.gz",
    "md5": f"MD5 (file.bin) = {fake(HEX, 32, 'md5')}",
    "lockfile": f'"integrity": "sha512-{fake(B64, 86, "int")}==",\n"resolved": "https://registry.npmjs.org/x/-/x-1.0.0.tgz"',
    "docker digest": f"FROM python@sha256:{fake(HEX, 64, 'dig')}",
    "pip hash": f"retry==3.2.9 \\\n    --hash=sha256:{fake(HEX, 64, 'pip')}",
    "go.sum": f"github.com/x/y v0.2.2 h1:{fake(B64, 43, 'go')}=",
    "data uri": f"url(data:image/png;base64,{fake(B64, 400, 'img')})",
    "thinking signature": json.dumps({"type": "thinking", "thinking": "hm", "signature": SIGNATURE}),
    "arn": '{"Role": {"Arn": "arn:aws:iam::338412572772:role/deploy", "RoleId": "AROAFPG06JXN91PWPZTTW"}}',
    "ssh public key": f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{fake(B64, 43, 'ssh')} grace@host",
    "certificate": CERT,
    "public key": PUBKEY,
    "request ids": '{"type":"error","request_id":"req_011CAKdUaAH8vU6utuGr5G4j"}',
    "tool and message ids": f"toolu_01{fake(B62, 22, 't')} msg_01{fake(B62, 22, 'm')}",
    "ulid": "event_id=01SQX394KYNMRD3KKPG3RCEEQA type=user.registry",
    "placeholders": "DB_PASSWORD=[REDACTED:dotenv-value:3f9a1c2e]\nAPI_KEY=[REDACTED:openai-api-key:0a1b2c3d]",
    "masked placeholders": "DB_PASSWORD=" + " " * 33 + "\nAPI_KEY= " + " " * 40 + "\n",
    "usage": USAGE,
    "python code": (
        "def login(user: str, password: str) -> Token:\n"
        "    token = self.client.get_token(user, password)\n"
        "    api_key = os.environ.get('API_KEY')\n"
        "    secret = settings.SECRET_KEY\n"
        "    return Token(token=token, expires=3600)\n"
    ),
    "typescript": "interface Creds { password: string; token?: string }\nconst auth = useAuth();",
    "github actions": "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
    "pytest": "tests/test_auth.py::test_token_refresh PASSED\n==== 12 passed in 0.51s ====",
    "tokenizer config": '{"bos_token": "<s>", "eos_token": "</s>", "pad_token": "[PAD]", "model_max_length": 2048}',
    "kubeconfig ca": f"- cluster:\n    certificate-authority-data: {CA_DATA}\n    server: https://10.0.0.1:6443",
    "timestamps": "2026-01-14T10:06:31Z 10:06:31 00:1a:2b:3c:4d:5e",
    "unix account file": "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
    # Real transcripts (issue 12): a scanner's coloured report, Markdown after a label, sudoers,
    # a path after a label, elided and documentation placeholders.
    "ansi colours": "\x1b[1;3;mtoken: \x1b[0m found 2 secret(s) \x1b[1;31msecret\x1b[0m: \x1b[33mHIGH\x1b[0m",
    "markdown after a label": "| Setting | Value |\n| PasswordComplexity: **0** | MinimumPasswordLength: **14** |",
    "sudoers": "deploy ALL=(ALL) NOPASSWD: ALL\n%admin ALL=(ALL:ALL) NOPASSWD:ALL",
    "path after a label": "password_file: /etc/app/secrets/db.txt\nprivate_key_path: ./keys/id_rsa",
    "elided keys": "ANTHROPIC_API_KEY=sk-ant-api03-xxx...xxx\nOPENAI_API_KEY=sk-proj-abc…xyz\nAPI_KEY=<your-key>",
    "changeme": "password: changeme\nDB_PASSWORD=changeme\nADMIN_PASSWORD=change_me",
    "names that start with a number": 'NAMES = ("1password-secret' + '-key", "1password-service-account-token",)\n'
    "TOKEN=2fa-recovery-codes",
    "escape literals": 'cases = {"bad": b\'{"secret": "\\xff"}\'}\npassword = "\\x00\\x01"\nsep = {"token": "\\u0000"}',
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(NOT_SECRETS))
def test_nothing_matches_in_plain_text(name: str) -> None:
    hits = scan(NOT_SECRETS[name])
    assert not hits, f"{name}: {[(h.detector, h.start, h.end) for h in hits]}"


@pytest.mark.parametrize(
    "name", ["kubeconfig ca", "certificate", "placeholders", "masked placeholders"]
)
def test_nothing_matches_in_credential_context(name: str) -> None:
    for context in (DOTENV, CREDENTIALS):
        hits = scan(NOT_SECRETS[name], context)
        assert not hits, f"{name}: {[(h.detector, h.start, h.end) for h in hits]}"


def test_env_dump_of_ordinary_variables() -> None:
    dump = "SHELL=/bin/zsh\nUSER=sybil\nHOME=/Users/sybil\nPWD=/Users/sybil/code\nSHLVL=2\nCLAUDECODE=1\n"
    assert not scan(dump, DOTENV)


LABELS = ["DB_PASSWORD", "api_key", "client_secret", "GITHUB_TOKEN", "password", "AccountKey"]
SHAPES = ["{label}={value}", '"{label}": "{value}"', "{label}: {value}", "export {label}='{value}'",
          "postgres://app:{value}@db/x", "curl -u app:{value} https://x", "--password {value}",
          "Authorization: Bearer {value}", "machine h login u password {value}"]  # fmt: skip
KINDS = sorted({getattr(rule, "kind", "secret") for rule in ALL_RULES})


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    fingerprint=st.text(alphabet="0123456789abcdef", min_size=8, max_size=8),
    label=st.sampled_from(LABELS),
    shape=st.sampled_from(SHAPES),
    masked=st.booleans(),
    context=st.sampled_from([PLAIN, DOTENV, CREDENTIALS]),
)
def test_placeholders_are_never_secrets(
    kind: str, fingerprint: str, label: str, shape: str, masked: bool, context: ScanContext
) -> None:
    """Our own placeholders, as written and as the scanner masks them (spaces), never match."""
    placeholder = f"[REDACTED:{kind}:{fingerprint}]"
    value = " " * len(placeholder) if masked else placeholder
    text = shape.format(label=label, value=value)
    hits = scan(text, context)
    assert not hits, [(h.detector, h.start, h.end) for h in hits]
