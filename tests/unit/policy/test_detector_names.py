"""The detector names the policy accepts are exactly the detectors the scanner builds, and
reading a policy loads neither the detectors nor detect_secrets to know them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scrubber.detection.detect_secrets_adapter import (
    DetectSecretsConfigKeywords,
    DetectSecretsDetector,
    DetectSecretsShapeDetector,
)
from scrubber.detection.registry import build_detectors
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.policy.detectors import DETECT_SECRETS_NAMES, DETECTOR_NAMES, RULE_NAMES
from scrubber.policy.model import DetectionPolicy, Policy


def test_rule_names_are_the_catalogs() -> None:
    assert sorted(RULE_NAMES) == sorted(rule.name for rule in ALL_RULES), (
        "a rule was added, renamed or removed: update scrubber/policy/detectors.py"
    )


def test_detect_secrets_names_are_the_adapters() -> None:
    real = (
        DetectSecretsDetector.name,
        DetectSecretsShapeDetector.name,
        DetectSecretsConfigKeywords.name,
    )
    assert real == DETECT_SECRETS_NAMES


def test_every_detector_the_scanner_runs_can_be_disabled_by_its_name() -> None:
    everything = {detector.name for detector in build_detectors(Policy())}
    assert everything == DETECTOR_NAMES
    for name in sorted(DETECTOR_NAMES):
        kept = build_detectors(Policy(detection=DetectionPolicy(disabled_detectors=(name,))))
        assert name not in {detector.name for detector in kept}


def test_loading_a_policy_imports_no_detector(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\ndetection:\n  disabled_detectors: [jwt, detect-secrets]\n")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from scrubber.policy.load import load_policy\n"
        f"loaded = load_policy(Path({str(policy)!r}), {{}})\n"
        "assert loaded.policy.detection.disabled_detectors == ('jwt', 'detect-secrets')\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('detect_secrets', "
        "'scrubber.detection')))\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
