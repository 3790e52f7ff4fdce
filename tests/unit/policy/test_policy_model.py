"""The policy values: defaults, range checks, the on_session_end rule, allowlist and pins."""

from __future__ import annotations

import dataclasses
import json
import random
import string
from pathlib import Path

import pytest

from scrubber.policy.model import (
    BECH32_CHARSET,
    DEFAULT_CLEAR_MANIFEST_FIELDS,
    MAX_DAYS,
    Allowlist,
    ArchivePolicy,
    DetectionPolicy,
    ManifestField,
    Pins,
    Policy,
    PolicyValueError,
    RetentionPolicy,
    SessionEndAction,
    ThinkingMode,
    allowlist_from_json,
    compile_allowlist_json,
)


def fake_recipient(rng: random.Random | None = None) -> str:
    """An age recipient of the right shape (the model checks the shape, keys.py the checksum)."""
    rng = rng or random.Random()
    return "age1" + "".join(rng.choice(BECH32_CHARSET) for _ in range(58))


def fake_identity() -> str:
    alphabet = string.ascii_uppercase + string.digits
    return "AGE-SECRET-KEY-1" + "".join(random.choice(alphabet) for _ in range(58))


def test_defaults_match_the_contracts() -> None:
    policy = Policy.default()
    assert policy.on_session_end is None
    assert policy.session_end_actions == ()
    assert policy.redaction.thinking is ThinkingMode.REDACT
    assert policy.detection.scan_side_files is True
    assert policy.archive.clear_manifest_fields == DEFAULT_CLEAR_MANIFEST_FIELDS
    assert ManifestField.TITLE not in DEFAULT_CLEAR_MANIFEST_FIELDS
    assert ManifestField.CWD not in DEFAULT_CLEAR_MANIFEST_FIELDS
    retention = policy.retention
    assert retention.days is None
    assert retention.keep_newest_per_project == 1
    assert retention.min_idle_minutes == 60
    assert retention.max_deletions_per_run == 50
    assert retention.require_archive is False
    assert retention.trash_days == 7
    assert retention.archive_days is None
    assert policy.warnings() == ()


def test_values_are_frozen_and_slotted() -> None:
    policy = Policy.default()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.retention.days = 3  # type: ignore[misc]
    assert not hasattr(policy, "__dict__")
    assert not hasattr(policy.retention, "__dict__")


def test_unset_on_session_end_archives_only_when_recipients_exist() -> None:
    with_keys = Policy(archive=ArchivePolicy(recipients=(fake_recipient(),)))
    assert with_keys.session_end_actions == (SessionEndAction.ARCHIVE,)
    with_file = Policy(archive=ArchivePolicy(recipients_file=Path("/keys/recipients.txt")))
    assert with_file.session_end_actions == (SessionEndAction.ARCHIVE,)
    explicit_none = Policy(archive=ArchivePolicy(recipients=(fake_recipient(),)), on_session_end=())
    assert explicit_none.session_end_actions == ()


def test_actions_always_run_archive_then_copy_then_in_place() -> None:
    policy = Policy(
        archive=ArchivePolicy(recipients=(fake_recipient(),)),
        on_session_end=(
            SessionEndAction.REDACT_IN_PLACE,
            SessionEndAction.ARCHIVE,
            SessionEndAction.REDACT_COPY,
        ),
    )
    assert policy.session_end_actions == (
        SessionEndAction.ARCHIVE,
        SessionEndAction.REDACT_COPY,
        SessionEndAction.REDACT_IN_PLACE,
    )


def test_archive_action_without_recipients_is_refused() -> None:
    with pytest.raises(PolicyValueError) as caught:
        Policy(on_session_end=(SessionEndAction.ARCHIVE,))
    assert caught.value.key == "on_session_end"
    assert caught.value.hint is not None
    assert "age1" in caught.value.hint


def test_duplicate_actions_are_refused() -> None:
    with pytest.raises(PolicyValueError, match=r"on_session_end\[1\]"):
        Policy(on_session_end=(SessionEndAction.REDACT_COPY, SessionEndAction.REDACT_COPY))


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("days", 0, "from 1 to"),
        ("days", -3, "from 1 to"),
        ("days", MAX_DAYS + 1, "from 1 to"),
        ("days", True, "whole number"),
        ("keep_newest_per_project", -1, ">= 0"),
        ("min_idle_minutes", 0, ">= 1"),
        ("max_deletions_per_run", 0, ">= 1"),
        ("trash_days", -1, "from 0 to"),
        ("archive_days", 0, "from 1 to"),
        ("healthcheck_url", "ftp://example.org/x", "http"),
        ("healthcheck_url", "https://", "http"),
        ("healthcheck_url", "not a url", "http"),
    ],
)
def test_retention_ranges(field: str, value: object, expected: str) -> None:
    with pytest.raises(PolicyValueError) as caught:
        RetentionPolicy(**{field: value})  # type: ignore[arg-type]
    assert caught.value.key == field
    assert expected in caught.value.problem


def test_retention_accepts_its_boundaries() -> None:
    edge = RetentionPolicy(
        days=1,
        keep_newest_per_project=0,
        min_idle_minutes=1,
        max_deletions_per_run=1,
        trash_days=0,
        archive_days=MAX_DAYS,
        healthcheck_url="https://hc.example.org/ping/abc",
    )
    assert edge.days == 1
    assert edge.trash_days == 0


def test_healthcheck_url_stays_out_of_repr() -> None:
    token = "".join(random.choices(string.ascii_lowercase, k=24))
    retention = RetentionPolicy(healthcheck_url=f"https://hc.example.org/{token}")
    assert token not in repr(retention)
    assert token not in repr(Policy(retention=retention))


def test_an_identity_among_recipients_is_refused_without_echoing_it() -> None:
    identity = fake_identity()
    with pytest.raises(PolicyValueError) as caught:
        ArchivePolicy(recipients=(identity,))
    assert caught.value.key == "recipients[0]"
    assert "identity" in caught.value.problem
    assert identity not in str(caught.value)
    assert identity[16:] not in str(caught.value)


@pytest.mark.parametrize(
    "recipient",
    [
        "age1",
        "age1" + "b" * 58,  # 'b' is not in the Bech32 alphabet
        "AGE1" + "q" * 58,
        "age1" + "q" * 57,
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5",
    ],
)
def test_malformed_recipients_are_refused(recipient: str) -> None:
    with pytest.raises(PolicyValueError, match="X25519 recipient"):
        ArchivePolicy(recipients=(recipient,))


def test_recipient_shape_accepts_a_well_formed_one() -> None:
    recipient = fake_recipient()
    assert ArchivePolicy(recipients=(recipient,)).recipients == (recipient,)
    with pytest.raises(PolicyValueError, match="listed twice"):
        ArchivePolicy(recipients=(recipient, recipient))


def test_archive_destination_defaults_under_scrub_home(tmp_path: Path) -> None:
    assert ArchivePolicy().destination_in(tmp_path) == tmp_path / "archives"
    elsewhere = tmp_path / "mnt"
    assert ArchivePolicy(destination=elsewhere).destination_in(tmp_path) == elsewhere


def test_allowlist_patterns_match_whole_values() -> None:
    allowlist = Allowlist(patterns=("EXAMPLE[A-Z]{4}", "(?i)dummy-.*"))
    assert allowlist.allows_value("EXAMPLEABCD")
    assert allowlist.allows_value("DUMMY-whatever")
    # A pattern that matches only part of a value silences nothing.
    assert not allowlist.allows_value("xEXAMPLEABCD")
    assert not allowlist.allows_value("EXAMPLEABCDE")
    assert [p.pattern for p in allowlist.compiled] == list(allowlist.patterns)


def test_allowlist_fingerprints_match_by_prefix_and_case_insensitively() -> None:
    full = "".join(random.choices("0123456789abcdef", k=64))
    allowlist = Allowlist(fingerprints=(full[:8].upper(),))
    assert allowlist.fingerprints == (full[:8],)
    assert allowlist.allows_fingerprint(full)
    assert allowlist.allows("anything", full)
    assert not allowlist.allows_fingerprint("f" * 64 if not full.startswith("f") else "0" * 64)


@pytest.mark.parametrize("fingerprint", ["abc", "xyz12345", "a" * 65, " abcdef12"])
def test_allowlist_rejects_malformed_fingerprints(fingerprint: str) -> None:
    with pytest.raises(PolicyValueError, match=r"fingerprints\[0\]"):
        Allowlist(fingerprints=(fingerprint,))


def test_allowlist_rejects_bad_regex_without_quoting_it() -> None:
    pattern = "(unclosed" + "".join(random.choices(string.ascii_letters, k=12))
    with pytest.raises(PolicyValueError) as caught:
        Allowlist(patterns=("ok", pattern))
    assert caught.value.key == "patterns[1]"
    assert pattern not in str(caught.value)


def test_detection_enablement() -> None:
    detection = DetectionPolicy(disabled_detectors=("jwt",))
    assert not detection.is_enabled("jwt")
    assert detection.is_enabled("aws-access-key-id")


def test_an_unknown_detector_name_is_refused_in_code_too() -> None:
    # Issue 14, item 12: a misspelt name used to leave the detector running, unannounced.
    with pytest.raises(PolicyValueError) as caught:
        DetectionPolicy(disabled_detectors=("jwt", "jwtt"))
    assert caught.value.key == "disabled_detectors[1]"
    assert caught.value.problem == "unknown detector 'jwtt' (did you mean 'jwt'?)"
    assert caught.value.hint is not None and "detect-secrets" in caught.value.hint


def test_compiled_allowlist_json_round_trips() -> None:
    full = "".join(random.choices("0123456789abcdef", k=64))
    policy = Policy(
        detection=DetectionPolicy(
            allowlist=Allowlist(patterns=("EXAMPLE.*",), fingerprints=(full[:10],)),
            disabled_detectors=("jwt", "detect-secrets"),
        )
    )
    data = json.loads(json.dumps(compile_allowlist_json(policy)))
    assert data["patterns"] == ["EXAMPLE.*"]
    assert data["disabled_detectors"] == ["jwt", "detect-secrets"]
    allowlist, disabled = allowlist_from_json(data)
    assert allowlist == policy.detection.allowlist
    assert disabled == ("jwt", "detect-secrets")
    assert allowlist.allows_fingerprint(full)


@pytest.mark.parametrize(
    "data",
    [{"format": 99}, {"format": 1, "patterns": "x"}, {"format": 1, "fingerprints": [1]}],
)
def test_compiled_allowlist_json_refuses_other_formats(data: dict[str, object]) -> None:
    with pytest.raises(PolicyValueError):
        allowlist_from_json(data)


def test_pins_cover_by_id_name_tag_and_project_glob() -> None:
    pins = Pins(
        sessions=("s-1",), names=("keep me",), tags=("important",), projects=("/home/me/work/*",)
    )
    assert pins.covers(session_id="s-1")
    assert pins.covers(session_id="s-2", title="keep me")
    assert pins.covers(session_id="s-2", tags=("other", "important"))
    assert pins.covers(session_id="s-2", cwd="/home/me/work/app")
    assert pins.covers(session_id="s-2", project="-home-me-work-app") is False
    assert not pins.covers(session_id="s-2", title="Keep me", tags=("x",), cwd="/home/me/play")
    by_folder = Pins(projects=("-home-me-work-*",))
    assert by_folder.covers(session_id="s", project="-home-me-work-app")


def test_pins_merge_keeps_both_without_duplicates() -> None:
    merged = Pins(sessions=("a", "b"), tags=("t",)).merged(Pins(sessions=("b", "c"), names=("n",)))
    assert merged == Pins(sessions=("a", "b", "c"), names=("n",), tags=("t",))
    policy = Policy(pins=Pins(sessions=("a",))).with_pins(Pins(sessions=("z",)))
    assert policy.pins.sessions == ("a", "z")


def test_pins_reject_blank_entries() -> None:
    with pytest.raises(PolicyValueError, match=r"tags\[1\]"):
        Pins(tags=("ok", " "))


def test_warnings_name_surprising_combinations() -> None:
    lonely = Policy(retention=RetentionPolicy(require_archive=True))
    assert any("require_archive" in note for note in lonely.warnings())
    both = Policy(
        archive=ArchivePolicy(recipients=(fake_recipient(),), recipients_file=Path("/r.txt"))
    )
    assert any("both" in note for note in both.warnings())


def test_within_prefixes_the_section() -> None:
    error = PolicyValueError("days", "bad", "a hint").within("retention")
    assert error.key == "retention.days"
    assert error.hint == "a hint"
    assert str(error) == "retention.days: bad"
