"""Hypothesis strategies shared by the test suite.

- `json_values()` / `json_objects()`: any JSON value (big integers, infinities, any text);
  `json_line()` serialises one in the shapes writers produce (compact like Claude Code, spaced
  like Python's json.dumps, ASCII-escaped or not).
- `record_dicts()`: transcript records shaped like Claude Code's (envelope, message blocks,
  `toolUseResult`, summaries, titles, tags), with unknown types and fields mixed in.
- `jsonl_files()`: whole transcript files as bytes, with blank lines, CRLF endings, garbage,
  invalid UTF-8, non-object JSON, a torn last line or none, a missing final newline.
- `byte_files()`: arbitrary bytes with runs of newlines, for round-trip tests.
- `strict_equal(a, b)`: equality that tells 1 from 1.0 and 10**20 from 1e20 (plain `==` does
  not, and that difference is the bug a second JSON parser can introduce).
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

# Text a UTF-8 encoder accepts (no lone surrogates); `json_line` with ensure_ascii can also carry
# lone surrogates as \u escapes, which Claude Code's JSON.stringify writes for broken pairs.
utf8_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
any_text = st.text(max_size=40)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=True),
    any_text,
)


def json_values(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    return st.recursive(
        json_scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=6),
            st.dictionaries(any_text, children, max_size=6),
        ),
        max_leaves=max_leaves,
    )


def json_objects(max_leaves: int = 20) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(any_text, json_values(max_leaves), max_size=8)


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


@st.composite
def json_line(draw: st.DrawFn, values: st.SearchStrategy[Any] | None = None) -> bytes:
    """One JSON text on one line, as some writer would produce it."""
    value = draw(values if values is not None else json_values())
    compact = draw(st.booleans())
    ensure_ascii = draw(st.booleans()) or _has_surrogate(value)
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)
    return text.encode("utf-8")


def strict_equal(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (1 != 1.0, 10**20 != 1e20)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(strict_equal(a[k], b[k]) for k in a)
    return bool(a == b)


# --- transcript records ---------------------------------------------------------------------

uuids = st.uuids().map(str)
timestamps = st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2027, 12, 31)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
)
tool_ids = st.text(
    alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ123456789", min_size=22, max_size=22
).map(lambda s: "toolu_01" + s)
KNOWN_TYPES = (
    "user", "assistant", "system", "summary", "custom-title", "ai-title", "tag", "last-prompt",
    "queue-operation", "file-history-snapshot", "attachment", "progress", "agent-name", "mode",
)  # fmt: skip


def _text_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda t: {"type": "text", "text": t}, utf8_text)


def _tool_use_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda i, n, inp: {"type": "tool_use", "id": i, "name": n, "input": inp},
        tool_ids,
        st.sampled_from(("Read", "Bash", "Write", "Edit", "Grep", "Task", "mcp__x__y")),
        st.fixed_dictionaries(
            {},
            optional={
                "file_path": utf8_text,
                "command": utf8_text,
                "content": utf8_text,
                "pattern": utf8_text,
            },
        ),
    )


def _tool_result_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda i, c, e: {"tool_use_id": i, "type": "tool_result", "content": c, "is_error": e},
        tool_ids,
        st.one_of(utf8_text, st.lists(_text_block(), max_size=3)),
        st.booleans(),
    )


def _other_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(
            lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, utf8_text, utf8_text
        ),
        st.just(
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
            }
        ),
        st.builds(lambda d: {"type": "redacted_thinking", "data": d}, utf8_text),
        st.dictionaries(any_text, json_scalars, max_size=3),  # a kind not invented yet
    )


@st.composite
def record_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A transcript record as Claude Code writes it, sometimes of a type never seen before,
    sometimes with fields missing or of the wrong type."""
    kind = draw(st.one_of(st.sampled_from(KNOWN_TYPES), any_text))
    record: dict[str, Any] = {}
    if draw(st.booleans()):
        record.update(
            {
                "parentUuid": draw(st.one_of(st.none(), uuids)),
                "isSidechain": draw(st.booleans()),
                "userType": "external",
                "cwd": draw(utf8_text),
                "sessionId": draw(uuids),
                "version": "2.1.332",
                "gitBranch": "main",
            }
        )
    record["type"] = kind
    if kind in ("user", "assistant"):
        blocks = st.one_of(_text_block(), _tool_use_block(), _tool_result_block(), _other_block())
        content = draw(st.one_of(utf8_text, st.lists(blocks, max_size=4)))
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message["id"] = "msg_01" + draw(st.text(alphabet="abcXYZ123", min_size=5, max_size=5))
        record["message"] = message
        if kind == "user" and draw(st.booleans()):
            record["toolUseResult"] = draw(st.one_of(utf8_text, json_objects(5)))
    elif kind == "system":
        record["subtype"] = draw(
            st.sampled_from(("compact_boundary", "turn_duration", "api_error"))
        )
        if record["subtype"] == "compact_boundary":
            record["parentUuid"] = None
            record["logicalParentUuid"] = draw(uuids)
    elif kind == "summary":
        record.update({"summary": draw(utf8_text), "leafUuid": draw(uuids)})
    elif kind == "custom-title":
        record["customTitle"] = draw(utf8_text)
    elif kind == "tag":
        record["tag"] = draw(utf8_text)
    elif kind == "ai-title":
        record["aiTitle"] = draw(utf8_text)
    if draw(st.booleans()):
        record["uuid"] = draw(uuids)
    if draw(st.booleans()):
        record["timestamp"] = draw(st.one_of(timestamps, utf8_text, st.integers()))
    for key, value in draw(st.dictionaries(any_text, json_values(4), max_size=3)).items():
        record.setdefault(key, value)  # unknown fields, kept by every view
    return record


def record_line(record: dict[str, Any]) -> bytes:
    """A record as Claude Code writes it: compact, UTF-8 (lone surrogates as escapes)."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=_has_surrogate(record))
    return text.encode("utf-8")


# --- whole files ----------------------------------------------------------------------------

_invalid_utf8 = st.sampled_from(
    (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"caf\xe9")
)


@st.composite
def _garbage_line(draw: st.DrawFn) -> bytes:
    return draw(st.binary(max_size=30)).replace(b"\n", b"")


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    """A transcript file as bytes: mostly records, with every kind of damage mixed in."""
    pieces = st.one_of(
        record_dicts().map(record_line),
        record_dicts().map(record_line),
        json_line(json_values(5)),  # valid JSON that is not always an object
        st.sampled_from((b"", b" ", b"\t", b"\r")),  # blank lines
        _garbage_line(),
        st.tuples(record_dicts().map(record_line), _invalid_utf8).map(lambda t: t[0][:-1] + t[1]),
    )
    lines = draw(st.lists(pieces, max_size=8))
    eol = draw(st.sampled_from((b"\n", b"\r\n")))
    body = b"".join(line + eol for line in lines)
    ending = draw(st.sampled_from(("complete", "torn", "no-newline")))
    if ending == "torn":
        last = record_line(draw(record_dicts()))
        body += last[: draw(st.integers(min_value=1, max_value=max(1, len(last) - 1)))]
    elif ending == "no-newline" and body.endswith(eol):
        body = body[: -len(eol)]
    return body


byte_files = st.lists(
    st.one_of(
        st.binary(max_size=40),
        st.sampled_from((b"\n", b"\n\n", b"\n\n\n\n", b"\r\n", b"{}", b'{"a":1}')),
        _invalid_utf8,
    ),
    max_size=20,
).map(b"".join)
