"""`scrub redact` and `scrub verify`: redacted transcripts that stay valid, and their proof."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber import paths
from scrubber.cli import common
from scrubber.cli.common import PolicyOption, plural
from scrubber.cli.terminal_text import terminal_safe
from scrubber.detection.registry import build_scanner
from scrubber.detection.scan import SecretScanner
from scrubber.errors import ExitCode, UsageError
from scrubber.policy.model import ThinkingMode
from scrubber.redaction.lines import FileRedaction
from scrubber.usecases.redact import run_redact
from scrubber.usecases.redact_targets import RedactRequest
from scrubber.usecases.shown_names import FolderNames
from scrubber.usecases.verify import CheckResult, check_redacted


class ThinkingChoice(StrEnum):
    redact = "redact"
    keep = "keep"


PathsArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="[PATH]...", help="Transcripts, side files or folders.", show_default=False
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Where copies go: a file for one input, else a folder shaped like the config "
        "dir (default $SCRUB_HOME/redacted/).",
    ),
]
SessionOption = Annotated[
    list[str] | None,
    typer.Option("--session", help="Redact this session (id, prefix or title); repeatable."),
]
AllOption = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Every session, and history.jsonl, shell-snapshots/ and paste-cache/: copied "
        "into the destination like the rest (only --in-place rewrites originals).",
    ),
]
InPlaceOption = Annotated[
    bool,
    typer.Option("--in-place", help="Rewrite the originals (thinking text is left alone)."),
]
ThinkingOption = Annotated[
    ThinkingChoice | None,
    typer.Option(
        "--thinking",
        help="Copies: redact (default) or keep thinking text. Only `keep` copies are "
        "promised resumable with the real API.",
    ),
]
NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Redact everything again, even what is already current (the redaction cache in "
        "$SCRUB_HOME/state/redact-cache/ is then written afresh).",
    ),
]
CheckOption = Annotated[
    Path | None,
    typer.Option("--check", help="Prove a redacted file instead (same as scrub verify)."),
]
OriginalOption = Annotated[
    Path | None,
    typer.Option("--original", help="With --check: the original, to compare structure."),
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace files already at --output, for files named one by one (to a FILE, or "
        "into a DIR): each copy is written beside its place, then moved over it. Without it, "
        "a file there that is not empty is left alone. (Sessions' copies, --session/--all, "
        "are scrubber's own and always brought up to date.)",
    ),
]
FormatOption = Annotated[str, typer.Option("--format", help="text or json.")]
VerifiedArgument = Annotated[Path, typer.Argument(metavar="PATH", help="A redacted transcript.")]
VerifyOriginalOption = Annotated[
    Path | None, typer.Option("--original", help="The original, to compare structure.")
]


def register(app: typer.Typer) -> None:
    app.command("redact")(redact_command)
    app.command("verify")(verify_command)


def redact_command(
    paths_: PathsArgument = None,
    output: OutputOption = None,
    session: SessionOption = None,
    all_: AllOption = False,
    in_place: InPlaceOption = False,
    thinking: ThinkingOption = None,
    no_cache: NoCacheOption = False,
    check: CheckOption = None,
    original: OriginalOption = None,
    force: ForceOption = False,
    output_format: FormatOption = "text",
    policy_path: PolicyOption = None,
) -> None:
    """Write redacted copies of transcripts (or redact --in-place).

    Only string values change: every line stays valid JSON, ids, chain fields, signatures
    and image data stay byte-identical, lines without secrets are copied byte for byte.
    Each secret becomes [REDACTED:<kind>:<fingerprint>]. Copies are 0600 and keep the
    original's mtime. Exit 0 when the output was written.

    A session none of whose files changed since the last run, and whose copies are still
    the ones written then, is not redacted again (--no-cache redoes everything); the
    output is the same either way.

    Examples:

      scrub redact session.jsonl --output session.redacted.jsonl

      scrub redact --session 3f9a          # -> $SCRUB_HOME/redacted/projects/…

      scrub redact --all                   # again: only what changed is redone

      scrub redact --all --no-cache        # every copy written again

      scrub redact --all --in-place

      scrub redact --check session.redacted.jsonl --original session.jsonl
    """
    if output_format not in ("text", "json"):
        raise UsageError(f"--format {output_format!r}: expected text or json")
    loaded = common.policy(policy_path)
    if check is None and not paths_ and (session or all_):
        # Before the scanner makes its key: $SCRUB_HOME defaults to a folder inside it.
        paths.require_config_dir(
            common.config_dir(), "set CLAUDE_CONFIG_DIR, or name the files to redact"
        )
    home = common.scrub_home()
    scanner = build_scanner(loaded.policy, home)
    if check is not None:
        _run_check(check, original, scanner, output_format == "json")
        return
    mode = ThinkingMode(thinking.value) if thinking else loaded.policy.redaction.thinking
    if in_place and output is not None:
        # Said rather than ignored: a user who gives both expects a copy, and would get the
        # originals rewritten without one.
        raise UsageError(
            "--in-place rewrites the originals and writes no copy: --output has no place here",
            hint="drop --in-place to write a redacted copy at --output",
        )
    if in_place and thinking is ThinkingChoice.redact:
        raise UsageError("--in-place never edits thinking text (it is signed); drop --thinking")
    request = RedactRequest(
        home,
        common.config_dir(),
        paths=tuple(paths_ or ()),
        sessions=tuple(session or ()),
        all_sessions=all_,
        in_place=in_place,
        output=output,
        use_cache=not no_cache,
        replace_output=force,
    )
    folders = FolderNames(loaded.policy, home, common.env(), scanner)
    results = run_redact(request, scanner, mode, note=_note, policy=loaded.policy, folders=folders)
    _report(results, output_format == "json", folders.text)


def verify_command(
    path: VerifiedArgument,
    original: VerifyOriginalOption = None,
    output_format: FormatOption = "text",
    policy_path: PolicyOption = None,
) -> None:
    """Prove a redacted transcript: valid JSONL, no secrets left.

    Also checks that its structure is the original's (with --original).

    Same as `scrub redact --check PATH`. Exit 0 when proven, 1 when secrets or damage were
    found.

    Examples:

      scrub verify redacted/3f9a2c1e.jsonl

      scrub verify redacted/3f9a2c1e.jsonl --original 3f9a2c1e.jsonl --format json
    """
    loaded = common.policy(policy_path)
    scanner = build_scanner(loaded.policy, common.scrub_home())
    _run_check(path, original, scanner, output_format == "json")


def _note(message: str) -> None:
    sys.stderr.write(f"scrub: {terminal_safe(message)}\n")


def _report(results: list[FileRedaction], as_json: bool, shown: Callable[[str], str]) -> None:
    """The results, each path with its project folder as every report shows it (`shown`)."""
    if as_json:
        payload = [
            {
                "source": shown(str(r.source)),
                "dest": shown(str(r.dest)) if r.dest else None,
                "kind": r.kind.value,
                "lines": r.lines,
                "lines_changed": r.lines_changed,
                "replaced": r.replaced,
                "by_kind": dict(r.by_kind),
                "left_in_thinking": r.left_in_thinking,
                "left_in_keys": r.left_in_keys,
                "problems": [{"line": n, "problem": p} for n, p in r.problems],
                "folded_tail_bytes": r.folded_tail_bytes,
                "skipped": r.skipped,
            }
            for r in results
        ]
        typer.echo(json.dumps({"schema": "scrubber.redact/1", "files": payload}, indent=2))
        return
    total = 0
    for r in results:
        total += r.replaced
        if r.skipped:
            typer.echo(terminal_safe(shown(f"skipped {r.source}: {r.skipped}")))
            continue
        kinds = ", ".join(f"{k} ×{n}" for k, n in r.by_kind.most_common())
        where = f" -> {shown(str(r.dest))}" if r.dest and r.dest != r.source else " (in place)"
        line = (
            f"{shown(str(r.source))}{where}: {plural(r.replaced, 'secret')} replaced in "
            f"{plural(r.lines_changed, 'line')}"
        )
        typer.echo(terminal_safe(line + (f" ({kinds})" if kinds else "")))
        for number, problem in r.problems:
            typer.echo(f"  line {number}: {problem}: kept, redacted as text")
        if r.folded_tail_bytes:
            typer.echo(f"  {r.folded_tail_bytes} bytes appended during the rewrite were kept")
        if r.left_in_thinking:
            typer.echo(
                f"  warning: {plural(r.left_in_thinking, 'secret')} left in thinking text "
                "(left_in_thinking)"
            )
        if r.left_in_keys:
            typer.echo(
                f"  warning: {plural(r.left_in_keys, 'secret')} left in JSON object keys, which "
                "no redaction can change (left_in_keys): do not share this copy"
            )
    typer.echo(f"{plural(len(results), 'file')}, {plural(total, 'secret')} replaced.")


def _run_check(path: Path, original: Path | None, scanner: SecretScanner, as_json: bool) -> None:
    for given in (path, original):
        if given is not None:
            paths.refuse_special_file(given, "verified")
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if original is not None and not original.is_file():
        raise UsageError(f"{original}: no such file")
    result = check_redacted(path, scanner, original)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "schema": "scrubber.verify/1",
                    "file": str(path),
                    "original": str(original) if original else None,
                    "ok": result.ok,
                    "lines": result.lines,
                    "invalid_lines": result.invalid_lines,
                    "structure_mismatches": result.structure_mismatches,
                    "line_count_mismatch": result.line_count_mismatch,
                    "findings": result.findings,
                    "finding_lines": result.finding_lines,
                    "left_in_thinking": result.findings_in_thinking,
                    "secrets_in_keys": result.findings_in_keys,
                    "key_lines": result.key_lines,
                },
                indent=2,
            )
        )
    else:
        _print_check(path, original, result)
    if not result.ok:
        raise typer.Exit(int(ExitCode.FINDINGS))


def _print_check(path: Path, original: Path | None, result: CheckResult) -> None:
    typer.echo(terminal_safe(f"{path}: {result.lines} lines"))
    typer.echo(
        f"  valid JSONL: {'yes' if not result.invalid_lines else 'NO, lines ' + _few(result.invalid_lines)}"
    )
    if original is not None:
        typer.echo(terminal_safe(f"  same structure as {original}: {_structure_verdict(result)}"))
    else:
        typer.echo("  structure: not compared (give --original)")
    typer.echo(
        f"  secrets left: {result.findings}"
        + (f" (lines {_few(result.finding_lines)})" if result.findings else "")
    )
    if result.findings_in_thinking:
        typer.echo(
            f"  secrets left in thinking text: {result.findings_in_thinking} (left_in_thinking)"
        )
    if result.findings_in_keys:
        typer.echo(
            f"  secrets in JSON object keys: {result.findings_in_keys} (lines "
            f"{_few(result.key_lines)}): no redaction can take them out, Claude Code's format "
            "keeps keys as they are; do not share this file"
        )
    typer.echo("verified" if result.ok else "NOT verified")


def _structure_verdict(result: CheckResult) -> str:
    """`yes`, or what differs: the lines whose structure changed, and a line count that does
    not match (then there may be no such line to name)."""
    problems = []
    if result.structure_mismatches:
        problems.append("lines " + _few(result.structure_mismatches))
    if result.line_count_mismatch is not None:
        expected, found = result.line_count_mismatch
        problems.append(f"the original has {expected} lines, this file {found}")
    return "NO, " + "; ".join(problems) if problems else "yes"


def _few(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    return shown + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
