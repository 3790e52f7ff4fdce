"""Which detectors run, for which path: the full set (our rules and the plugins of
detect_secrets_adapter.py) for audit and redact, the light set (our rules only) for the status
line, and the scanners over them. One rule decides what a policy's `disabled_detectors` turns
off, for both sets.

The status line builds its scanner here and must stay light
(tests/unit/hooks/test_hooks_status_line.py): the adapter is imported only when the full set is
built, never when this module is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from scrubber import paths
from scrubber.detection.detector import Detector
from scrubber.detection.fingerprint import Fingerprinter, read_or_create_key
from scrubber.detection.rules.catalog import ALL_RULES
from scrubber.detection.scan import SecretScanner
from scrubber.errors import UsageError
from scrubber.policy.model import Allowlist, Policy

# The adapter's detector names (detect_secrets_adapter.DETECTOR_NAME and its suffixes), spelled
# out so that the rule below needs no import of the adapter; tests/unit/detection/test_registry.py
# checks that they match.
ADAPTER_NAME = "detect-secrets"
ADAPTER_CONFIG_KEYWORDS_NAME = ADAPTER_NAME + "-config-keywords"

PREFILTER_ENGINES = ("auto", "hyperscan", "python")


def enabled(detectors: Iterable[Detector], disabled: Iterable[str]) -> tuple[Detector, ...]:
    """`detectors` without those `disabled` names. The adapter is one detector to the user:
    disabling it disables its keyword plugin's config-file half too."""
    off = set(disabled)
    if ADAPTER_NAME in off:
        off.add(ADAPTER_CONFIG_KEYWORDS_NAME)
    return tuple(d for d in detectors if d.name not in off)


def light_detectors(disabled: Iterable[str] = ()) -> tuple[Detector, ...]:
    """Our own rules: what the status line runs (not the adapter: importing its library alone
    takes longer than a status-line call may)."""
    return enabled(ALL_RULES, disabled)


def full_detectors(disabled: Iterable[str] = ()) -> tuple[Detector, ...]:
    """Our rules plus the adapter's plugins: what audit and redact run."""
    from scrubber.detection.detect_secrets_adapter import (
        DetectSecretsConfigKeywords,
        DetectSecretsDetector,
        DetectSecretsShapeDetector,
    )

    everything: list[Detector] = [
        *ALL_RULES,
        DetectSecretsDetector(),
        DetectSecretsShapeDetector(),
        DetectSecretsConfigKeywords(),
    ]
    return enabled(everything, disabled)


def build_detectors(policy: Policy) -> tuple[Detector, ...]:
    """The full set, minus what the policy disables."""
    return full_detectors(policy.detection.disabled_detectors)


def prefilter_engine(env: Mapping[str, str] | None = None) -> str:
    """The prefilter engine `SCRUB_PREFILTER` asks for (`auto` when unset or empty)."""
    env = os.environ if env is None else env
    return env.get("SCRUB_PREFILTER", "auto") or "auto"


def build_scanner(
    policy: Policy, home: Path, env: Mapping[str, str] | None = None
) -> SecretScanner:
    """The scanner for a policy. `SCRUB_PREFILTER=python` forces the pure-Python prefilter (the
    default, `auto`, uses hyperscan when it is installed); results are the same either way."""
    engine = prefilter_engine(env)
    if engine not in PREFILTER_ENGINES:
        raise UsageError(f"SCRUB_PREFILTER={engine!r}: expected auto, hyperscan or python")
    key = read_or_create_key(paths.fingerprint_key_file(home))
    return SecretScanner(
        build_detectors(policy),
        Fingerprinter(key),
        policy.detection.allowlist,
        engine=engine,
        cache_dir=paths.prefilter_cache_dir(home),
    )


def build_light_scanner(
    home: Path, key: bytes, allowlist: Allowlist, disabled: Iterable[str]
) -> SecretScanner:
    """The status line's scanner: the light set, with the allowlist and disabled detectors the
    installer copied from the policy (the status line never reads the policy's YAML)."""
    # hyperscan when installed: on real transcripts nearly every line passes the prefilter's
    # anchors, and the pure-Python literal search is then several times slower per byte
    # (bench/README.md); building either index costs about the same.
    return SecretScanner(
        light_detectors(disabled),
        Fingerprinter(key),
        allowlist,
        engine="auto",
        cache_dir=paths.prefilter_cache_dir(home),
    )


def _token_rules() -> tuple[Detector, ...]:
    """The catalog's vendor token formats (its first group, up to the structured secrets), PEM
    and other private keys, and connection-string passwords: secrets recognised by their own
    shape, whatever surrounds them."""
    from scrubber.detection.rules import connection_string, private_key

    first_structured = ALL_RULES.index(private_key.RULES[0])
    return (*ALL_RULES[:first_structured], *private_key.RULES, *connection_string.RULES)


def live_detectors(names: Iterable[str] = (), disabled: Iterable[str] = ()) -> tuple[Detector, ...]:
    """What the live hooks run (PostToolUse, UserPromptSubmit): the token rules of the light set
    (`_token_rules`); never a context-only, label-based or command-line-flag rule, whose
    precision on tool output no decoy test has proven (tests/properties/test_live_decoys.py
    proves the set's). `names`, when given (the policy's `live.detectors`), narrows the set."""
    chosen = set(names)
    return tuple(
        d
        for d in enabled(_token_rules(), disabled)
        if not d.context_only and (not chosen or d.name in chosen)
    )


def build_live_scanner(
    home: Path, key: bytes, allowlist: Allowlist, detectors: tuple[Detector, ...]
) -> SecretScanner:
    """The live hooks' scanner: `live_detectors`, with the allowlist the installer compiled."""
    return SecretScanner(
        detectors,
        Fingerprinter(key),
        allowlist,
        engine="auto",
        cache_dir=paths.prefilter_cache_dir(home),
    )
