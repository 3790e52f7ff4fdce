"""The proof of a redaction (`scrub verify`, `scrub redact --check`): a redacted transcript is
valid JSONL, has its original's structure, and holds no finding (thinking text counted apart),
not even in a JSON object key (which no redaction may change: detection/key_scan.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scrubber.detection.key_scan import secrets_in_keys
from scrubber.detection.scan import SecretScanner
from scrubber.redaction.structure import same_structure
from scrubber.transcript.jsonl import IO_BUFFER, LineProblem, iter_raw_lines, parse_line


@dataclass(slots=True)
class CheckResult:
    path: Path
    lines: int = 0
    invalid_lines: list[int] = field(default_factory=list)
    structure_mismatches: list[int] = field(default_factory=list)
    line_count_mismatch: tuple[int, int] | None = None
    findings: int = 0
    findings_in_thinking: int = 0
    finding_lines: list[int] = field(default_factory=list)
    findings_in_keys: int = 0  # in object keys: no redaction can take them out
    key_lines: list[int] = field(default_factory=list)
    compared_with: Path | None = None

    @property
    def ok(self) -> bool:
        return (
            not self.invalid_lines
            and not self.structure_mismatches
            and self.line_count_mismatch is None
            and self.findings == 0
            and self.findings_in_keys == 0
        )


def check_redacted(path: Path, scanner: SecretScanner, original: Path | None) -> CheckResult:
    """Prove a redacted transcript: valid JSONL, the original's structure, no findings left."""
    result = CheckResult(path, compared_with=original)
    orig_stream = original.open("rb", buffering=IO_BUFFER) if original is not None else None
    try:
        orig_lines = iter_raw_lines(orig_stream) if orig_stream is not None else None
        file_scan = scanner.new_file_scan()
        with path.open("rb", buffering=IO_BUFFER) as stream:
            for raw in iter_raw_lines(stream):
                result.lines += 1
                line = parse_line(raw)
                torn_last = line.problem is LineProblem.TORN
                if line.problem not in (None, LineProblem.BLANK) and not torn_last:
                    result.invalid_lines.append(raw.number)
                if orig_lines is not None:
                    orig_raw = next(orig_lines, None)
                    if orig_raw is None or (
                        line.record is not None
                        and not same_structure(parse_line(orig_raw).value, line.value)
                    ):
                        result.structure_mismatches.append(raw.number)
                woken = scanner.index.line_detectors(raw.data.replace(b"\\/", b"/"))
                scan = file_scan.scan_line(line, woken)
                if woken and line.record is not None:
                    in_keys = sum(n for _, n in secrets_in_keys(line.record, scanner))
                    if in_keys:
                        result.findings_in_keys += in_keys
                        result.key_lines.append(raw.number)
                for leaf in scan.leaves:
                    if leaf.in_thinking:
                        result.findings_in_thinking += len(leaf.found)
                    else:
                        result.findings += len(leaf.found)
                        result.finding_lines.append(raw.number)
        if orig_lines is not None:
            remaining = sum(1 for _ in orig_lines)
            if remaining:
                result.line_count_mismatch = (result.lines + remaining, result.lines)
    finally:
        if orig_stream is not None:
            orig_stream.close()
    return result
