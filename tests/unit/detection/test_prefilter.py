"""The literal prefilter: hyperscan and the pure-Python fallback must give the same answers.

The scanner skips every line whose raw bytes hold none of the detectors' anchors, so a literal
the prefilter misses is a secret the scan never looks at. Both engines are checked against a
plain reference (`bytes.find` on lower-cased data) on arbitrary bytes and literal sets.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection import prefilter
from scrubber.detection.gate_index import GateIndex
from scrubber.detection.gates import literal_gate
from scrubber.detection.prefilter import (
    HyperscanGateMatcher,
    HyperscanLiteralSet,
    LiteralSet,
    PythonGateMatcher,
    PythonLiteralSet,
    literal_set,
    load_hyperscan,
)
from scrubber.detection.registry import build_detectors
from scrubber.errors import UsageError
from scrubber.policy.model import Policy
from tests.skips import INSTALL_HYPERSCAN

HYPERSCAN = load_hyperscan()
needs_hyperscan = pytest.mark.skipif(HYPERSCAN is None, reason=INSTALL_HYPERSCAN)


def reference(literals: list[bytes], data: bytes) -> set[int]:
    """The definition: literal i is present when it occurs in data, ASCII case ignored."""
    lowered = data.lower()
    return {i for i, lit in enumerate(literals) if lit.lower() in lowered}


def engines(literals: list[bytes]) -> list[tuple[str, LiteralSet]]:
    found: list[tuple[str, LiteralSet]] = [("python", PythonLiteralSet(literals))]
    if HYPERSCAN is not None:
        found.append(("hyperscan", HyperscanLiteralSet(literals, HYPERSCAN)))
    return found


# Literals: short, from a small alphabet so that they overlap, contain each other and differ
# only by case; plus any byte at all (NUL, newline, regex metacharacters, non-ASCII).
_small = st.binary(min_size=1, max_size=4).filter(bool)
_letters = st.text(alphabet="abAB_-", min_size=1, max_size=5).map(str.encode)
literal_lists = st.lists(st.one_of(_letters, _letters, _small), min_size=0, max_size=12)
data_bytes = st.one_of(
    st.binary(max_size=200),
    st.text(alphabet="abAB_- \n\0", max_size=200).map(str.encode),
)


@pytest.mark.parametrize(
    ("literals", "data", "expected"),
    [
        ([b"akia", b"ghp_"], b"key AKIA123 and GHP_x", {0, 1}),
        ([b"akia", b"ghp_"], b"nothing here", set()),
        ([b"abc", b"bcd"], b"xabcdx", {0, 1}),  # the second starts inside the first's match
        ([b"gh", b"ghp_"], b"ghp_", {0, 1}),  # a literal inside a longer one is implied by it
        ([b"ghp_", b"gh"], b"ghp_", {0, 1}),
        ([b"aaa"], b"aaaa", {0}),
        ([b"://"], b"postgres://u:p@h", {0}),  # pragma: allowlist secret
        ([b"key"], b"", set()),
        ([], b"anything", set()),
        ([b"ab", b"AB"], b"xAbx", {0, 1}),  # the same literal twice, by case: both reported
        ([b"\0a"], b"x\0A", {0}),  # a NUL byte is an ordinary byte
        ([b"a.c"], b"abc", set()),  # regex metacharacters are literal
        ([b"a.c"], b"a.c", {0}),
        ([b"\xe9t\xe9"], b"\xc9T\xc9", set()),  # case is ASCII only: bytes, not text
    ],
)
def test_known_answers(literals: list[bytes], data: bytes, expected: set[int]) -> None:
    assert reference(literals, data) == expected
    for name, engine in engines(literals):
        assert engine.present(data) == expected, name


@given(literal_lists, data_bytes)
@settings(max_examples=300, deadline=None)
def test_python_engine_matches_the_definition(literals: list[bytes], data: bytes) -> None:
    assert PythonLiteralSet(literals).present(data) == reference(literals, data)


@needs_hyperscan
@given(literal_lists, data_bytes)
@settings(max_examples=300, deadline=None)
def test_hyperscan_and_python_agree(literals: list[bytes], data: bytes) -> None:
    assert HYPERSCAN is not None
    fast = HyperscanLiteralSet(literals, HYPERSCAN).present(data)
    assert fast == PythonLiteralSet(literals).present(data)
    assert fast == reference(literals, data)


def _real_literals() -> list[bytes]:
    """The ASCII prefixes of every detector's anchors (what their literal gates look for)."""
    found = {
        anchor[: len(anchor) - len(anchor.lstrip("".join(map(chr, range(128)))))]
        for det in build_detectors(Policy.default())
        for anchor in det.anchors
        if literal_gate(anchor) is not None
    }
    return sorted(lit.encode() for lit in found if lit)


REAL_LITERALS = _real_literals()
REAL_ENGINES = engines(REAL_LITERALS)


@given(st.binary(max_size=400), st.lists(st.integers(0, len(REAL_LITERALS) - 1), max_size=8))
@settings(max_examples=200, deadline=None)
def test_engines_agree_on_the_scanners_real_anchors(data: bytes, picks: list[int]) -> None:
    # Arbitrary bytes rarely hold an anchor: splice some in, in mixed case.
    spliced = b"|".join([data[:50], *(REAL_LITERALS[i].upper() for i in picks), data[50:]])
    for chunk in (data, spliced):
        expected = reference(REAL_LITERALS, chunk)
        for name, engine in REAL_ENGINES:
            assert engine.present(chunk) == expected, name


def test_the_scanners_anchors_are_nonempty_and_unique_by_case() -> None:
    literals = [lit.decode() for lit in REAL_LITERALS]
    assert literals
    assert all(literals)
    assert len({lit.lower() for lit in literals}) == len(literals)


def test_engine_python_never_loads_hyperscan(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden() -> Any:
        raise AssertionError("hyperscan must not be loaded for engine='python'")

    monkeypatch.setattr(prefilter, "load_hyperscan", forbidden)
    assert isinstance(literal_set([b"akia"], engine="python"), PythonLiteralSet)


def test_auto_falls_back_to_python_without_hyperscan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefilter, "load_hyperscan", lambda: None)
    chosen = literal_set([b"akia"], engine="auto")
    assert isinstance(chosen, PythonLiteralSet)
    assert chosen.present(b"AKIA") == {0}


def test_engine_hyperscan_without_hyperscan_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefilter, "load_hyperscan", lambda: None)
    with pytest.raises(UsageError, match="hyperscan"):
        literal_set([b"akia"], engine="hyperscan")


@needs_hyperscan
def test_auto_uses_hyperscan_when_installed() -> None:
    assert isinstance(literal_set([b"akia"], engine="auto"), HyperscanLiteralSet)
    assert isinstance(literal_set([], engine="hyperscan"), HyperscanLiteralSet)
    assert literal_set([], engine="hyperscan").present(b"akia") == set()


# -- pattern sets (simple regexes, both engines) ----------------------------------------------

SHAPES = [
    rb"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}",
    rb"[0-9]:[0-9A-Za-z_-]{35}",
    rb"(?:AC|SK)[a-z0-9]{32}",
]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", set()),
        (b"nothing here", set()),
        (b"x." + b"a" * 6 + b"." + b"b" * 27, {0}),
        (b"123:" + b"c" * 35, {1}),
        (b"SK" + b"0f" * 16 + b" and 7:" + b"d" * 35, {1, 2}),
    ],
)
def test_pattern_set_engines_agree(data: bytes, expected: set[int]) -> None:
    from scrubber.detection.prefilter import PythonPatternSet, load_hyperscan, pattern_set

    assert PythonPatternSet(SHAPES).matching(data) == expected
    if load_hyperscan() is not None:
        assert pattern_set(SHAPES, engine="hyperscan").matching(data) == expected


@given(st.binary(max_size=300))
def test_pattern_set_engines_agree_on_any_bytes(data: bytes) -> None:
    from scrubber.detection.prefilter import PythonPatternSet, load_hyperscan, pattern_set

    if load_hyperscan() is None:
        pytest.skip(INSTALL_HYPERSCAN)
    assert pattern_set(SHAPES).matching(data) == PythonPatternSet(SHAPES).matching(data)


# -- gates (regexes and literals): both engines must wake the same detectors -------------------

_INDEX = GateIndex(build_detectors(Policy.default()), engine="python")
_GATE_SPECS = [(t.encode("latin-1"), r.encode("latin-1"), c) for t, r, c in _INDEX.gates]
_EVERY_END = [  # the gates whose every match the scanner asks for (sensitive-assignment's)
    g
    for g, owners in enumerate(_INDEX._owners)
    if any(_INDEX.detectors[d].name == "sensitive-assignment" for d, _ in owners)
]
_PYTHON_GATES = PythonGateMatcher(_GATE_SPECS, every_end=_EVERY_END)
# Compiled once (most of a second): hypothesis calls the test hundreds of times.
_HYPERSCAN_GATES = (
    HyperscanGateMatcher(_GATE_SPECS, HYPERSCAN, every_end=_EVERY_END, deferred=_INDEX.deferred)
    if HYPERSCAN
    else None
)
_FAKE = "xK9" + "mQ2vL7pR4t" * 5  # built at run time, not a real credential
_GATE_SAMPLES = [
    s.encode()
    for s in (
        "DB_PASS" + "WORD=" + _FAKE[:12],
        "api_key = '" + _FAKE + "'",
        "token: " + _FAKE,
        '\\"client_secret\\": \\"' + _FAKE + '\\"',
        "ghp_" + _FAKE[:36],
        "postgres://app:" + _FAKE[:10] + "@db:5432/x",
        "machine h login u pass" + "word " + _FAKE[:8],
        "x:5432:db:user:" + _FAKE[:9],
        "curl -u admin:" + _FAKE[:8] + " https://h",
        "1234567890123456|" + _FAKE[:27],
        "eyJ" + _FAKE[:20] + "." + _FAKE[:20],
        # Gates that wait for a rare literal (Gate.rare): a table's bar, an email's `@`,
        # markup, a query string.
        "| api key | the service's | " + _FAKE[:12] + " |",
        "stripe: " + _FAKE[:12] + " / ops@example.com",
        "<password>{" + _FAKE[:16] + "}</password>",
        "https://h/x?access_token=" + _FAKE[:16],
    )
]


@needs_hyperscan
@given(
    st.binary(max_size=300),
    st.lists(st.sampled_from(_GATE_SAMPLES), max_size=4),
    st.sampled_from([b"", b"\\n", b"\\t", b" ", b'"']),
)
@settings(max_examples=200, deadline=None)
def test_gate_engines_agree(data: bytes, picks: list[bytes], glue: bytes) -> None:
    fast = _HYPERSCAN_GATES
    assert fast is not None
    for chunk in (data, glue.join([data[:100], *picks, data[100:]])):
        assert fast.present(chunk) == _PYTHON_GATES.present(chunk)
        # Every end hyperscan reports for the gates asked for, the regex finds a match ending
        # there too (it reports only non-overlapping ones, hyperscan every one).
        fast_ends = {g for g, _ in fast.present_and_ends(chunk)[1]}
        slow_ends = {g for g, _ in _PYTHON_GATES.present_and_ends(chunk)[1]}
        assert fast_ends == slow_ends


@needs_hyperscan
def test_a_second_matcher_of_the_same_gates_reuses_what_this_process_compiled(
    tmp_path: Any,
) -> None:
    # A fresh home has an empty file cache; compiling again there cost most of a second per
    # scanner (tests build hundreds). The second matcher must share the first one's databases,
    # still write its own home's cache file, and answer the same.
    gates = [(rb"tok_[a-z]{8}", rb"tok_[a-z]{8}", False), (rb"(?i)secret", rb"secret", True)]
    first = HyperscanGateMatcher(gates, HYPERSCAN, tmp_path / "home-a")
    second = HyperscanGateMatcher(gates, HYPERSCAN, tmp_path / "home-b")
    assert second._raw is first._raw and second._text is first._text
    assert list((tmp_path / "home-b").glob("gates-*.hsdb"))
    other = HyperscanGateMatcher([(rb"other_[0-9]{4}", rb"other_[0-9]{4}", False)], HYPERSCAN)
    assert other._raw is not first._raw
    line = b'{"a": "tok_abcdefgh SECRET"}'
    assert first.present(line) == second.present(line) == {0, 1}
