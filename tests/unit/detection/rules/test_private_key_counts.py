"""The PEM rule's two shortcuts give exactly what the plain regexes give: the base64 share of a
body (counted with `bytes.translate` when only whitespace separates its lines) and where the
separators that end a body start (searched from after the body's last non-separator)."""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection.detector import ScanContext, SourceKind
from scrubber.detection.rules import private_key

# Characters the body regexes care about: base64, every separator form, header pieces, others.
ALPHABET = "AZaz09+/=nrt\\\t\n\r \x1c\u2003→: -PVx٣é"


def share_by_regex(body: str) -> tuple[int, int]:
    core = private_key._STRIP_NOISE.sub("", private_key._HEADER.sub("", body))
    good = sum(1 for c in core if c in private_key._BASE64_CHARS)
    return good, len(core) - good


def tail_by_regex(text: str, first: int, stop: int) -> int:
    trail = private_key._TRAILING_NOISE.search(text, first, stop)
    return trail.start() if trail else stop


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60))
def test_base64_share_is_the_regexes(body: str) -> None:
    assert private_key._base64_share(body) == share_by_regex(body)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60), st.data())
def test_noise_tail_is_the_regexes(text: str, data: st.DataObject) -> None:
    first = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(first, len(text)))
    assert private_key._noise_tail_from(text, first, stop) == tail_by_regex(text, first, stop)


def test_known_counts() -> None:
    body = "MIIE" * 10 + "\n  12→" + "Proc-Type: 4,ENCRYPTED\n" + "ab\\ncd"
    assert private_key._base64_share(body) == share_by_regex(body)
    assert private_key._base64_share("MIIE\nAB==\n") == (8, 0)
    assert private_key._noise_tail_from("MIIE\\n  12→\n", 0, 12) == 4


# Body lines, every line break form, line-number prefixes and noise: what `_BODY_RUN` reads.
# A 64-character base64 body line, built at run time (the repository audits itself).
_LINE = "".join(
    random.Random(64).choice(string.ascii_letters + string.digits + "+/") for _ in range(64)
)
_PIECES = [_LINE, _LINE[:41], _LINE[:39], "==", "\n", "\\n", "\\r\\n", "\r\n", " ", "\t", "12→",
           "7\t", "x", "\\", "n", "-----BEGIN RSA PRIVATE KEY-----", "é"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_body_runs_are_the_regexes_matches(pieces: list[str]) -> None:
    """The runs tried only at line starts are those a search of every position finds."""
    text = "".join(pieces)
    expected = [m.span() for m in private_key._BODY_RUN.finditer(text)]
    assert [m.span() for m in private_key._body_runs(text)] == expected


def _key_file_body_by_regex(text: str) -> list[tuple[int, int]]:
    """KeyFileBodyRule as first written: every position searched, armours looked for anew;
    then, as the rule says since, a body's short last line that is what is left of it (padded
    or random-looking, never a plain word) is its tail."""
    spans = []
    for run in private_key._BODY_RUN.finditer(text):
        armours = private_key._ANY_BEGIN.findall(text, 0, run.start())
        if armours and "PRIVATE" not in armours[-1]:
            continue
        lead = private_key._LEADING_NOISE.match(text, run.start(), run.end())
        start = lead.end() if lead else run.start()
        trail = private_key._TRAILING_NOISE.search(text, start, run.end())
        end = trail.start() if trail else run.end()
        last = private_key._LAST_BODY_LINE.match(text, run.end())
        if last is not None and private_key._body_tail(last.group("body")):
            end = last.end("body")
        if end > start:
            spans.append((start, end))
    return spans


_ARMOURED = [*_PIECES, "-----BEGIN CERTIFICATE-----", "-----BEGIN PUBLIC KEY-----", "-----"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ARMOURED), max_size=16))
def test_key_file_body_is_the_plain_search(pieces: list[str]) -> None:
    text = "".join(pieces)
    context = ScanContext(source=SourceKind.PRIVATE_KEY_FILE)
    found = [(h.start, h.end) for h in private_key.KEY_FILE_BODY.find(text, context)]
    assert found == _key_file_body_by_regex(text)
