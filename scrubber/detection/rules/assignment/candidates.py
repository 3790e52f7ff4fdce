"""Where the rule looks for names: candidates (a keyword inside a name, the rest of the name,
the start of an operator) in decoded text or on a raw JSONL line, and how far before the end of
a gate's match a candidate the match stands for may be."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import AnyStr

# Where to look: any of these (case-insensitively) inside a name.
# A keyword inside a name, the rest of the name, and the start of an operator: cheap enough to
# run on every string, and it skips the many keywords of prose and code that assign nothing.
# It runs on the lower-cased text (a case-sensitive alternation is several times faster than
# an IGNORECASE one in `re`), falling back to IGNORECASE when lower-casing changes the length.
# (The scanner's gates, rule.py's `_operators`, are stricter; they decide which parts of a long
# text this rule reads at all.)
_CANDIDATE_SOURCE = r"""(?:pass|pwd|secret|token|key|auth|cred|_pw|_pat)(?P<tail>[a-z0-9_.-]{0,80})
    \\?["'`]?\]?\??[ \t]{0,8}[:=>?+,|]"""
_CANDIDATE_LOWER = re.compile(_CANDIDATE_SOURCE, re.VERBOSE)
_CANDIDATE_ANY_CASE = re.compile(_CANDIDATE_SOURCE, re.VERBOSE | re.IGNORECASE)
# The same on a raw JSONL line (lower-cased bytes): a quote is escaped there, a tab is `\t`.
RAW_CANDIDATE = re.compile(
    rb"(?:pass|pwd|secret|token|key|auth|cred|_pw|_pat)(?P<tail>[a-z0-9_.-]{0,80})"
    rb"""(?:\\{1,7}"|\\{0,7}['`])?\]?\??(?:[ \t]|\\t){0,8}[:=>?+,|]"""
)

# How far before the end of each gate's match (in rule.py's `_assignment_gates` order) the
# operator a candidate ends with may be: a STRONG gate ends at most 5 characters after it; a
# MEDIUM one after 16 spaces, a quote, 4 spaces, a scheme of up to 6 letters and 4 spaces, and 8
# characters of value; an annotated one after an annotation of up to 126 characters as well;
# rounded up. On a raw line, escapes (`\t` for a tab) take two bytes.
GATE_REACH = (12, 56, 194)
GATE_REACH_RAW = (24, 112, 548)
# How much longer than its operator's distance a candidate may start before a gate match's
# end: a keyword, an 80-character tail, a closing quote and bracket, 8 spaces.
CANDIDATE_SPAN = 110


def near_candidates(
    pattern: re.Pattern[AnyStr],
    subject: AnyStr,
    events: Iterable[tuple[int, int]],
    reaches: Sequence[int],
) -> Iterator[re.Match[AnyStr]]:
    """Candidates whose operator ends at most the gate's reach before a gate match's end: the
    only ones a gate match can stand for. In order, each once."""
    spans: list[list[int]] = []
    for end, gate in sorted(events):
        low = max(0, end - reaches[gate] - CANDIDATE_SPAN)
        if spans and low <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([low, end])
    limits = sorted((end, end - reaches[gate]) for end, gate in events)
    ends = [end for end, _ in limits]
    longest = max(reaches)
    for low, high in spans:
        for candidate in pattern.finditer(subject, low, min(high, len(subject))):
            at = candidate.end()
            # Some gate match ends at or after this operator, close enough to it.
            for j in range(bisect.bisect_left(ends, at), len(limits)):
                end, nearest = limits[j]
                if end - at > longest:
                    break
                if nearest <= at:
                    yield candidate
                    break


def candidate_search(text: str) -> tuple[re.Pattern[str], str]:
    lowered = text.lower()
    if len(lowered) == len(text):
        return _CANDIDATE_LOWER, lowered
    return _CANDIDATE_ANY_CASE, text
