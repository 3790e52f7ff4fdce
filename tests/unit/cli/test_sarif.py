"""`scrub audit --format sarif`: each kind's rule says what the kind is and what to do about it,
links go to the project's own URL from the package metadata (or are left out, never made up),
and the log is valid against the official SARIF 2.1.0 schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scrubber.cli import render, sarif_rules
from scrubber.cli.render import SARIF_SCHEMA, render_sarif
from scrubber.detection.finding import Finding
from scrubber.usecases.audit_report import AuditReport, FileAudit, ScanTarget
from tests.sarif_schema import sarif_schema, validate_sarif

REPO = Path(__file__).resolve().parents[3]
URL = "https://code.example.org/team/scrubber"
# Kinds only detect-secrets' keyword and entropy checks report (no `reference` of ours).
DETECT_SECRETS_ONLY = ("keyword-value", "high-entropy-base64", "high-entropy-hex")


def _report(tmp_path: Path, kinds: tuple[str, ...]) -> AuditReport:
    path = tmp_path / "s.jsonl"
    findings = [
        Finding(str(path), n + 1, "/message/content", (3, 43), kind, "rule", f"{n:016x}")
        for n, kind in enumerate(kinds)
    ]
    return AuditReport([FileAudit(ScanTarget(path, True, "sid"), findings)], [])


def _rules(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}


def test_every_known_kind_has_its_familys_help_not_the_fallback() -> None:
    kinds = sorted({*sarif_rules.kind_references(), *DETECT_SECRETS_ONLY})
    for kind in kinds:
        assert sarif_rules.family_of(kind) is not None, kind
        what, todo = sarif_rules.describe(kind)
        rule = sarif_rules.rule_for(kind, URL)
        assert rule["help"]["text"] == f"{what} {todo}"
        assert "scrub redact" in rule["help"]["text"]
        assert rule["fullDescription"]["text"].startswith(what)


def test_a_kind_of_ours_names_where_its_format_is_documented() -> None:
    from scrubber.detection.rules import github

    rule = sarif_rules.rule_for(github.GITHUB_TOKEN.kind, None)
    assert (
        f"Format documented in: {github.GITHUB_TOKEN.reference.rstrip('. ')}"
        in (rule["fullDescription"]["text"])
    )
    assert "Revoke it where it was issued" in rule["help"]["text"]
    assert "helpUri" not in rule


def test_an_unknown_kind_gets_a_plain_fallback() -> None:
    what, todo = sarif_rules.describe("made-up-kind")
    assert what == "A value scrubber reports as a secret of kind made-up-kind."
    assert sarif_rules.family_of("made-up-kind") is None
    assert todo.startswith("Treat it as exposed: rotate") and "scrub redact" in todo


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([f"Homepage, {URL}/home", f"Repository, {URL}/"], URL),
        ([f"Homepage, {URL}"], URL),
        ([f"Source, {URL}", "Issues, https://other.example/i"], URL),
        (["Repository, http://insecure.example/r", "Issues, https://other.example/i"], None),
        ([], None),
    ],
)
def test_the_project_url_comes_from_project_url_metadata(
    entries: list[str], expected: str | None
) -> None:
    assert sarif_rules.project_url(entries) == expected


def test_the_installed_metadata_decides_the_url() -> None:
    from importlib import metadata

    entries = metadata.metadata("scrubber").get_all("Project-URL") or []
    assert sarif_rules.project_url() == sarif_rules.project_url(entries)


def test_links_go_to_the_project_and_its_readme_section_on_findings(tmp_path: Path) -> None:
    log = json.loads(render_sarif(_report(tmp_path, ("github-token", "jwt")), url=URL))
    validate_sarif(log)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == URL
    anchor = sarif_rules.heading_anchor(sarif_rules.README_FINDINGS_SECTION)
    for rule in _rules(log).values():
        assert rule["helpUri"] == f"{URL}#{anchor}"
    headings = re.findall(r"^#+ (.+)$", (REPO / "README.md").read_text(), flags=re.M)
    assert anchor in {sarif_rules.heading_anchor(h) for h in headings}
    assert anchor == "audit"


def test_without_a_project_url_no_link_is_made_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "project_url", lambda: None)
    text = render_sarif(_report(tmp_path, ("github-token", "made-up-kind")))
    log = json.loads(text)
    validate_sarif(log)
    assert "informationUri" not in log["runs"][0]["tool"]["driver"]
    assert all("helpUri" not in rule for rule in _rules(log).values())
    assert "github.com/scrubber" not in text
    assert _rules(log)["made-up-kind"]["help"]["text"].startswith("A value scrubber reports")


def test_the_log_names_the_schema_it_is_valid_against(tmp_path: Path) -> None:
    assert sarif_schema()["id"] == SARIF_SCHEMA
    log = json.loads(render_sarif(_report(tmp_path, ()), url=URL))
    validate_sarif(log)
    log["runs"][0]["tool"]["driver"]["informationUri"] = 7  # the schema does reject bad logs
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(log)
