"""Every value of a credential source (a `.env` read, an env dump, a secret dump)."""

from __future__ import annotations

import base64

import pytest
from rule_cases import B62, DOTENV, SECRET_DUMP, Case, check, fake, ids, neg, pos

from scrubber.detection.detector import ScanContext, SourceKind
from scrubber.detection.rules.assignment.credential_source import DOTENV_CONTEXT as RULE

APP_KEY = "base64:" + base64.b64encode(fake(B62, 32, "app").encode()).decode()
VALUE = "bar123"
ENV_DUMP = "\n".join(
    [
        "SHELL=/bin/zsh",
        "TERM=xterm-256color",
        "LANG=en_US.UTF-8",
        "PATH=/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME=/Users/sybil",
        "__CF_USER_TEXT_ENCODING=0x1F5:0x0:0x0",
        "XPC_SERVICE_NAME=0",
        "NODE_ENV=development",
        "LSCOLORS=Gxfxcxdxbxegedabagacad",
        f"APP_SEED={VALUE}",
        "TMPDIR=/var/folders/lp/qf7j1o/T/",
        "FEATURE_FLAGS=logger,version",
        "DB_HOST=db.internal",
        "DB_USER=svc_api",
        "AWS_REGION=us-east-1",
        "CREATED=2026-01-14T10:06:31Z",
        "AI_AGENT=claude-code_2-1-332_agent",
        "PYTEST_CURRENT_TEST=tests/unit/test_x.py::test_y (call)",
    ]
)
CERT_B64 = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
).decode()
KUBE_SECRET = (
    "apiVersion: v1\ndata:\n  password: cGFzc3dvcmQxMjM=\n  ca.crt: " + CERT_B64 + "\n"
    "kind: Secret\nmetadata:\n  name: db-secret\n  resourceVersion: \"12345\"\n"
    "  uid: 0b6d2c9e-3f7a-4a8e-9d1c-2b5e6f7a8b9c\ntype: Opaque\n"
)  # fmt: skip
INSPECT = f'"Env": ["PATH=/usr/local/bin", "WORKER_SEED={VALUE}", "LANG=C.UTF-8"]'

CASES: list[Case] = [
    pos(RULE, f"APP_KEY={APP_KEY}\nFOO={VALUE}\n", APP_KEY, VALUE, context=DOTENV),
    pos(RULE, f"     1→APP_KEY={APP_KEY}\n     2→FOO={VALUE}\n", APP_KEY, VALUE, context=DOTENV,
        note="Read prefixes"),
    pos(RULE, ENV_DUMP, VALUE, context=ScanContext(None, SourceKind.DOTENV, "printenv"),
        note="env dump keeps ordinary variables"),
    pos(RULE, f"declare -x APP_SEED=\"{VALUE}\"", VALUE, context=DOTENV, note="export -p"),
    pos(RULE, KUBE_SECRET, "cGFzc3dvcmQxMjM=", context=SECRET_DUMP),
    pos(RULE, INSPECT, VALUE, context=ScanContext(None, SourceKind.SECRET_DUMP, "docker inspect app")),
    neg(RULE, f"FOO={VALUE}\n", note="plain context"),
    neg(RULE, f"FOO={VALUE}\n", context=ScanContext(None, SourceKind.PRIVATE_KEY_FILE, "id_rsa")),
    neg(RULE, "FOO=" + " " * 30 + "\n", context=DOTENV, note="masked placeholder"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_dotenv_context(case: Case) -> None:
    check(case)
