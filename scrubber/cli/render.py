"""Rendering audit results as text, JSON (schema `scrubber.audit/1`) and SARIF 2.1.0.

Nothing rendered here holds a secret's value: findings carry kind, place, length, a public
prefix and a keyed fingerprint only, and titles, tool labels, paths and project names were
redacted by the audit (FileAudit.path_shown).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scrubber import __version__
from scrubber.cli.common import human_size, plural
from scrubber.cli.sarif_rules import project_url, rule_for
from scrubber.cli.terminal_text import terminal_lines
from scrubber.detection.finding import Finding
from scrubber.usecases.audit_report import AuditReport, FileAudit

try:  # the stdlib's indenting encoder is pure Python: a third of a warm audit's time
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib gives the same bytes
    _orjson = None  # type: ignore[assignment]

AUDIT_SCHEMA = "scrubber.audit/1"
# The official schema's own id (OASIS SARIF 2.1.0 Errata 01); tests validate against a copy of it.
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def masked_preview(finding: Finding) -> str:
    """At most a known public prefix and the length: `ghp_…(40 chars)`."""
    return f"{finding.prefix}…({finding.length} chars)"


def finding_to_json(finding: Finding, *, preview: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {
        "file": finding.file,
        "line": finding.line,
        "json_path": finding.json_path,
        "span": list(finding.span),
        "kind": finding.kind,
        "detector": finding.detector,
        "session_id": finding.session_id,
        "record_uuid": finding.record_uuid,
        "source": finding.source,
        "fingerprint": finding.fingerprint,
        "in_thinking": finding.in_thinking,
        "length": finding.length,
        # "value": a copy of a value a detector found elsewhere in the session.
        "found_by": "value" if finding.by_value else "detector",
        # In a JSON object key, which no redaction may change: `json_path` names the object.
        "in_key": finding.in_key,
    }
    if finding.json_path is None:
        del item["json_path"]  # Contracts: absent for non-JSON lines
    if preview:
        item["preview"] = masked_preview(finding)
    return item


def audit_to_json(report: AuditReport, *, preview: bool = False) -> dict[str, Any]:
    return {
        "schema": AUDIT_SCHEMA,
        "scrubber_version": __version__,
        "files_scanned": len(report.files),
        "bytes_scanned": report.bytes_scanned,
        "findings": [finding_to_json(f, preview=preview) for f in report.findings],
        "totals": report.totals(),
        "sessions": _sessions_json(report.files),
        "problems": [
            {"file": f.path_shown, "line": line, "problem": problem}
            for f in report.files
            for line, problem in f.problems
        ],
        "errors": [{"file": f.path_shown, "error": f.error} for f in report.files if f.error],
        "warnings": report.warnings,
    }


def _sessions_json(files: Iterable[FileAudit]) -> list[dict[str, Any]]:
    by_session: dict[str, dict[str, Any]] = {}
    for audit in files:
        sid = audit.target.session_id
        if sid is None:
            continue
        entry = by_session.setdefault(
            sid,
            {"session_id": sid, "project": audit.project_shown, "title": None, "occurrences": 0,
             "distinct": set(), "files": 0},
        )  # fmt: skip
        if audit.title and audit.target.role == "transcript":
            entry["title"] = audit.title
        entry["files"] += 1
        entry["occurrences"] += len(audit.findings)
        entry["distinct"].update(f.fingerprint for f in audit.findings)
    return [{**e, "distinct": len(e["distinct"])} for e in by_session.values()]


def indented_json(body: Any, *, ascii_only: bool = False) -> str:
    """`json.dumps(body, indent=2, ensure_ascii=ascii_only)`, byte for byte, by orjson where it
    can: its OPT_INDENT_2 output is the stdlib's with `ensure_ascii=False`. The stdlib writes
    what orjson refuses (a file name with undecodable bytes holds lone surrogates, an integer
    past 64 bits) and escapes non-ASCII text when `ascii_only` (orjson cannot)."""
    if _orjson is not None:
        try:
            text: str = _orjson.dumps(body, option=_orjson.OPT_INDENT_2).decode()
        except _orjson.JSONEncodeError:
            pass
        else:
            if not ascii_only or text.isascii():
                return text
    return json.dumps(body, indent=2, ensure_ascii=ascii_only)


def render_json(report: AuditReport, *, preview: bool = False) -> str:
    return indented_json(audit_to_json(report, preview=preview))


def render_sarif(report: AuditReport, *, url: str | None = None) -> str:
    """SARIF 2.1.0; `url` is the project's (from the package metadata when not given): the
    driver's `informationUri` and, with the README's findings section, each rule's `helpUri`."""
    url = url or project_url()
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for finding in report.findings:
        rule_id = finding.kind
        if rule_id not in rules:
            rules[rule_id] = rule_for(rule_id, url)
        where = f" at {finding.json_path}" if finding.json_path else ""
        src = f" in output of {finding.source}" if finding.source else ""
        results.append(
            {
                "ruleId": rule_id,
                "level": "error",
                "message": {"text": f"{finding.kind} found by {finding.detector}{where}{src}"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": Path(finding.file).resolve().as_uri()},
                            "region": {"startLine": finding.line},
                        }
                    }
                ],
                "partialFingerprints": {"scrubberFingerprint/v1": finding.fingerprint},
                "properties": {
                    "jsonPath": finding.json_path,
                    "span": list(finding.span),
                    "sessionId": finding.session_id,
                    "recordUuid": finding.record_uuid,
                    "inThinking": finding.in_thinking,
                    "foundBy": "value" if finding.by_value else "detector",
                    "inKey": finding.in_key,
                },
            }
        )
    driver: dict[str, Any] = {"name": "scrubber", "version": __version__}
    if url:
        driver["informationUri"] = url
    driver["rules"] = sorted(rules.values(), key=lambda r: r["id"])
    sarif = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
    return indented_json(sarif, ascii_only=True)


def _where(finding: Finding, is_transcript: bool) -> str:
    text = f"line {finding.line}"
    pointer = finding.json_path or ""
    if finding.source:
        is_input = "/input/" in pointer
        text += f", {'input' if is_input else 'output'} of {finding.source}"
    elif finding.in_thinking:
        text += ", thinking"
    elif finding.json_path is None and is_transcript:
        text += " (not JSON: scanned as text)"
    if finding.by_value:
        text += ", found by value"
    if finding.in_key:
        text += ", in a JSON object key (no redaction can change it)"
    return text


def _grouped(findings: list[Finding], is_transcript: bool) -> list[tuple[str, Finding, int]]:
    """One row per place, kind and secret: a tool output is stored twice on the same line."""
    rows: dict[tuple[str, str, str], tuple[str, Finding, int]] = {}
    for finding in findings:
        where = _where(finding, is_transcript)
        key = (where, finding.kind, finding.fingerprint)
        _, first, count = rows.get(key, (where, finding, 0))
        rows[key] = (where, first, count + 1)
    return list(rows.values())


def render_text(
    report: AuditReport,
    *,
    preview: bool = False,
    verbose: bool = False,
    redact_hint: str | None = None,
) -> str:
    """The audit summary for a terminal. `redact_hint`: the command that makes redacted copies
    of what was audited (the caller builds it from the user's own selection; None: no hint)."""
    out: list[str] = []
    totals = report.totals()
    sessions: dict[str | None, list[FileAudit]] = defaultdict(list)
    for audit in report.files:
        sessions[audit.target.session_id].append(audit)
    for sid, audits in sessions.items():
        findings = [f for a in audits for f in a.findings]
        problems = [(a, p) for a in audits for p in a.problems]
        errors = [a for a in audits if a.error]
        if not findings and not problems and not errors and not verbose:
            continue
        main = next((a for a in audits if a.target.role == "transcript"), audits[0])
        if sid is None:
            header = main.path_shown if len(audits) == 1 else "files outside any session"
        else:
            title = main.title or "(untitled)"
            header = f"{title}  (session {sid[:8]}, project {main.project_shown or '?'})"
        kinds = Counter(f.kind for f in findings)
        distinct = len({f.fingerprint for f in findings})
        out.append(header)
        if findings:
            summary = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common())
            out.append(f"  {_secrets(len(findings), distinct)}: {summary}")
        for audit in audits:
            if not audit.findings and not audit.problems and not audit.error:
                continue
            if audit is not main or len(audits) > 1:
                out.append(f"  {audit.target.role}: {audit.path_shown}")
            if audit.error:
                out.append(f"    {audit.error}")
            rows = _grouped(audit.findings, audit.target.is_transcript)
            shown = rows if verbose else rows[:20]
            for where, finding, count in shown:
                extra = f"  {masked_preview(finding)}" if preview else ""
                times = f" ×{count}" if count > 1 else ""
                out.append(f"    {where}: {finding.kind} [{finding.fingerprint[:8]}]{times}{extra}")
            if len(shown) < len(rows):
                out.append(f"    … and {len(rows) - len(shown)} more places (use --verbose)")
            for line, problem in audit.problems:
                out.append(f"    line {line}: {problem} (kept; scanned as text)")
        out.append("")
    sessions_with = sum(
        1 for sid, audits in sessions.items() if sid and any(a.findings for a in audits)
    )
    session_count = sum(1 for sid in sessions if sid)
    where = "" if not totals["occurrences"] else f", in {sessions_with} of them"
    out.append(
        f"Scanned {plural(len(report.files), 'file')} ({human_size(report.bytes_scanned)}) in "
        f"{plural(session_count, 'session')}: "
        f"{_secrets(int(str(totals['occurrences'])), int(str(totals['distinct'])))}{where}."
    )
    if totals["occurrences"]:
        copies = f"Redacted copies: {redact_hint}   " if redact_hint else ""
        out.append(f"{copies}Details: scrub audit --format json")
    # Titles, tool labels, paths and folder names come from transcripts: neutralised here, once,
    # after the audit redacted them (terminal_text.py).
    return terminal_lines(out)


def _secrets(occurrences: int, distinct: int) -> str:
    """`3 secrets (2 distinct)`; `2 secrets` when every one is distinct, `1 secret`."""
    said = plural(occurrences, "secret")
    return said if distinct == occurrences else f"{said} ({distinct} distinct)"
