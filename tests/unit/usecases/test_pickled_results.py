"""What forked scans send back (findings, per-line audits, line results) pickles as its fields
and comes back equal, with every field (a field added later must not be dropped)."""

from __future__ import annotations

import dataclasses
import pickle

from scrubber.detection.finding import Finding
from scrubber.usecases.audit_scan import _LineAudit
from scrubber.usecases.parts import LineResult


def test_results_come_back_equal_field_by_field() -> None:
    finding = Finding(
        "p.jsonl", 3, "/message/content", (1, 9), "kind", "detector", "ab12cd34", "s1", "u1",
        "Bash(ls)", True, 8, "ghp_", True, True,
    )  # fmt: skip
    # Every field differs from its default: a reduce that forgot one would bring it back reset.
    for item in dataclasses.fields(Finding):
        if item.default is not dataclasses.MISSING:
            assert getattr(finding, item.name) != item.default, item.name
    line = LineResult(10, 20, 3, False, _LineAudit((finding,), "why", (("v", "k", "s"),), True))
    for value in (finding, line, line.result):
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        back = pickle.loads(data)  # noqa: S301 - our own bytes, as a forked part sends them
        assert back == value and type(back) is type(value)
