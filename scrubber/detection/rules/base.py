"""The declarative shape of most of our rules: a regex, anchors, and a few filters.

A rule file builds one or more `PatternRule`s and nothing else. The secret is the named group
`secret` when the pattern has one (so `password=` stays and only the value goes), else the whole
match.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


@dataclass(frozen=True, slots=True)
class PatternRule:
    name: str  # the detector name reported in findings
    kind: str  # kebab-case kind of secret
    pattern: str
    anchors: tuple[str, ...]  # lower-case literals; one must occur in any text the pattern matches
    reference: str  # where the format is documented (vendor docs, a published scanner rule)
    flags: int = 0
    context_only: bool = False  # run only on text known to come from a credential source
    min_length: int = 1
    min_entropy: float = 0.0  # bits per character the secret must reach
    reject: Callable[[str], bool] | None = None  # True for values that are not secrets
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern, self.flags))

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        has_group = "secret" in self.compiled.groupindex
        for match in self.compiled.finditer(text):
            start, end = match.span("secret") if has_group else match.span()
            if start < 0 or end - start < self.min_length:
                continue
            value = text[start:end]
            if self.min_entropy and shannon_entropy(value) < self.min_entropy:
                continue
            if self.reject is not None and self.reject(value):
                continue
            yield Hit(start, end, self.kind, self.name)
