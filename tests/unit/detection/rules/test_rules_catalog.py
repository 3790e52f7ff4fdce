"""The catalog: every detector is listed, well-formed, covered by the tables, and its anchors
hold for every positive example (the scanner skips text that contains none of them)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest
from rule_cases import Case

from scrubber.detection import rules as rules_package
from scrubber.detection.detector import PLAIN, Detector, ScanContext, SourceKind
from scrubber.detection.finding import Hit, resolve_overlaps
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.registry import build_detectors
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.scan import SecretScanner
from scrubber.policy.model import Policy

KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
HELPER_MODULES = {"base", "values", "catalog", "credential_pairs"}


def _table_modules() -> list[str]:
    here = Path(__file__).parent
    return sorted(p.stem for p in here.glob("test_*.py") if p.stem != Path(__file__).stem)


def _all_cases() -> list[Case]:
    cases: list[Case] = []
    for name in _table_modules():
        cases.extend(getattr(importlib.import_module(name), "CASES", []))
    return cases


ALL_CASES = _all_cases()
POSITIVES = [c for c in ALL_CASES if c.secrets]


def test_catalog_is_not_empty_and_names_are_unique() -> None:
    names = [r.name for r in ALL_RULES]
    assert len(names) > 50
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.name for r in ALL_RULES])
def test_rule_is_well_formed(rule: Detector) -> None:
    assert rule.name and KEBAB.match(rule.name)
    kind = getattr(rule, "kind", "")
    assert KEBAB.match(kind), f"{rule.name}: kind {kind!r} is not kebab-case"
    assert isinstance(rule.anchors, tuple)
    if not rule.anchors:
        assert rule.context_only, f"{rule.name}: only a context-only rule may have no anchors"
    for anchor in rule.anchors:
        assert anchor, f"{rule.name}: empty anchor"
        assert anchor == anchor.lower(), f"{rule.name}: anchor {anchor!r} is not lower-case"
        assert '"' not in anchor and "\\" not in anchor, f"{rule.name}: anchor {anchor!r}"
        assert all(ord(c) >= 0x20 for c in anchor), f"{rule.name}: control char in anchor"
        # The same test runs on raw JSON lines: an anchor must survive JSON encoding as is.
        assert json.dumps(anchor)[1:-1] == anchor, f"{rule.name}: anchor {anchor!r} is escaped"
    assert getattr(rule, "reference", ""), f"{rule.name}: cite where the format is documented"


def test_every_rule_module_is_registered() -> None:
    """The registry is explicit: a rule defined in a family file but left out of ALL_RULES
    would silently never run."""
    modules = _rule_modules()
    assert len(modules) > 30
    for module in modules:
        module_rules = getattr(module, "RULES", None)
        assert module_rules, f"{module.__name__} defines no RULES"
        for rule in module_rules:
            assert any(rule is r for r in ALL_RULES), f"{rule.name} is not in ALL_RULES"


def _rule_modules() -> list[ModuleType]:
    found = []
    for info in pkgutil.iter_modules(rules_package.__path__):
        if info.name in HELPER_MODULES:
            continue
        found.append(importlib.import_module(f"{rules_package.__name__}.{info.name}"))
    return found


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.name for r in ALL_RULES])
def test_every_rule_has_a_positive_example(rule: Detector) -> None:
    assert any(c.rule is rule for c in POSITIVES), f"{rule.name} has no positive test case"


@pytest.mark.parametrize("case", POSITIVES, ids=[f"{i}:{c.id}" for i, c in enumerate(POSITIVES)])
def test_anchor_invariant_on_positive_examples(case: Case) -> None:
    rule = case.rule
    if rule.context_only and not rule.anchors:
        # Context-only rules run on sensitive text only, and never outside it.
        assert not list(rule.find(case.text, PLAIN))
        return
    lowered = case.text.lower()
    assert any(a in lowered for a in rule.anchors), f"{rule.name}: no anchor in a positive text"
    raw = json.dumps(case.text, ensure_ascii=False).lower()
    assert any(a in raw for a in rule.anchors), f"{rule.name}: no anchor in the raw JSON line"


def _scan_all(text: str, context: ScanContext) -> list[Hit]:
    lowered = text.lower()
    hits: list[Hit] = []
    for rule in ALL_RULES:
        if rule.anchors and not any(a in lowered for a in rule.anchors):
            continue
        if not rule.anchors and not context.sensitive:
            continue
        hits.extend(rule.find(text, context))
    return hits


def _redact(text: str, hits: list[Hit]) -> str:
    for hit in sorted(resolve_overlaps(hits), key=lambda h: h.start, reverse=True):
        text = f"{text[: hit.start]}[REDACTED:{hit.kind}:0a1b2c3d]{text[hit.end :]}"
    return text


@pytest.mark.parametrize("case", POSITIVES, ids=[f"{i}:{c.id}" for i, c in enumerate(POSITIVES)])
def test_redaction_is_idempotent(case: Case) -> None:
    """Once every hit is replaced by a placeholder, no rule finds anything: a placeholder never
    re-triggers a detector, even before the scanner masks it."""
    redacted = _redact(case.text, _scan_all(case.text, case.context))
    again = _scan_all(redacted, case.context)
    assert not again, f"{case.id}: {[(h.detector, h.start, h.end) for h in again]}"


_SENSITIVE_CONTEXTS = [
    ScanContext(None, SourceKind.DOTENV, "/app/.env"),
    ScanContext(None, SourceKind.CREDENTIAL_FILE, "/home/u/.netrc"),
    ScanContext(None, SourceKind.SECRET_DUMP, "printenv"),
]


def _scanners() -> list[tuple[SecretScanner, SecretScanner]]:
    """(scanner, the same with every detector reading a credential source whole) per engine."""
    detectors = build_detectors(Policy.default())
    pairs = []
    for engine in ("python", "hyperscan"):
        if engine == "hyperscan" and importlib.util.find_spec("hyperscan") is None:
            continue
        fast = SecretScanner(detectors, Fingerprinter(b"k" * 32), engine=engine)
        whole = SecretScanner(detectors, Fingerprinter(b"k" * 32), engine=engine)
        whole.index.context_free = frozenset()
        pairs.append((fast, whole))
    return pairs


SCANNER_PAIRS = _scanners()


@pytest.mark.parametrize("case", POSITIVES, ids=[c.id for c in POSITIVES])
def test_token_patterns_in_a_credential_source_read_only_where_their_gates_match(
    case: Case,
) -> None:
    # In a credential source every detector reads the whole string, but token patterns and the
    # other detectors that say their hits do not depend on context (SameInAnyContext) are
    # skipped where their gates do not match: that must never lose a hit, alone or in a longer
    # dump. (Marking the loose labelled-secret form or cli-secret-flag fails here.)
    texts = [case.text, f"HOME=/root\nX={case.text}\nPATH=/usr/bin:/bin\n"]
    for fast, whole in SCANNER_PAIRS:
        assert fast.index.context_free, "the shortcut is in use"
        for context in _SENSITIVE_CONTEXTS:
            for text in texts:
                got = [(f.hit.start, f.hit.end, f.hit.kind) for f in fast.scan_text(text, context)]
                want = [
                    (f.hit.start, f.hit.end, f.hit.kind) for f in whole.scan_text(text, context)
                ]
                assert got == want, (case.id, context.source)
