"""`.netrc`, `.pgpass`, docker `config.json`, `.npmrc`."""

from __future__ import annotations

import base64

import pytest
from rule_cases import B62, CREDENTIALS, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import credential_files as cf

PW1 = fake(B62 + "%^*", 18, "n1")
PW2 = fake(HEX, 40, "n2")
NETRC = f"machine api.github.com\n  login grace\n  password {PW1}\nmachine example.com login bob password {PW2}\n"
NETRC_READ = "\n".join(f"{i + 1:6d}→{line}" for i, line in enumerate(NETRC.splitlines()))
PG1 = fake(B62 + "*-_", 20, "pg1")
WEAK = "hunter" + "2"  # weak passwords count too; kept out of the source as a literal
PGPASS = (
    f"postgres.prod.svc.cluster.local:5432:app:readonly:{PG1}\n127.0.0.1:5432:*:postgres:{WEAK}\n"
)
AUTH = base64.b64encode(f"frank:{fake(B62, 20, 'docker')}".encode()).decode()
DOCKER = '{\n\t"auths": {\n\t\t"ghcr.io": {\n\t\t\t"auth": "' + AUTH + '"\n\t\t}\n\t}\n}\n'
NPM_TOKEN = join("np", "m_", fake(B62, 36, "npmrc"))
LEGACY_AUTH = base64.b64encode(b"nia:" + fake(B62, 16, "nexus").encode()).decode()
NPMRC = (f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={NPM_TOKEN}\n"
         f"//nexus.corp.example.com/repository/npm/:_auth={LEGACY_AUTH}\nalways-auth=true\n")  # fmt: skip

CASES: list[Case] = [
    pos(cf.NETRC_PASSWORD, NETRC, PW1, PW2),
    pos(cf.NETRC_PASSWORD, NETRC_READ, PW1, PW2, note="Read prefixes"),
    pos(cf.NETRC_PASSWORD, NETRC.replace("\n", "\\n"), PW1, PW2, note="escaped"),
    pos(cf.NETRC_PASSWORD, f"default login anonymous password {PW1}", PW1),
    neg(cf.NETRC_PASSWORD, 'def setpassword(self, pwd):\n    """Set default password for encrypted files."""'),
    pos(cf.NETRC_GREP_PASSWORD, f"/home/u/.netrc:3:  password {PW1}", PW1),
    pos(cf.NETRC_CONTEXT_PASSWORD, f"  password {PW1}\n", PW1, context=CREDENTIALS),
    neg(cf.NETRC_CONTEXT_PASSWORD, f"  password {PW1}\n", note="plain context"),
    pos(cf.PGPASS_PASSWORD, PGPASS, PG1, WEAK),
    pos(cf.PGPASS_PASSWORD, f"     1→db.example.com:5432:*:app:{PG1}\n", PG1, note="Read prefix"),
    pos(cf.PGPASS_PASSWORD, f"/home/u/.pgpass:1:localhost:5432:*:app:{PG1}", PG1, note="grep prefix"),
    pos(cf.PGPASS_PASSWORD, f"x\\nlocalhost:5432:*:app:{PG1}\\n", PG1, note="escaped"),
    neg(cf.PGPASS_PASSWORD, "root:x:0:0:root:/root:/bin/bash", note="/etc/passwd"),
    neg(cf.PGPASS_PASSWORD, "00:11:22:33:44:55 10:06:31", note="MAC and time"),
    neg(cf.PGPASS_PASSWORD, "src/main.c:12:5: error: expected ';'", note="compiler output"),
    pos(cf.DOCKER_CONFIG_AUTH, DOCKER, AUTH),
    neg(cf.DOCKER_CONFIG_AUTH, '{"auth": "' + base64.b64encode(b"no colon here").decode() + '"}'),
    pos(cf.DOCKER_CONFIG_TOKEN, '{"identitytoken": "' + fake(B62, 40, "idt") + '"}', fake(B62, 40, "idt")),
    pos(cf.NPMRC_AUTH, NPMRC, NPM_TOKEN, LEGACY_AUTH),
    neg(cf.NPMRC_AUTH, "//registry.npmjs.org/:_authToken=${NPM_TOKEN}"),
    neg(cf.NPMRC_AUTH, "//registry.npmjs.org/:_authToken=MYTOKEN", note="documentation"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_credential_files(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_a_tool_result_record_does_not_wake_the_pgpass_rule(engine: str) -> None:
    """Claude Code writes `"timestamp":"…T09:00:01.000Z","toolUseResult":{"stdout":` on every
    tool result: `:00:` and two "fields" across JSON quotes, which woke the rule (a parse and a
    walk of every such line) until its raw gate refused a bare quote."""
    import json

    from scrubber.detection.fingerprint import Fingerprinter
    from scrubber.detection.registry import build_detectors
    from scrubber.detection.scan import SecretScanner
    from scrubber.policy.model import Policy

    scanner = SecretScanner(
        build_detectors(Policy.default()), Fingerprinter(b"k" * 32), engine=engine
    )
    names = [d.name for d in scanner.index.detectors]

    def woken(record: dict[str, object]) -> set[str]:
        data = json.dumps(record, separators=(",", ":")).encode()
        return {names[i] for i in scanner.index.line_scan(data).woken}

    answer = {"type": "user", "timestamp": "2026-03-02T09:00:01.000Z",
              "toolUseResult": {"stdout": "ok", "stderr": ""}}  # fmt: skip
    assert "pgpass-password" not in woken(answer)
    line = f'db.example.com:5432:app"db:app:{PG1}'  # a quote in a field is escaped: still read
    answer["toolUseResult"] = {"stdout": f"cat ~/.pgpass\n{line}\n", "stderr": ""}
    assert "pgpass-password" in woken(answer)
