"""The live prescan and scanner (detection/live_prescan.py, live_scan.py): the prescan is a
necessary condition (no detector it leaves out can match), hex anchors in a page of SHAs no
longer wake anything, the light scanner finds exactly what SecretScanner finds, and a compiled
prescan that is malformed, planted or stale is refused."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

from scrubber.demo import fakes
from scrubber.detection.fingerprint import Fingerprinter
from scrubber.detection.live_prescan import Prescan
from scrubber.detection.live_prescan_compile import compile_prescan, max_lookbehind, max_reach
from scrubber.detection.live_scan import LiveScanner, StalePrescan, load_detector
from scrubber.detection.registry import build_live_scanner, live_detectors
from scrubber.policy.model import Allowlist
from tests.skips import needs_shared

KEY = b"k" * 32
LEAKBENCH = Path(__file__).resolve().parents[3] / ".." / "shared" / "leakbench" / "data"
DECOYS = LEAKBENCH / "decoys.jsonl"


@pytest.fixture(scope="module")
def compiled() -> dict[str, Any]:
    return compile_prescan(live_detectors())


@pytest.fixture(scope="module")
def prescan(compiled: dict[str, Any]) -> Prescan:
    loaded = Prescan.from_json(json.loads(json.dumps(compiled)))
    assert loaded is not None
    return loaded


@pytest.fixture(scope="module")
def scanners(prescan: Prescan, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    full = build_live_scanner(tmp_path_factory.mktemp("home"), KEY, Allowlist(), live_detectors())
    return full, LiveScanner(prescan, Fingerprinter(KEY))


def fake_values() -> list[tuple[str, str]]:
    rng = random.Random(3)
    values = []
    for name in sorted(dir(fakes)):
        if not name.startswith("fake_"):
            continue
        for _ in range(3):
            try:
                value = getattr(fakes, name)(rng)
            except TypeError:
                break
            if isinstance(value, str):
                values.append((name, value))
    return values


def noise(size: int, seed: int = 5) -> str:
    """Tool output full of shapes that must not wake anything: git SHAs, uuids, log lines."""
    rng = random.Random(seed)
    lines, total, i = [], 0, 0
    while total < size:
        sha = hashlib.sha1(str(i).encode()).hexdigest()  # noqa: S324 - a git-like id
        line = rng.choice(
            (
                f"{sha} Merge pull request #{i} from team/feature-{i % 13}",
                f"id {uuid.UUID(int=rng.getrandbits(128))} status ok in {i % 977} ms",
                f"src/app/module_{i % 97}.py:{i % 400}: def handler_{i}(request):",
            )
        )
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines)


def texts() -> list[str]:
    """Fake secrets alone, in short lines, and in long outputs (ASCII or not): in the middle,
    at the very start and end, glued to the text around them, and twice far apart (a long
    text is read only in the region its literals mark: Prescan.region)."""
    out = []
    long_noise = noise(6000)
    for _, value in fake_values():
        out += [value, f"TOKEN={value}\n", f"x {value} y", f"é {value} ü"]
        out.append(long_noise[:3000] + f"\nexport KEY={value}\n" + long_noise[3000:])
        out.append(value + long_noise + value)
        out.append(long_noise[:2999] + value + long_noise[2999:])
        out.append(value + "\n" + long_noise[:5000] + f" {value}\t" + long_noise[5000:] + "é")
    return out


def spans(found: Any) -> list[tuple[int, int, str, str, str]]:
    return [(f.hit.start, f.hit.end, f.hit.kind, f.hit.detector, f.fingerprint) for f in found]


def test_prescan_is_a_necessary_condition(scanners: tuple[Any, Any], prescan: Prescan) -> None:
    full, _ = scanners
    names = [entry.name for entry in prescan.entries]
    for text in texts():
        woken = {names[i] for i in prescan.candidates(text)}
        for found in full.scan_text(text):
            assert found.hit.detector in woken, found.hit.kind


def test_light_scanner_finds_what_the_full_scanner_finds(scanners: tuple[Any, Any]) -> None:
    full, light = scanners
    checked = 0
    for text in texts():
        expected = spans(full.scan_text(text))
        assert spans(light.scan_text(text)) == expected
        checked += bool(expected)
    assert checked > 50  # the fakes are found: the comparison is not of empty answers


def test_same_findings_on_leakbench(scanners: tuple[Any, Any], prescan: Prescan) -> None:
    """Positives, generated positives and negatives, alone and inside a long output."""
    if not LEAKBENCH.is_dir():
        pytest.skip(needs_shared("leakbench"))
    full, light = scanners
    padding = noise(3000)
    found = 0
    for name in ("positives.jsonl", "generated_positives.jsonl", "negatives.jsonl"):
        for n, line in enumerate((LEAKBENCH / name).read_text().splitlines()):
            text = json.loads(line)["text"]
            # Every text alone, and one in four inside a long output (windows, long strings).
            long = (padding + "\n" + text + "\n" + padding,) if n % 4 == 0 else ()
            for variant in (text, *long):
                expected = spans(full.scan_text(variant))
                assert spans(light.scan_text(variant)) == expected, name
                found += bool(expected)
    assert found > 400


def test_decoys_wake_nothing_the_full_scanner_would_mask(scanners: tuple[Any, Any]) -> None:
    if not DECOYS.is_file():
        pytest.skip(needs_shared("leakbench"))
    full, light = scanners
    for line in DECOYS.read_text().splitlines():
        text = json.loads(line)["text"]
        assert spans(light.scan_text(text)) == spans(full.scan_text(text)) == []


def test_hex_anchors_in_shas_and_uuids_are_confirmed_away(prescan: Prescan) -> None:
    text = noise(400_000)
    lowered = text.lower()
    # The anchors that used to send every megabyte of SHAs to the full scan are there...
    assert "4b1d" in lowered or "acca" in lowered or "eaaa" in lowered
    # ...but nothing that could match around them.
    assert prescan.candidates(text) == set()


def test_a_placeholder_makes_every_detector_a_candidate(prescan: Prescan) -> None:
    text = "KEY=[REDACTED:github-token:3f9a1c2e] and more"
    assert prescan.candidates(text) == set(range(len(prescan.entries)))


def test_max_reach() -> None:
    assert max_reach(r"ab(?=c{3})") == 5
    assert max_reach(r"(?<=x)a{2,4}") == 4
    assert max_reach(r"a+") is None
    assert max_reach(r"(a)\1") is None
    assert max_lookbehind(r"(?:(?<![a-z]{2})|(?<=x))b(?<=\d)") == 2
    assert max_lookbehind(r"ab") == 0


def test_malformed_or_planted_prescans_are_refused(compiled: dict[str, Any]) -> None:
    assert Prescan.from_json(None) is None
    assert Prescan.from_json({**compiled, "format": 99}) is None
    assert Prescan.from_json({**compiled, "detectors": "x"}) is None
    for change in (
        lambda e: e.update(module="../../os"),
        lambda e: e.update(index=-1),
        lambda e: e.update(literals=[1]),
        lambda e: e.update(literals=["UPPER"]),
        lambda e: e.update(literals=[], gates=None),
        lambda e: e.update(confirm=["a", 1 << 20, None, 0]),
        lambda e: e.update(confirm=["a" * 5000, 0, None, 0]),
        lambda e: e.update(confirm=["a", 0, -1, 0]),
    ):
        planted = copy.deepcopy(compiled)
        change(planted["detectors"][0])
        assert Prescan.from_json(planted) is None
    broken = copy.deepcopy(compiled)
    broken["detectors"][0]["confirm"] = ["(", 0, None, 0]
    assert Prescan.from_json(broken) is not None  # compiled lazily; a bad one fails the call
    # (the hook then runs the full path)


def test_a_prescan_compiled_from_other_code_is_stale(compiled: dict[str, Any]) -> None:
    stale = copy.deepcopy(compiled)
    stale["stamp"][0][2] += 1  # a rule file changed since
    assert Prescan.from_json(stale) is None


def test_a_detector_not_where_the_prescan_says_is_refused(compiled: dict[str, Any]) -> None:
    moved = copy.deepcopy(compiled)
    moved["detectors"][0]["name"] = "someone-else"
    prescan = Prescan.from_json(moved)
    assert prescan is not None
    with pytest.raises(StalePrescan):
        load_detector(prescan, 0)


def test_the_prescan_knows_the_placeholder_prefix() -> None:
    """Spelled out in live_prescan.py (importing placeholder.py costs the fast path its
    regexes): the same as the one placeholder format's."""
    from scrubber.detection import live_prescan
    from scrubber.detection.placeholder import PLACEHOLDER_PREFIX

    assert live_prescan._PLACEHOLDER_PREFIX == PLACEHOLDER_PREFIX
