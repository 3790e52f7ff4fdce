"""The gates of detect-secrets' AWS and Telegram plugins are necessary conditions of their
patterns, on decoded text and on the raw JSONL line, and no longer wake on what every transcript
holds: `aws` in an `aws iam …` command or an ARN, a `sha256:` digest. Values built at run time."""

from __future__ import annotations

import json
import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection import detect_secrets_adapter as adapter
from scrubber.detection.detect_secrets_plugins import PLUGIN_GATES
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy

PLUGINS = {p.class_name: p for p in adapter._shared_plugins().regex_plugins}
SCANNERS = [
    SecretScanner(build_detectors(Policy.default()), Fingerprinter(b"g" * 32), engine=engine)
    for engine in ("python", "auto")
]
_RNG = random.Random(23)


def _run(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _raw_line(text: str) -> bytes:
    return json.dumps({"type": "user", "message": {"content": text}}).encode()


def _woken(scanner: SecretScanner, text: str) -> set[str]:
    names = [d.name for d in scanner.index.detectors]
    return {names[i] for i in scanner.index.line_detectors(_raw_line(text))}


def _gates_hold(gates: object, text: str) -> bool:
    """Whether one of the gates matches the text (UTF-8) and the raw line that holds it."""
    data, raw = text.encode("utf-8"), _raw_line(text)
    forms = [
        (
            re.compile(g.text.encode("latin-1"), re.I if g.caseless else 0),
            re.compile(g.raw_pattern.encode("latin-1"), re.I if g.caseless else 0),
        )
        for g in gates  # type: ignore[attr-defined]
    ]
    return any(t.search(data) for t, _ in forms) and any(r.search(raw) for _, r in forms)


FILLER = st.text(alphabet=string.ascii_letters + string.digits + " _-.\"'\t:=é", max_size=20)
KEYWORDS = st.sampled_from(["key", "pwd", "pw", "password", "pass", "token", "KEY", "Token"])


@settings(max_examples=300, deadline=None)
@given(
    FILLER, KEYWORDS, FILLER, st.sampled_from(['"', "'"]), st.sampled_from(["aws", "AWS", "Aws"])
)
def test_the_aws_gate_holds_for_the_plugins_secret_pattern(
    gap: str, keyword: str, gap2: str, quote: str, aws: str
) -> None:
    value = _run(string.ascii_letters + string.digits + "/+", 40)
    text = f"x {aws}{gap}{keyword}{gap2}{quote}{value}{quote} y"
    if any(p.search(text) for p in PLUGINS["AWSKeyDetector"].patterns):
        assert _gates_hold(PLUGIN_GATES["AWSKeyDetector"], text), text


def test_an_aws_secret_is_found_through_the_gates() -> None:
    value = _run(string.ascii_letters + string.digits + "/+", 40)
    text = f'aws_secret_key = "{value}"'
    assert any(p.search(text) for p in PLUGINS["AWSKeyDetector"].patterns)
    for scanner in SCANNERS:
        assert "detect-secrets" in _woken(scanner, text)


@pytest.mark.parametrize(
    "text",
    [
        "aws iam get-role --role-name deploy --output json",
        '{"Role": {"Arn": "arn:aws:iam::123456789012:role/deploy", "Path": "/"}}',
        "Digest: sha256:" + _run("0123456789abcdef", 64),
        "FROM node@sha256:" + _run("0123456789abcdef", 64),
    ],
)
def test_commands_arns_and_digests_wake_no_detect_secrets_plugin(text: str) -> None:
    for scanner in SCANNERS:
        assert not {"detect-secrets", "detect-secrets-shapes"} & _woken(scanner, text), text


def test_a_telegram_token_still_wakes_the_shapes() -> None:
    token = (
        f"{_RNG.randrange(10**8, 10**10)}:{_run(string.ascii_letters + string.digits + '_-', 35)}"
    )
    text = f"bot token {token}"
    assert any(p.search(text) for p in PLUGINS["TelegramBotTokenDetector"].patterns)
    for scanner in SCANNERS:
        assert "detect-secrets-shapes" in _woken(scanner, text)


B64URL = string.ascii_letters + string.digits + "_-"
IBM_NAMES = ["ibm_api_key", "IBM-CLOUD-IAM-KEY", "ibmcloud_token", "ibm_cos_secret_access_key",
             "cos_hmac_secret_key", "key", "password"]  # fmt: skip
IBM_VALUES = [_run(B64URL, 44), _run("0123456789abcdef", 48)]


@pytest.mark.parametrize("name", IBM_NAMES)
@pytest.mark.parametrize("operator", ["=", ": ", ":=", " => ", "  ", '": "', "='"])
@pytest.mark.parametrize("where", ["{a} ibm cloud", "ibm: {a}", "{a}"])
def test_the_ibm_gates_hold_for_the_plugins_patterns(name: str, operator: str, where: str) -> None:
    for value in IBM_VALUES:
        text = where.format(a=f'"{name}{operator}{value}"')
        for plugin in ("IbmCloudIamDetector", "IbmCosHmacDetector"):
            holds = any(p.search(text) for p in PLUGINS[plugin].patterns) and "ibm" in text.lower()
            if holds:
                assert _gates_hold(PLUGIN_GATES[plugin], text), (plugin, text)


def test_ibm_inside_a_random_id_wakes_no_detect_secrets_plugin() -> None:
    text = f'{{"requestId": "req_011C{_run(B64URL, 6)}iBm{_run(B64URL, 12)}"}}'
    for scanner in SCANNERS:
        assert "detect-secrets" not in _woken(scanner, text)
