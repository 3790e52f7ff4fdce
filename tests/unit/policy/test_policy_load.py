"""Reading policy files: where they come from, and errors that name the file and the key."""

from __future__ import annotations

import os
import random
import string
from pathlib import Path

import pytest

from scrubber.errors import ConfigError, ExitCode
from scrubber.policy.load import (
    MAX_POLICY_BYTES,
    LoadedPolicy,
    PolicySource,
    load_policy,
    parse_policy,
)
from scrubber.policy.model import (
    BECH32_CHARSET,
    ManifestField,
    Policy,
    SessionEndAction,
    ThinkingMode,
)


def fake_recipient() -> str:
    return "age1" + "".join(random.choice(BECH32_CHARSET) for _ in range(58))


def random_word(length: int = 20) -> str:
    return "".join(random.choices(string.ascii_letters + string.digits, k=length))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A pretend environment: nothing here can reach the real ~/.claude."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "SCRUB_HOME": str(tmp_path / "scrub"),
    }


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_text(tmp_path: Path, env: dict[str, str], text: str) -> Policy:
    path = write(tmp_path / "p.yaml", text)
    return load_policy(path, env).policy


def error_for(tmp_path: Path, env: dict[str, str], text: str) -> ConfigError:
    path = write(tmp_path / "broken-policy.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_policy(path, env)
    error = caught.value
    assert error.exit_code == ExitCode.USAGE
    assert "\n" not in error.message, "errors are one line"
    assert str(path) in error.message, "errors name the file"
    return error


# --- where the policy comes from ------------------------------------------------------------


def test_precedence_flag_then_variable_then_home_then_builtin(
    tmp_path: Path, env: dict[str, str]
) -> None:
    flag_file = write(tmp_path / "flag.yaml", "version: 1\nretention: {days: 11}\n")
    env_file = write(tmp_path / "env.yaml", "version: 1\nretention: {days: 22}\n")
    home_file = write(
        Path(env["SCRUB_HOME"]) / "policy.yaml", "version: 1\nretention: {days: 33}\n"
    )
    with_variable = {**env, "SCRUB_POLICY": str(env_file)}

    loaded = load_policy(flag_file, with_variable)
    assert (loaded.source, loaded.path, loaded.policy.retention.days) == (
        PolicySource.FLAG,
        flag_file,
        11,
    )

    loaded = load_policy(None, with_variable)
    assert (loaded.source, loaded.path, loaded.policy.retention.days) == (
        PolicySource.ENVIRONMENT,
        env_file,
        22,
    )

    loaded = load_policy(None, env)
    assert (loaded.source, loaded.path, loaded.policy.retention.days) == (
        PolicySource.HOME,
        home_file,
        33,
    )

    home_file.unlink()
    loaded = load_policy(None, env)
    assert loaded == LoadedPolicy(Policy.default(), PolicySource.BUILTIN, None, ())
    assert "built-in" in loaded.describe()


def test_scrub_home_defaults_under_the_config_dir(tmp_path: Path, env: dict[str, str]) -> None:
    del env["SCRUB_HOME"]
    policy_file = write(Path(env["CLAUDE_CONFIG_DIR"]) / "scrubber" / "policy.yaml", "version: 1\n")
    loaded = load_policy(None, env)
    assert loaded.source is PolicySource.HOME
    assert loaded.path == policy_file
    assert str(policy_file) in loaded.describe()


def test_empty_variable_counts_as_unset(env: dict[str, str]) -> None:
    assert load_policy(None, {**env, "SCRUB_POLICY": ""}).source is PolicySource.BUILTIN


@pytest.mark.parametrize("source", ["flag", "variable"])
def test_a_file_asked_for_must_exist(tmp_path: Path, env: dict[str, str], source: str) -> None:
    missing = tmp_path / "nowhere" / "policy.yaml"
    with pytest.raises(ConfigError) as caught:
        if source == "flag":
            load_policy(missing, env)
        else:
            load_policy(None, {**env, "SCRUB_POLICY": str(missing)})
    assert str(missing) in caught.value.message
    assert "not found" in caught.value.message
    assert caught.value.hint is not None


def test_a_dangling_home_policy_is_an_error_not_the_defaults(
    tmp_path: Path, env: dict[str, str]
) -> None:
    link = Path(env["SCRUB_HOME"]) / "policy.yaml"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "unmounted" / "policy.yaml")
    with pytest.raises(ConfigError, match="not found"):
        load_policy(None, env)


def test_a_folder_is_not_a_policy(tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="folder"):
        load_policy(tmp_path, env)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file(tmp_path: Path, env: dict[str, str]) -> None:
    path = write(tmp_path / "p.yaml", "version: 1\n")
    path.chmod(0)
    with pytest.raises(ConfigError, match="cannot read"):
        load_policy(path, env)


def test_an_oversized_file(tmp_path: Path, env: dict[str, str]) -> None:
    path = write(tmp_path / "p.yaml", "version: 1\n" + "#" * MAX_POLICY_BYTES)
    with pytest.raises(ConfigError, match="too large"):
        load_policy(path, env)


def test_not_utf8(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"version: 1\n# \xff\xfe\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_policy(path, env)


def test_a_byte_order_mark_is_fine(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"\xef\xbb\xbfversion: 1\n")
    assert load_policy(path, env).policy == Policy.default()


# --- every error names the file and the key -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # unknown keys, at every level, with a suggestion where one is close
        ("version: 1\nretension: {}\n", "unknown key 'retension' (did you mean 'retention'?)"),
        (
            "version: 1\nretention: {dayz: 3}\n",
            "unknown key 'retention.dayz' (did you mean 'retention.days'?)",
        ),
        (
            "version: 1\ndetection: {allowlist: {pattern: []}}\n",
            "unknown key 'detection.allowlist.pattern' (did you mean "
            "'detection.allowlist.patterns'?)",
        ),
        ("version: 1\nfrobnicate: 1\n", "unknown key 'frobnicate'"),
        ("versoin: 1\n", "unknown key 'versoin' (did you mean 'version'?)"),
        # wrong types
        ("version: 1\nretention: {days: '30'}\n", "retention.days: expected a whole number"),
        (
            "version: 1\nretention: {days: 2.5}\n",
            "retention.days: expected a whole number, got 2.5",
        ),
        (
            "version: 1\nretention: {require_archive: 'yes please'}\n",
            "retention.require_archive: expected true or false, got a text",
        ),
        ("version: 1\nretention: [1, 2]\n", "retention: expected a mapping of keys, got a list"),
        ("version: 1\ndetection: true\n", "detection: expected a mapping of keys, got true"),
        ("version: 1\npins: {sessions: 'abc'}\n", "pins.sessions: expected a list, got a text"),
        (
            "version: 1\npins: {tags: [ok, 12]}\n",
            "pins.tags[1]: expected a text (quote it), got 12",
        ),
        (
            "version: 1\narchive: {destination: [a]}\n",
            "archive.destination: expected a text, got a list",
        ),
        ("version: 1\n7: x\n", "keys must be text, got 7"),
        # bad enums
        (
            "version: 1\nredaction: {thinking: redcat}\n",
            "redaction.thinking: expected one of redact, keep, got 'redcat'",
        ),
        (
            "version: 1\nredaction: {thinking: off}\n",
            "redaction.thinking: expected one of redact, keep, got false",
        ),
        (
            "version: 1\non_session_end: [archive-copy]\n",
            "on_session_end[0]: expected one of archive, redact-copy, redact-in-place",
        ),
        (
            "version: 1\non_session_end: redact-copy\n",
            "on_session_end: expected a list from archive, redact-copy, redact-in-place",
        ),
        (
            "version: 1\narchive: {clear_manifest_fields: [session_id, secrets]}\n",
            "archive.clear_manifest_fields[1]: expected one of session_id, project, cwd",
        ),
        # ranges
        ("version: 1\nretention: {days: 0}\n", "retention.days: expected a whole number from 1"),
        ("version: 1\nretention: {days: -5}\n", "retention.days: expected a whole number from 1"),
        (
            "version: 1\nretention: {max_deletions_per_run: 0}\n",
            "retention.max_deletions_per_run: expected a whole number >= 1, got 0",
        ),
        ("version: 1\nretention: {archive_days: 0}\n", "retention.archive_days:"),
        (
            "version: 1\ndetection: {allowlist: {patterns: ['ok', '[z-a]']}}\n",
            "detection.allowlist.patterns[1]: not a valid regular expression",
        ),
        (
            "version: 1\ndetection: {allowlist: {fingerprints: [nothex!]}}\n",
            "detection.allowlist.fingerprints[0]: expected a fingerprint",
        ),
        ("version: 1\narchive: {recipients: [age1nope]}\n", "archive.recipients[0]: expected an"),
        ("version: 1\non_session_end: [archive]\n", "on_session_end: 'archive' needs"),
        (
            "version: 1\non_session_end: [redact-copy, redact-copy]\n",
            "on_session_end[1]: 'redact-copy' is listed twice",
        ),
        # detector names (issue 14, item 12): a misspelt one is not silently ignored
        (
            "version: 1\ndetection: {disabled_detectors: [jwt, github-tokn]}\n",
            "detection.disabled_detectors[1]: unknown detector 'github-tokn' (did you mean "
            "'github-token'?)",
        ),
        (
            "version: 1\ndetection: {disabled_detectors: [detect-secret]}\n",
            "detection.disabled_detectors[0]: unknown detector 'detect-secret' (did you mean "
            "'detect-secrets'?)",
        ),
        (
            "version: 1\ndetection: {disabled_detectors: ['detect-secrets:AWSKeyDetector']}\n",
            "detection.disabled_detectors[0]: 'detect-secrets:AWSKeyDetector' is one of "
            "detect-secrets' plugins, which are turned off together (did you mean "
            "'detect-secrets'?)",
        ),
        ("version: 1\ndetection: {disabled_detectors: [frobnicator]}\n", "unknown detector"),
        # the version
        ("version: 2\n", "version: expected 1, got 2"),
        ("version: '1'\n", "version: expected 1, got a text"),
        ("version: true\n", "version: expected 1, got true"),
        ("retention: {days: 3}\n", "version: missing"),
        # not a mapping at all
        ("- version\n- 1\n", "the file should be a mapping of keys, got a list"),
        ("just words\n", "the file should be a mapping of keys, got a text"),
        ("", "the file is empty"),
        ("# only comments\n", "the file is empty"),
    ],
)
def test_errors_name_file_key_and_expectation(
    tmp_path: Path, env: dict[str, str], text: str, expected: str
) -> None:
    error = error_for(tmp_path, env, text)
    assert expected in error.message


def test_an_unknown_detector_name_is_not_echoed_when_it_looks_like_a_value(
    tmp_path: Path, env: dict[str, str]
) -> None:
    pasted = "Ab" + random_word(38)  # a value pasted into the wrong key
    error = error_for(
        tmp_path, env, f"version: 1\ndetection:\n  disabled_detectors: ['{pasted}']\n"
    )
    assert "detection.disabled_detectors[0]: unknown detector a name" in error.message
    assert pasted not in error.message and pasted not in (error.hint or "")
    assert error.hint is not None and "scrub audit --format json" in error.hint


@pytest.mark.parametrize("where", ["top", "nested"])
def test_an_unknown_key_is_not_echoed_when_it_looks_like_a_value(
    tmp_path: Path, env: dict[str, str], where: str
) -> None:
    pasted = "gh" + "p_" + random_word(36)  # a token pasted where a key goes
    text = (
        f"version: 1\n{pasted}: 1\n"
        if where == "top"
        else f"version: 1\nretention:\n  {pasted}: 1\n"
    )
    error = error_for(tmp_path, env, text)
    assert "unknown key (a " in error.message and "looks like a value, not shown" in error.message
    assert pasted not in error.message and pasted not in (error.hint or "")
    assert pasted[4:20] not in error.message
    # A misspelt key is still shown as written.
    assert (
        "'retention.dayz'" in error_for(tmp_path, env, "version: 1\nretention: {dayz: 1}\n").message
    )


def test_unknown_keys_come_with_a_hint(tmp_path: Path, env: dict[str, str]) -> None:
    error = error_for(tmp_path, env, "version: 1\npins: {session: []}\n")
    assert error.hint is not None
    assert "default.yaml" in error.hint


def test_a_newer_version_is_reported_before_its_unknown_keys(
    tmp_path: Path, env: dict[str, str]
) -> None:
    error = error_for(tmp_path, env, "version: 2\nnew_section: {}\n")
    assert "version: expected 1, got 2" in error.message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("version: 1\nretention:\n  days: [1,\n", 4),
        ("version: 1\n  indented: wrong\n", 2),
        ("version: 1\nretention:\n\tdays: 3\n", 3),
        ("version: 1\nversion: 1\n", 2),  # PyYAML would silently keep the last one
        ("version: 1\nretention: {days: 3, days: 4}\n", 2),
        ("version: !!python/object/apply:os.getcwd []\n", 1),
    ],
)
def test_yaml_errors_name_file_and_line(
    tmp_path: Path, env: dict[str, str], text: str, line: int
) -> None:
    error = error_for(tmp_path, env, text)
    assert f", line {line}, column " in error.message
    assert "not valid YAML" in error.message


def test_yaml_errors_do_not_quote_the_file(tmp_path: Path, env: dict[str, str]) -> None:
    word = random_word()
    error = error_for(tmp_path, env, f"version: 1\nretention:\n  days: 3\n   {word}: x: y\n")
    assert word not in error.message
    assert word not in (error.hint or "")


def test_errors_never_echo_text_values(tmp_path: Path, env: dict[str, str]) -> None:
    token = random_word(32)
    cases = [
        f"version: 1\nretention: {{healthcheck_url: 'ftp://hc.example.org/{token}'}}\n",
        f"version: 1\nretention: {{days: '{token}'}}\n",
        f"version: 1\nredaction: {{thinking: '{token}'}}\n",
        f"version: 1\ndetection: {{allowlist: {{patterns: ['({token}']}}}}\n",
        f"version: 1\narchive: {{recipients: ['AGE-SECRET-KEY-1{token.upper()}']}}\n",
        f"version: 1\npins: {{names: ' {token}'}}\n",
    ]
    for text in cases:
        error = error_for(tmp_path, env, text)
        assert token not in error.message
        assert token.upper() not in error.message
        assert token not in (error.hint or "")


# --- what a valid file gives --------------------------------------------------------------


def test_a_full_file_gives_the_expected_values(tmp_path: Path, env: dict[str, str]) -> None:
    recipient = fake_recipient()
    text = f"""
version: 1
detection:
  allowlist:
    patterns: ['EXAMPLE[0-9]+']
    fingerprints: [0123abcd]
  disabled_detectors: [jwt]
  scan_side_files: false
redaction:
  thinking: keep
archive:
  recipients: [{recipient}]
  recipients_file: keys/recipients.txt
  destination: ~/archives
  clear_manifest_fields: [session_id, title]
on_session_end: [redact-copy, archive]
retention:
  days: 90
  keep_newest_per_project: 0
  min_idle_minutes: 5
  max_deletions_per_run: 10
  require_archive: true
  trash_days: 0
  archive_days: 365
  healthcheck_url: https://hc.example.org/ping
pins:
  sessions: [abc]
  names: [keep]
  tags: [t]
  projects: ['/srv/*']
"""
    policy = load_text(tmp_path, env, text)
    assert policy.detection.allowlist.allows_value("EXAMPLE42")
    assert policy.detection.allowlist.fingerprints == ("0123abcd",)
    assert policy.detection.disabled_detectors == ("jwt",)
    assert policy.detection.scan_side_files is False
    assert policy.redaction.thinking is ThinkingMode.KEEP
    assert policy.archive.recipients == (recipient,)
    assert policy.archive.recipients_file == tmp_path / "keys" / "recipients.txt"
    assert policy.archive.destination == Path(env["HOME"]) / "archives"
    assert policy.archive.clear_manifest_fields == (ManifestField.SESSION_ID, ManifestField.TITLE)
    assert policy.session_end_actions == (SessionEndAction.ARCHIVE, SessionEndAction.REDACT_COPY)
    retention = policy.retention
    assert (retention.days, retention.keep_newest_per_project, retention.min_idle_minutes) == (
        90,
        0,
        5,
    )
    assert (retention.max_deletions_per_run, retention.trash_days, retention.archive_days) == (
        10,
        0,
        365,
    )
    assert retention.require_archive is True
    assert retention.healthcheck_url == "https://hc.example.org/ping"
    assert policy.pins.projects == ("/srv/*",)


def test_empty_keys_and_sections_mean_defaults(tmp_path: Path, env: dict[str, str]) -> None:
    text = """
version: 1
detection:
redaction:
  thinking:
archive:
  recipients:
  clear_manifest_fields:
on_session_end:
retention:
  days:
  trash_days:
  require_archive:
pins:
"""
    assert load_text(tmp_path, env, text) == Policy.default()


def test_explicit_empty_lists_are_kept(tmp_path: Path, env: dict[str, str]) -> None:
    policy = load_text(
        tmp_path, env, "version: 1\non_session_end: []\narchive: {clear_manifest_fields: []}\n"
    )
    assert policy.on_session_end == ()
    assert policy.archive.clear_manifest_fields == ()


def test_archives_inside_projects_are_refused(tmp_path: Path, env: dict[str, str]) -> None:
    inside = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / "-x"
    error = error_for(tmp_path, env, f"version: 1\narchive: {{destination: '{inside}'}}\n")
    assert "archive.destination: must not be inside" in error.message


def test_warnings_travel_with_the_loaded_policy(tmp_path: Path, env: dict[str, str]) -> None:
    path = write(tmp_path / "p.yaml", "version: 1\nretention: {require_archive: true}\n")
    assert any("require_archive" in note for note in load_policy(path, env).warnings)


def test_parse_policy_resolves_relative_paths_from_base_dir(tmp_path: Path) -> None:
    policy = parse_policy(
        "version: 1\narchive: {destination: out}\n", origin="inline", base_dir=tmp_path, env={}
    )
    assert policy.archive.destination == tmp_path / "out"
