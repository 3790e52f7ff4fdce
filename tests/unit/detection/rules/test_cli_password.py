"""Passwords and tokens on command lines."""

from __future__ import annotations

import pytest
from rule_cases import (
    B62,
    Case,
    check,
    check_through_the_gates,
    fake,
    ids,
    neg,
    pos,
    whole_scanners,
)

from scrubber.detection.rules import cli_password as cli

PW = fake(B62 + "!#%^*", 18, "cli")
DASH_PW = "-" + fake(B62, 12, "dash")
KEY = fake(B62, 24, "user-key")

CASES: list[Case] = [
    pos(cli.MYSQL_PASSWORD, f"mysql -h db.internal -u root -p'{PW}' app -e 'SHOW TABLES;'", PW),
    pos(cli.MYSQL_PASSWORD, f"mysqldump -uroot -p{PW} app > dump.sql", PW),
    neg(cli.MYSQL_PASSWORD, "mysql -u root -p app", note="prompts for the password"),
    pos(cli.SSHPASS_PASSWORD, f"sshpass -p '{PW}' ssh deploy@host uptime", PW),
    pos(cli.REDIS_CLI_PASSWORD, f"redis-cli -h cache -a '{DASH_PW}' INFO keyspace", DASH_PW,
        note="password starting with a dash"),
    pos(cli.REGISTRY_LOGIN_PASSWORD, f"docker login -u bob -p '{PW}' registry.example.com", PW),
    neg(cli.REGISTRY_LOGIN_PASSWORD, "echo $CR_PAT | docker login ghcr.io -u bob --password-stdin"),
    pos(cli.MONGO_PASSWORD, f"mongosh --host db -u admin -p '{PW}' --authenticationDatabase admin", PW),
    pos(cli.SQLCMD_PASSWORD, f"sqlcmd -S db -U sa -P {PW} -Q 'select 1'", PW),
    pos(cli.LDAP_PASSWORD, f"ldapsearch -x -D cn=admin -w {PW} -b dc=x", PW),
    pos(cli.ZIP_PASSWORD, f"zip -r -P {PW} backup.zip data/", PW),
    pos(cli.ZIP_PASSWORD, f"unzip -P '{PW}' backup.zip", PW),
    neg(cli.ZIP_PASSWORD, "zip -r backup.zip data/ -x '*.pyc'"),
    pos(cli.SEVEN_ZIP_PASSWORD, f"7z a -p{PW} -mhe=on backup.7z data/", PW),
    neg(cli.SEVEN_ZIP_PASSWORD, "7z a -p backup.7z data/", note="prompts"),
    pos(cli.OPENSSL_ENC_PASSWORD, f"openssl enc -aes-256-cbc -salt -in a -out a.enc -k {PW}", PW),
    neg(cli.OPENSSL_ENC_PASSWORD, "openssl req -new -keyout k.pem -out r.csr"),
    pos(cli.MOSQUITTO_PASSWORD, f"mosquitto_pub -h broker -u dev -P {PW} -t t -m hi", PW),
    neg(cli.MOSQUITTO_PASSWORD, "mosquitto_sub -h broker -p 8883 -t t", note="-p is the port"),
    pos(cli.SMB_USER_PASSWORD, f"smbclient //nas/share -U 'admin%{PW}' -c ls", PW),
    neg(cli.SMB_USER_PASSWORD, "smbclient //nas/share -U admin -c ls"),
    neg(cli.SMB_USER_PASSWORD, "see smbclient(1): -U [DOMAIN\\]USERNAME[%PASSWORD]).", note="manual"),
    neg(cli.ZIP_PASSWORD, "zip(1) -P password; unzip(1) -P password"),
    pos(cli.SQLPLUS_PASSWORD, f"sqlplus -s scott/{PW}@orcl @run.sql", PW),
    neg(cli.SQLPLUS_PASSWORD, "sqlplus /nolog; sqlplus scott@orcl"),
    pos(cli.LONG_FLAG_SECRET, f"mysql --password={PW} app", PW),
    pos(cli.LONG_FLAG_SECRET, f"huggingface-cli login --token {PW}", PW),
    neg(cli.LONG_FLAG_SECRET, "pass credentials via the --username and --password options"),
    neg(cli.LONG_FLAG_SECRET, 'gh auth login --token "$(cat token.txt)"'),
    neg(cli.LONG_FLAG_SECRET, "vault login --token-file /run/token"),
    pos(cli.LONG_FLAG_SECRET, f"curl --oauth2-bearer {PW} https://api.example.com", PW),
    neg(cli.LONG_FLAG_SECRET, "set the --api-key flag, then --token ./token.txt"),
    neg(cli.LONG_FLAG_SECRET, "tool --token https://example.com/oauth/token"),
    pos(cli.SINGLE_DASH_SECRET, f"keytool -list -keystore ks.jks -storepass {PW}", PW),
    pos(cli.SINGLE_DASH_SECRET, f"openssl rsa -in k.pem -passin pass:{PW} -out k2.pem", PW),
    pos(cli.CURL_USER_PASSWORD, f"curl -u elastic:{PW} https://localhost:9200", PW),
    pos(cli.CURL_USER_PASSWORD, f"curl -X POST https://x/a?b=1&c=2 \\\n  -H 'Accept: */*' \\\n  --user 'dev:{PW}'",
        PW, note="continued lines"),
    pos(cli.CURL_USER_PASSWORD, f"curl --user kevin:'{PW}' -X PATCH https://x", PW),
    neg(cli.CURL_USER_PASSWORD, "curl -u $USER:$PASS https://x"),
    neg(cli.CURL_USER_PASSWORD, "curl -u <user:password> https://x"),
    neg(cli.CURL_USER_PASSWORD, "curl -u admin: https://x", note="prompts"),
    pos(cli.CURL_USER_BRACED_PASSWORD, f'curl -X POST --user "{{{KEY}}}":"{{{PW}}}" https://x', PW,
        note="values in braces"),
    neg(cli.CURL_USER_BRACED_PASSWORD, 'curl -u "{user}:{pw}" https://x; curl -u {u}:{self.password} x'),
    pos(cli.CURL_USER_KEY, f"curl https://api.example.com/v1/charges -u {KEY}:", KEY,
        note="the API key as the user name"),
    pos(cli.CURL_USER_KEY, f'curl --user "{{{KEY}}}":"{{{PW}}}" https://x', KEY, note="braced"),
    neg(cli.CURL_USER_KEY, "curl -u elastic-admin-2024:x https://x; curl -u me@example.com:x y"),
    neg(cli.CURL_USER_KEY, "curl -u $API_KEY: https://x; curl -u {api_key}: https://x"),
    pos(cli.SUDO_STDIN_PASSWORD, f"echo '{PW}' | sudo -S apt-get update", PW),
    neg(cli.MYSQL_PASSWORD, "ssh -p 2222 host; mkdir -p /tmp/x; psql -p 5432", note="other -p flags"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_cli_password(case: Case) -> None:
    check(case)


GATE_CASES: list[Case] = [
    pos(cli.REGISTRY_LOGIN_PASSWORD, f"docker login -u bob -p '{PW}' registry.example.com", PW),
    pos(cli.REGISTRY_LOGIN_PASSWORD, f"podman\tlogin -u bob -p {PW} quay.io", PW,
        note="a tab: escaped on the raw line"),
    pos(cli.REGISTRY_LOGIN_PASSWORD, f"helm registry  login r.example.com -u bob -p {PW}", PW),
]  # fmt: skip


@pytest.mark.parametrize("scanner", whole_scanners(), ids=["python", "auto"])
@pytest.mark.parametrize("case", GATE_CASES, ids=ids(GATE_CASES))
def test_a_registry_login_is_found_through_the_gates(case: Case, scanner: object) -> None:
    check_through_the_gates(case, scanner)


@pytest.mark.parametrize("scanner", whole_scanners(), ids=["python", "auto"])
def test_the_word_login_alone_does_not_wake_the_registry_rule(scanner: object) -> None:
    """`login` is in every web app's code and logs: it woke the rule on a fifth of the lines
    of real transcripts until the gate asked for the tool's name before it."""
    data = b'{"type":"user","message":{"content":"POST /api/login 200; see LoginForm.tsx"}}'
    names = [d.name for d in scanner.index.detectors]  # type: ignore[attr-defined]
    woken = {names[i] for i in scanner.index.line_detectors(data)}  # type: ignore[attr-defined]
    assert "registry-login-password-flag" not in woken
