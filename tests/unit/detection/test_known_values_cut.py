"""Cut copies of known values (cut_copies.py, through the value index): a value's start or end
of at least CUT_PIECE characters beyond its public prefix, at a string's edge or next to a
character the value cannot hold, is a copy; shorter pieces, pieces that run on into other
characters of the value's alphabet, a prefix alone and pieces that do not look random are not.
Both engines. Values are built at run time."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrubber.detection import cut_copies
from scrubber.detection import known_values as kv
from scrubber.detection.cut_copies import CUT_PIECE, CutForm, cut_pieces, json_escaped, plain
from scrubber.detection.known_values import KnownValues, ValueInfo
from scrubber.detection.placeholder import PLACEHOLDER_RE
from scrubber.detection.prefilter import load_hyperscan
from tests.skips import INSTALL_HYPERSCAN

ENGINES = ["python", *(["hyperscan"] if load_hyperscan() is not None else [])]
PREFIX = "gh" + "p_"
TOKEN_INFO = ValueInfo("github-token", "github-token", "cd" * 32, PREFIX)
INFO = ValueInfo("dotenv-value", "sensitive-assignment", "ab" * 32)
SCOPE = "s1"


def _random(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _index(engine: str, *values: tuple[str, ValueInfo]) -> kv.ValueIndex:
    known = KnownValues()
    for value, info in values:
        assert known.add(value, info, SCOPE)
    return known.index(engine)


def _shown(text: str, index: kv.ValueIndex) -> list[str]:
    return [text[s:e] for s, e, _ in index.text_copies(text, SCOPE)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_start_piece_at_a_strings_end_or_before_a_stop(engine: str) -> None:
    rng = random.Random(11)
    key = _random(rng, 40)
    index = _index(engine, (key, INFO))
    assert _shown(f"preview {key[:26]}", index) == [key[:26]]
    assert _shown(f"the key {key[:20]}... was used", index) == [key[:20]]
    assert _shown(f"x={key[:CUT_PIECE]}\n", index) == [key[:CUT_PIECE]]
    # Shorter than a piece, or running on into letters: another string, not this value.
    assert _shown(f"the key {key[: CUT_PIECE - 1]}...", index) == []
    assert _shown(f"the key {key[:20]}Q{_random(rng, 8)}", index) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_an_end_piece_after_a_stop(engine: str) -> None:
    rng = random.Random(12)
    key = _random(rng, 40)
    index = _index(engine, (key, INFO))
    assert _shown(f"tail {key[14:]} done", index) == [key[14:]]
    assert _shown(key[-CUT_PIECE:], index) == [key[-CUT_PIECE:]]
    assert _shown(f"tail Q{key[20:]}", index) == []  # runs on: some other token's end
    assert _shown(f"tail {key[-CUT_PIECE + 1 :]}", index) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_broken_by_a_line_break(engine: str) -> None:
    rng = random.Random(13)
    key = _random(rng, 40)
    index = _index(engine, (key, INFO))
    text = f"deploy with {key[:20]}\n{key[20:]} now"
    assert _shown(text, index) == [key[:20], key[20:]]
    redacted = index.redact(text, SCOPE)
    assert len(PLACEHOLDER_RE.findall(redacted)) == 2 and redacted.endswith(" now")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_public_prefix_is_never_counted(engine: str) -> None:
    rng = random.Random(14)
    token = PREFIX + _random(rng, 36)
    index = _index(engine, (token, TOKEN_INFO))
    cut = len(PREFIX) + CUT_PIECE
    assert _shown(f"p {token[:cut]}", index) == [token[:cut]]
    assert _shown(f"p {token[: cut - 1]}", index) == []  # 15 characters past the prefix
    assert _shown(f"p {PREFIX}\n{PREFIX}{_random(rng, 36)}", index) == []
    # Without its prefix declared, the same 15-character cut would be a piece.
    assert cut_pieces(token, PREFIX)[0] == token[:cut]
    assert cut_pieces(token)[0] == token[:CUT_PIECE]


def test_which_values_have_pieces() -> None:
    rng = random.Random(15)
    assert cut_pieces(_random(rng, CUT_PIECE)) == (None, None)  # a piece would be all of it
    assert cut_pieces(PREFIX + _random(rng, CUT_PIECE), PREFIX) == (None, None)
    longer = _random(rng, CUT_PIECE + 1)
    assert cut_pieces(longer) == (longer[:CUT_PIECE], longer[1:])
    # A path's or a URL's start, words, a spaced header: no piece stands for the value.
    path = "/Users/dev/Projects/app/" + _random(rng, 20)
    assert cut_pieces(path)[0] is None and cut_pieces(path)[1] is not None
    url = "https://hooks.example.com/services/" + _random(rng, 24)
    assert cut_pieces(url)[0] is None
    assert cut_pieces("correct-horse-battery-staple-tree") == (None, None)
    assert cut_pieces("-----BEGIN KEY-----\n" + _random(rng, 40) + "\n-----END KEY-----") == (
        None,
        None,
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_pieces_on_raw_lines_plain_and_escaped(engine: str) -> None:
    """The literal search names a line holding only a piece, raw or JSON-escaped twice (a JSON
    document printed in a string), and the record's copies place it."""
    rng = random.Random(16)
    key = _random(rng, 20) + "/" + _random(rng, 19)
    index = _index(engine, (key, INFO))
    line_a = json.dumps({"a": f"err {key[:24]}"}).encode()
    line_b = json.dumps({"b": json.dumps({"k": key[-22:]})}).encode()
    data = b"\n".join([b'{"n": 1}', line_a, line_b, b'{"n": 2}']) + b"\n"
    found = index.line_candidates(data)
    assert [data[s:e] for s, e, _ in found] == [line_a, line_b]
    pieces = []
    for s, e, numbers in found:
        record = json.loads(data[s:e])
        [copy] = kv.record_copies(record, index, numbers)
        pieces.append(next(iter(record.values()))[copy.start : copy.end])
    assert pieces == [key[:24], key[-22:]]


@pytest.mark.parametrize("engine", ENGINES)
def test_redaction_settles(engine: str) -> None:
    """Redacting leaves no copy behind: a second pass changes nothing, and no placeholder is
    read as a piece."""
    rng = random.Random(17)
    token, key = PREFIX + _random(rng, 36), _random(rng, 40)
    index = _index(engine, (token, TOKEN_INFO), (key, INFO))
    text = " | ".join(
        [token, token[:30], key[14:], f"{key[:20]}\n{key[20:]}", f"{key[:20]}...", key + token[:20]]
    )
    once = index.redact(text, SCOPE)
    assert index.text_copies(once, SCOPE) == [] and index.redact(once, SCOPE) == once
    for value in (token, key):
        body = value.removeprefix(PREFIX)
        assert all(body[i : i + 12] not in once for i in range(len(body) - 11))


@pytest.mark.parametrize("engine", ENGINES)
def test_bounded_on_huge_values_and_many_pieces(engine: str) -> None:
    rng = random.Random(18)
    huge = base64.b64encode(rng.randbytes(3 << 20)).decode()  # 4 MB
    key = _random(rng, 40)
    index = _index(engine, (huge, INFO), (key, INFO))
    half = len(huge) // 2
    text = f"a {huge[:half]}\n{huge[half:]} z"
    assert [(s, e) for s, e, _ in index.find(text, [0])] == [
        (2, 2 + half),
        (3 + half, len(text) - 2),
    ]
    many = " ".join([key[:20], key[-20:]] * 3000)
    assert len(index.find(many, [1])) == 6000


def test_engines_agree_on_pieces() -> None:
    if len(ENGINES) < 2:
        pytest.skip(INSTALL_HYPERSCAN)
    rng = random.Random(19)
    values = [_random(rng, rng.randint(20, 60)) for _ in range(40)]
    words = []
    for _ in range(2000):
        value = rng.choice(values)
        words.append(
            rng.choice(
                [value[: rng.randint(16, 19)], value[-rng.randint(16, 19) :], _random(rng, 30)]
            )
        )
    data = "\n".join(" ".join(words[i : i + 5]) for i in range(0, 2000, 5)).encode() + b"\n"
    python, hyper = (_index(engine, *((v, INFO) for v in values)) for engine in ENGINES)
    assert python.line_candidates(data) == hyper.line_candidates(data)


def _copies_searched_plainly(cut: CutForm, text: str, number: int) -> list[tuple[int, int, int]]:
    """CutForm.copies as first written: each piece found anew, each copy's length by search."""
    found = []
    form, head, tail = cut.form, cut.head, cut.tail
    at = text.find(head) if head else -1
    while head and at >= 0:
        size = cut_copies._common_start(text, at, form, len(head))
        end = at + size
        if size < len(form) and (end == len(text) or cut._ends(text[end])):
            found.append((at, end, number))
        at = text.find(head, end)
    at = text.find(tail) if tail else -1
    while tail and at >= 0:
        end = at + len(tail)
        size = cut_copies._common_end(text, end, form, len(tail))
        if size < len(form) and (end == size or cut._ends(text[end - size - 1])):
            found.append((end - size, end, number))
        at = text.find(tail, end)
    return found


def _found_plainly(index: kv.ValueIndex, text: str, numbers: list[int]) -> list[tuple[int, ...]]:
    """ValueIndex.find without its shortcuts (no probe, no shared places)."""
    spans: list[tuple[int, int, int]] = []
    for number in numbers:
        for form in index._forms[number]:
            at = text.find(form)
            while at >= 0:
                spans.append((at, at + len(form), number))
                at = text.find(form, at + len(form))
        for cut in index._cuts[number]:
            spans.extend(_copies_searched_plainly(cut, text, number))
    return kv.longest_apart(spans)  # the overlap rule is not what is tested here


_SHARED = "MIIE" + "pAIBAAKCAQEA"


@settings(max_examples=250, deadline=None)
@given(st.data())
def test_find_with_its_shortcuts_is_the_plain_search(data: st.DataObject) -> None:
    """Values that share starts, values that are prefixes of others, JSON-escaped ones; texts
    made of their pieces: the shortcuts (a probe for whole copies, pieces found once per
    text, a copy's length told by the character after its piece) change no answer."""
    rng = random.Random(data.draw(st.integers(0, 10**6)))
    # A start they share beyond their 16-character head too (PKCS#8 keys share 26): the
    # forms' leads are then used.
    common = _SHARED + _random(rng, data.draw(st.integers(0, 24)))
    # Up to 30 of them: from 8 forms of one head on, they are looked up as a group, and from
    # 16 candidates on, those of a crowd with no piece in the text are dropped first (with
    # hyperscan: crowd_filter.py). Some hold line breaks, as a PEM key's body does.
    base = [
        common + _random(rng, 30) + rng.choice(["", "\n" + _random(rng, 20)])
        for _ in range(data.draw(st.integers(1, 30)))
    ]
    values = [*base, base[0] + _random(rng, data.draw(st.integers(1, 20))), 'k"' + _random(rng, 30)]
    index = _index(data.draw(st.sampled_from(ENGINES)), *((value, INFO) for value in values))
    numbers = list(range(len(index._values)))
    pieces = [
        data.draw(st.sampled_from(values))[: data.draw(st.integers(0, 60))]
        for _ in range(data.draw(st.integers(1, 6)))
    ]
    glue = data.draw(
        st.lists(st.sampled_from([" ", "x", "\\n", "\n", '"', "é", "/", "", "+"]), min_size=6)
    )
    text = "".join(p + g for p, g in zip(pieces, glue, strict=False))
    if data.draw(st.booleans()):
        text = json.dumps(text)[1:-1]
    assert index.find(text, numbers) == _found_plainly(index, text, numbers)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_that_is_a_prefix_of_another_keeps_its_cut_copies(engine: str) -> None:
    """A rotated password (the old one plus a few characters): both values' cut copies are
    still found, each as its own value (a review found a start shared by two values once
    counted as public, which dropped them)."""
    rng = random.Random(51)
    old = _random(rng, 28)
    new = old + _random(rng, 6)
    index = _index(engine, (old, INFO), (new, INFO))
    assert _shown(f"head {old[:22]}", index) == [old[:22]]
    assert _shown(f"tail {new[-24:]}", index) == [new[-24:]]
    assert _shown(f"most {new[:31]}", index) == [new[:31]]
    assert _shown(f"both {old} and {new}", index) == [old, new]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='aZ9"\\/\n\t\x00\x7fé€\U0001f600 ', max_size=14))
def test_json_escaped_is_json_dumps(text: str) -> None:
    for ascii_only in (False, True):
        assert json_escaped(text, ascii_only) == json.dumps(text, ensure_ascii=ascii_only)[1:-1]
    if plain(text):
        assert json.dumps(text)[1:-1] == text


@pytest.mark.parametrize("engine", ENGINES)
def test_may_hold_flags_every_text_with_a_copy(engine: str) -> None:
    """One search over many texts names each that holds a copy (whole, cut, escaped, across
    a line break of its own) and of the others at most those next to one."""
    rng = random.Random(41)
    key, other = _random(rng, 40), _random(rng, 40)
    index = _index(engine, (key, INFO))
    texts = [
        "ls -la", f"echo {key}", "", "cat notes", f"curl -H 'x: {key[:24]}'", "git status",
        "two\nlines " + json.dumps(key), f"echo {other}", "é" * 5 + key, "tail",
    ]  # fmt: skip
    flagged = index.may_hold(texts, SCOPE)
    holding = {i for i, text in enumerate(texts) if index.text_copies(text, SCOPE)}
    assert holding == {1, 4, 6, 8}
    assert holding <= flagged
    assert 0 not in flagged and 3 not in flagged and 7 not in flagged
    assert index.may_hold(texts, "another-session") == set()


@pytest.mark.skipif(load_hyperscan() is None, reason=INSTALL_HYPERSCAN)
def test_a_crowd_sharing_a_start_is_narrowed_to_the_values_the_text_holds() -> None:
    """200 key bodies of many lines sharing their start; a text holding one whole, the start
    of another and the end of a third: the crowd filter keeps the three (and those the
    shared start's place may copy), and the copies are those of the plain search."""
    rng = random.Random(7)
    common = _SHARED + _random(rng, 22)
    values = [
        "\n".join([common + _random(rng, 30), _random(rng, 64), _random(rng, 40)])
        for _ in range(200)
    ]
    index = _index("hyperscan", *((value, INFO) for value in values))
    whole, head, tail = values[5], values[77][:50], values[150][-30:]
    text = json.dumps(f"key: {whole}\nstart {head}… and {tail} end")[1:-1]
    numbers = list(range(len(index._values)))
    groups = index._head_groups
    shared = [groups.may_copy(text, h, {}) for h in groups.heads if h in text]
    kept = index._crowd.narrowed(text, numbers, shared)
    assert {5, 77, 150} <= set(kept)
    assert len(kept) < 20
    found = index.find(text, numbers)
    assert found == _found_plainly(index, text, numbers)
    assert {n for _, _, n in found} == {5, 77, 150}
