"""The detector registry: the full and the light set, and the one rule for disabled detectors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scrubber.detection import detect_secrets_adapter as adapter
from scrubber.detection import registry
from scrubber.detection.detector import PLAIN
from scrubber.detection.rules.catalog import ALL_RULES

ROOT = Path(__file__).resolve().parents[3]


def test_the_registry_spells_the_adapters_names() -> None:
    assert adapter.DetectSecretsDetector.name == registry.ADAPTER_NAME
    assert adapter.DetectSecretsConfigKeywords.name == registry.ADAPTER_CONFIG_KEYWORDS_NAME


def test_the_full_set_is_our_rules_and_detect_secrets() -> None:
    names = [d.name for d in registry.full_detectors()]
    assert names[: len(ALL_RULES)] == [r.name for r in ALL_RULES]
    assert names[len(ALL_RULES) :] == [
        adapter.DetectSecretsDetector.name,
        adapter.DetectSecretsShapeDetector.name,
        adapter.DetectSecretsConfigKeywords.name,
    ]


def test_the_light_set_is_our_rules_only() -> None:
    assert registry.light_detectors() == tuple(ALL_RULES)


def test_one_rule_for_disabled_detectors_in_both_sets() -> None:
    disabled = (ALL_RULES[0].name, registry.ADAPTER_NAME)
    full = {d.name for d in registry.full_detectors(disabled)}
    light = {d.name for d in registry.light_detectors(disabled)}
    assert ALL_RULES[0].name not in full | light
    # The adapter takes its config-file half along, not its shapes detector.
    assert registry.ADAPTER_NAME not in full
    assert registry.ADAPTER_CONFIG_KEYWORDS_NAME not in full
    assert adapter.DetectSecretsShapeDetector.name in full
    assert full - {adapter.DetectSecretsShapeDetector.name} == light


def test_importing_the_registry_and_building_the_light_set_loads_no_adapter(
    tmp_path: Path,
) -> None:
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from pathlib import Path\n"
        "from scrubber.detection import registry\n"
        "from scrubber.policy.model import Allowlist\n"
        f"registry.build_light_scanner(Path({str(tmp_path)!r}), b'k' * 32, Allowlist(), ())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    modules = set(json.loads(done.stdout))
    assert "scrubber.detection.registry" in modules
    assert "scrubber.detection.detect_secrets_adapter" not in modules
    assert not {m for m in modules if m.split(".")[0] == "detect_secrets"}


def test_the_adapters_hyperscan_sets_are_compiled_on_first_use_or_in_prepare() -> None:
    """Building the full set compiles none of detect-secrets' own sets (25 ms at every start,
    for scans that mostly never wake them); `prepare` compiles them before a pool forks, and a
    scan that wakes them without `prepare` compiles them then and finds the same."""
    # Each cached attribute, with the classes that cache a set in it (a dict from class to
    # name would read like credential assignments to the repository's own audit).
    cached_in = {
        "_shapes": [adapter.DetectSecretsShapeDetector],
        "_literal_set": [adapter.DetectSecretsDetector, adapter.DetectSecretsConfigKeywords],
    }
    lazy = {cls: name for name, classes in cached_in.items() for cls in classes}
    built = [d for d in registry.full_detectors(()) if type(d) in lazy]
    assert {type(d) for d in built} == set(lazy)
    for detector in built:
        assert lazy[type(detector)] not in vars(detector), detector.name
    prepared = registry.full_detectors(())
    for detector in prepared:
        if type(detector) in lazy:
            detector.prepare()  # type: ignore[attr-defined]
            assert lazy[type(detector)] in vars(detector), detector.name
    # Twilio's shape, woken without `prepare`: compiled on the spot.
    shapes = next(d for d in built if type(d) is adapter.DetectSecretsShapeDetector)
    sid = "SK" + "0123456789abcdef" * 2

    text = f"key {sid} here"
    assert [text[hit.start : hit.end] for hit in shapes.find(text, PLAIN)] == [sid]
