"""The shipped templates: they load, document every key, and render into installable policies."""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest
import yaml

from scrubber.errors import ConfigError, KeyMaterialError, UsageError
from scrubber.policy.load import (
    TEMPLATE_NAMES,
    load_template,
    parse_policy,
    read_template,
    render_default_policy,
)
from scrubber.policy.model import (
    BECH32_CHARSET,
    ArchivePolicy,
    ManifestField,
    Policy,
    SessionEndAction,
    ThinkingMode,
    compile_allowlist_json,
)

REPO = Path(__file__).resolve().parents[3]


def fake_recipient() -> str:
    return "age1" + "".join(random.choice(BECH32_CHARSET) for _ in range(58))


def model_key_paths(cls: type, prefix: str = "") -> set[str]:
    """Every key a version 1 policy has, read from the dataclasses themselves."""
    keys: set[str] = set()
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        path = f"{prefix}{field.name}"
        keys.add(path)
        default = field.default
        if dataclasses.is_dataclass(default) and not isinstance(default, type):
            keys |= model_key_paths(type(default), path + ".")
    return keys


def yaml_key_paths(data: object, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(data, dict):
        for name, value in data.items():
            keys.add(f"{prefix}{name}")
            keys |= yaml_key_paths(value, f"{prefix}{name}.")
    return keys


def test_the_model_has_exactly_the_contract_keys() -> None:
    # The Contracts' list of policy keys, written out: the model may not drift from it.
    assert model_key_paths(Policy) == {
        "detection",
        "detection.allowlist",
        "detection.allowlist.patterns",
        "detection.allowlist.fingerprints",
        "detection.disabled_detectors",
        "detection.scan_side_files",
        "redaction",
        "redaction.thinking",
        "archive",
        "archive.recipients",
        "archive.recipients_file",
        "archive.destination",
        "archive.clear_manifest_fields",
        "archive.s3",
        "live",
        "live.post_tool_use",
        "live.user_prompt_submit",
        "live.detectors",
        "live.on_error",
        "on_session_end",
        "retention",
        "retention.days",
        "retention.keep_newest_per_project",
        "retention.min_idle_minutes",
        "retention.max_deletions_per_run",
        "retention.require_archive",
        "retention.trash_days",
        "retention.archive_days",
        "retention.healthcheck_url",
        "pins",
        "pins.sessions",
        "pins.names",
        "pins.tags",
        "pins.projects",
    }


def test_default_template_holds_every_key_and_equals_the_defaults() -> None:
    text = read_template("default")
    assert yaml_key_paths(yaml.safe_load(text)) == model_key_paths(Policy) | {"version"}
    assert load_template("default") == Policy.default()


def test_every_setting_in_the_default_template_is_explained() -> None:
    lines = read_template("default").splitlines()
    leaf = re.compile(r"^\s*([a-z0-9_]+):(?:\s+\S.*)?$|^\s*([a-z0-9_]+):$")
    sections = {"detection", "allowlist", "redaction", "archive", "live", "retention", "pins"}
    checked: set[str] = set()
    for number, line in enumerate(lines):
        match = leaf.match(line)
        if not match or line.lstrip().startswith("#"):
            continue
        key = match.group(1) or match.group(2)
        if key in sections or key == "version":
            continue
        comments = []
        above = number - 1
        while above >= 0 and lines[above].lstrip().startswith("#"):
            comments.append(lines[above])
            above -= 1
        assert comments, f"{key} has no comment above it"
        assert "Default" in " ".join(comments), f"{key}'s comment does not give its default"
        checked.add(key)
    leaves = {path.rsplit(".", 1)[-1] for path in model_key_paths(Policy)} - sections
    assert checked == leaves


def test_strict_template_loads() -> None:
    policy = load_template("strict")
    assert policy.redaction.thinking is ThinkingMode.REDACT
    assert policy.detection.scan_side_files is True
    assert policy.retention.require_archive is True
    assert policy.archive.clear_manifest_fields == ()
    assert policy.session_end_actions == (SessionEndAction.REDACT_IN_PLACE,)


def test_vps_template_refuses_until_a_recipient_is_added() -> None:
    with pytest.raises(ConfigError) as caught:
        load_template("vps")
    error = caught.value
    assert "policies/vps.yaml" in error.message
    assert "on_session_end" in error.message
    assert "archive.recipients" in error.message
    assert error.hint is not None
    assert "age1" in error.hint


def test_vps_template_with_a_recipient(tmp_path: Path) -> None:
    recipient = fake_recipient()
    text = read_template("vps").replace("  recipients: []", f"  recipients: [{recipient}]", 1)
    policy = parse_policy(text, origin="vps", base_dir=tmp_path, env={})
    assert policy.archive.recipients == (recipient,)
    assert policy.session_end_actions == (SessionEndAction.ARCHIVE,)
    assert policy.retention.require_archive is True
    assert policy.retention.days == 30
    assert policy.retention.archive_days == 365
    assert policy.warnings() == ()


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_templates_are_package_data_and_the_policies_link_shows_them(name: str) -> None:
    packaged = resources.files("scrubber.policy").joinpath("templates", f"{name}.yaml")
    assert packaged.is_file()
    link = REPO / "policies"
    if not link.exists():
        pytest.skip("not running from a source checkout")
    assert link.is_symlink()
    assert str(link.readlink()) == "scrubber/policy/templates"
    assert (link / f"{name}.yaml").read_text(encoding="utf-8") == read_template(name)


def test_pyproject_ships_the_templates() -> None:
    pyproject = REPO / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not running from a source checkout")
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    assert "policy/templates/*.yaml" in config["tool"]["setuptools"]["package-data"]["scrubber"]


def test_unknown_template_name() -> None:
    with pytest.raises(UsageError, match="unknown policy template"):
        read_template("lenient")


# --- render_default_policy --------------------------------------------------------------------


def test_render_without_choices_is_the_template() -> None:
    assert render_default_policy() == read_template("default")


def test_render_round_trip(tmp_path: Path) -> None:
    recipients = [fake_recipient(), fake_recipient()]
    key_file = tmp_path / "my keys" / "recipients: 'odd'.txt"
    text = render_default_policy(
        recipients=recipients,
        on_session_end=["redact-copy", "archive"],
        recipients_file=key_file,
    )
    policy = parse_policy(text, origin="rendered", base_dir=tmp_path, env={})
    expected = dataclasses.replace(
        Policy.default(),
        archive=ArchivePolicy(recipients=tuple(recipients), recipients_file=key_file),
        on_session_end=(SessionEndAction.REDACT_COPY, SessionEndAction.ARCHIVE),
    )
    assert policy == expected
    assert policy.session_end_actions == (SessionEndAction.ARCHIVE, SessionEndAction.REDACT_COPY)
    # Written from the template's text: every comment survives.
    comments = [line for line in read_template("default").splitlines() if line.lstrip()[:1] == "#"]
    rendered_lines = text.splitlines()
    assert all(comment in rendered_lines for comment in comments)


def test_render_recipients_alone_archives_by_default(tmp_path: Path) -> None:
    recipient = fake_recipient()
    policy = parse_policy(
        render_default_policy(recipients=[recipient]), origin="r", base_dir=tmp_path, env={}
    )
    assert policy.on_session_end is None
    assert policy.session_end_actions == (SessionEndAction.ARCHIVE,)


def test_render_explicit_nothing(tmp_path: Path) -> None:
    text = render_default_policy(recipients=[fake_recipient()], on_session_end=[])
    policy = parse_policy(text, origin="r", base_dir=tmp_path, env={})
    assert policy.session_end_actions == ()


def test_render_refuses_a_bad_recipient_without_echoing_it() -> None:
    identity = "AGE-SECRET-KEY-1" + "".join(random.choice("QPZRY9X8GF2TVDW0") for _ in range(58))
    with pytest.raises(KeyMaterialError) as caught:
        render_default_policy(recipients=[fake_recipient(), identity])
    assert "[1]" in caught.value.message
    assert identity not in caught.value.message
    with pytest.raises(KeyMaterialError, match="X25519"):
        render_default_policy(recipients=["age1short"])


def test_render_refuses_unknown_actions() -> None:
    with pytest.raises(UsageError, match="unknown on-session-end action"):
        render_default_policy(on_session_end=["shred"])


def test_render_refuses_archive_without_recipients() -> None:
    with pytest.raises(ConfigError, match=r"'archive' needs archive\.recipients"):
        render_default_policy(on_session_end=["archive"])


def test_compiled_allowlist_of_a_template() -> None:
    data = compile_allowlist_json(load_template("strict"))
    assert data["patterns"] == []
    assert data["fingerprints"] == []
    assert data["disabled_detectors"] == []
    assert data["match"] == "fullmatch"


def test_the_model_does_not_import_yaml() -> None:
    # The status line and the hooks read policy values; they must not pay for a YAML parser.
    code = (
        "import sys, scrubber.policy.model as m\n"
        "m.compile_allowlist_json(m.Policy.default())\n"
        "sys.exit('yaml' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert result.returncode == 0, result.stderr.decode()


def test_manifest_field_choices_are_documented_in_default() -> None:
    text = read_template("default")
    for field in ManifestField:
        assert field.value in text
