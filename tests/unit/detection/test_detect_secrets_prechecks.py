"""The prechecks of slow detect-secrets plugins (detect_secrets_adapter._PLUGIN_PRECHECKS) are
necessary conditions: wherever a plugin's own pattern matches, its precheck matches too, so
searching it first never loses a hit. Values are built at run time."""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection import detect_secrets_adapter as adapter

PLUGINS = {p.class_name: p for p in adapter._shared_plugins().regex_plugins}
CHECKED = sorted(adapter._PLUGIN_PRECHECKS)

_RNG = random.Random(11)
B64URL = string.ascii_letters + string.digits + "_-"


def _run(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


PREFIXES = ["", "ibm", "IBM_", "ibm-cloud-", "cloud_iam_", "ibm_cos_hmac_", "cos-", "[", '["', "'"]
NAMES = ["key", "KEY", "api_key", "apikey", "pwd", "password", "pass", "token", "secret_key",
         "secret-access-key", "secretaccesskey", "SECRET_ACCESS_KEY"]  # fmt: skip
CLOSERS = ["", '"', "'", "]", '"]', "']"]
OPERATORS = ["=", ":", ":=", "=>", " ", "   ", "::", " = ", ": ", '="', ": '"]
VALUES = [_run(B64URL, 44), _run("0123456789abcdef", 48), _run("0123456789ABCDEF", 48)]


def test_every_precheck_belongs_to_a_loaded_plugin() -> None:
    assert CHECKED == ["IbmCloudIamDetector", "IbmCosHmacDetector"]
    for name in CHECKED:
        assert PLUGINS[name].precheck is not None, name


def _holds(text: str) -> None:
    for name in CHECKED:
        plugin = PLUGINS[name]
        if any(pattern.search(text) for pattern in plugin.patterns):
            assert plugin.precheck is not None and plugin.precheck.search(text), (name, text)


def _table() -> list[str]:
    return [
        f"x {prefix}{name}{closer}{operator}{value} y"
        for prefix in PREFIXES
        for name in NAMES
        for closer in CLOSERS
        for operator in OPERATORS
        for value in VALUES
    ]


def test_a_precheck_matches_wherever_its_plugin_does() -> None:
    texts = _table()
    for text in texts:
        _holds(text)
    for name in CHECKED:  # the table does reach each plugin's pattern, many times
        hits = sum(any(p.search(t) for p in PLUGINS[name].patterns) for t in texts)
        assert hits > 100, (name, hits)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*PREFIXES, *NAMES, *CLOSERS, *OPERATORS, *VALUES, "\n", "\t", "ibm", "="]),
        max_size=8,
    )
)
def test_a_precheck_matches_wherever_its_plugin_does_in_any_mix(parts: list[str]) -> None:
    _holds("".join(parts))
