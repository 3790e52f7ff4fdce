"""`scrub redact` and `scrub verify`: redacted transcripts that stay valid, and their proof."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from scrubber import paths
from scrubber.cli import common
from scrubber.cli.common import PolicyOption, refuse_special_file
from scrubber.detection.known_values import KnownValues
from scrubber.detection.registry import build_scanner
from scrubber.errors import ExitCode, InputError, UsageError
from scrubber.policy.model import ThinkingMode
from scrubber.redaction.lines import FileRedaction
from scrubber.transcript import sessions as session_discovery
from scrubber.usecases.redact import redact_copies
from scrubber.usecases.redact_in_place import redact_files_in_place
from scrubber.usecases.verify import CheckResult, check_redacted

IN_PLACE_NOTICE = (
    "scrub: --in-place rewrites the transcripts themselves. Secrets in tool results, prompts and "
    "replies are replaced; thinking blocks are left as they are (they are signed) and reported. "
    "On newer models a thinking block's signature also covers earlier messages, so resuming a "
    "rewritten session can make the API reject old thinking; the conversation text still loads. "
    "Keep an archive first if in doubt (scrub archive).\n"
)


class ThinkingChoice(StrEnum):
    redact = "redact"
    keep = "keep"


def _plan_config_selection(
    config: Path, session: str | None, all_: bool
) -> tuple[list[Path], list[Path]]:
    """(session files, global side files) under the config dir."""
    discovery = session_discovery.discover(config)
    chosen = discovery.sessions
    if session:
        chosen = (session_discovery.find_session(config, session, discovery=discovery),)
    files: list[Path] = []
    for info in chosen:
        for path in info.bundle_paths():
            files.extend(_files_under(path))
    globals_: list[Path] = []
    if all_:
        globals_ = [
            side.path
            for side in discovery.side_files
            if side.kind.value in ("history", "shell-snapshot", "paste-cache")
        ]
    return files, globals_


def _files_under(path: Path) -> list[Path]:
    if path.is_symlink():
        sys.stderr.write(f"scrub: skipped symbolic link {path} (not followed)\n")
        return []
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    found: list[Path] = []
    for item in sorted(path.rglob("*")):
        if item.is_symlink():
            sys.stderr.write(f"scrub: skipped symbolic link {item} (not followed)\n")
        elif item.is_file():
            found.append(item)
        elif not item.is_dir():
            kind = paths.file_type_name(item.lstat().st_mode)
            sys.stderr.write(f"scrub: skipped {item}: is {kind}, not a regular file\n")
    return found


def _dest_for(file: Path, roots: list[Path], dest: Path) -> Path:
    for root in roots:
        try:
            return dest / file.relative_to(root)
        except ValueError:
            continue
    return dest / file.name


def _refuse_dest_in_projects(dest: Path, config: Path) -> None:
    projects = paths.projects_dir(config).resolve()
    target = dest.resolve()
    if target == projects or projects in target.parents:
        raise UsageError(
            f"{dest} is inside Claude Code's projects/ folder, which its cleanup sweeps",
            "choose another --output (default: $SCRUB_HOME/redacted/)",
        )


def _report(results: list[FileRedaction], as_json: bool) -> None:
    if as_json:
        payload = [
            {
                "source": str(r.source),
                "dest": str(r.dest) if r.dest else None,
                "kind": r.kind.value,
                "lines": r.lines,
                "lines_changed": r.lines_changed,
                "replaced": r.replaced,
                "by_kind": dict(r.by_kind),
                "left_in_thinking": r.left_in_thinking,
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
            typer.echo(f"skipped {r.source}: {r.skipped}")
            continue
        kinds = ", ".join(f"{k} ×{n}" for k, n in r.by_kind.most_common())
        where = f" -> {r.dest}" if r.dest and r.dest != r.source else " (in place)"
        line = f"{r.source}{where}: {r.replaced} secrets replaced in {r.lines_changed} lines"
        typer.echo(line + (f" ({kinds})" if kinds else ""))
        for number, problem in r.problems:
            typer.echo(f"  line {number}: {problem}: kept, redacted as text")
        if r.folded_tail_bytes:
            typer.echo(f"  {r.folded_tail_bytes} bytes appended during the rewrite were kept")
        if r.left_in_thinking:
            typer.echo(
                f"  warning: {r.left_in_thinking} secrets left in thinking text (left_in_thinking)"
            )
    typer.echo(f"{len(results)} files, {total} secrets replaced.")


def register(app: typer.Typer) -> None:
    @app.command("redact")
    def redact_command(
        paths_: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="[PATH]...", help="Transcripts, side files or folders.", show_default=False
            ),
        ] = None,
        output: Annotated[
            Path | None,
            typer.Option(
                "--output",
                "-o",
                help="Where copies go: a file for one input, else a folder shaped like the config "
                "dir (default $SCRUB_HOME/redacted/).",
            ),
        ] = None,
        session: Annotated[
            str | None, typer.Option("--session", help="Redact this session (id, prefix or title).")
        ] = None,
        all_: Annotated[
            bool,
            typer.Option(
                "--all",
                help="Every session; also rewrites history.jsonl, shell-snapshots/ and "
                "paste-cache/ in place (under a lock).",
            ),
        ] = False,
        in_place: Annotated[
            bool,
            typer.Option("--in-place", help="Rewrite the originals (thinking text is left alone)."),
        ] = False,
        thinking: Annotated[
            ThinkingChoice | None,
            typer.Option(
                "--thinking",
                help="Copies: redact (default) or keep thinking text. Only `keep` copies are "
                "promised resumable with the real API.",
            ),
        ] = None,
        check: Annotated[
            Path | None,
            typer.Option("--check", help="Prove a redacted file instead (same as scrub verify)."),
        ] = None,
        original: Annotated[
            Path | None,
            typer.Option("--original", help="With --check: the original, to compare structure."),
        ] = None,
        output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
        policy_path: PolicyOption = None,
    ) -> None:
        """Write redacted copies of transcripts (or rewrite them with --in-place).

        Only string values change: every line stays valid JSON, ids, chain fields, signatures
        and image data stay byte-identical, lines without secrets are copied byte for byte.
        Each secret becomes [REDACTED:<kind>:<fingerprint>]. Copies are 0600 and keep the
        original's mtime. Exit 0 when the output was written.

        Examples:

          scrub redact session.jsonl --output session.redacted.jsonl

          scrub redact --session 3f9a          # -> $SCRUB_HOME/redacted/projects/…

          scrub redact --all --in-place

          scrub redact --check session.redacted.jsonl --original session.jsonl
        """
        if output_format not in ("text", "json"):
            raise UsageError(f"--format {output_format!r}: expected text or json")
        loaded = common.policy(policy_path)
        home = common.scrub_home()
        scanner = build_scanner(loaded.policy, home)
        if check is not None:
            _run_check(check, original, scanner, output_format == "json")
            return
        mode = ThinkingMode(thinking.value) if thinking else loaded.policy.redaction.thinking
        if in_place and thinking is ThinkingChoice.redact:
            raise UsageError("--in-place never edits thinking text (it is signed); drop --thinking")
        config = common.config_dir()
        sources: list[Path]
        global_files: list[Path] = []
        roots: list[Path]
        if paths_:
            if session or all_:
                raise UsageError("give paths, or --session / --all, not both")
            sources = []
            for given in paths_:
                if given.is_symlink():
                    # Named on purpose: refuse (as audit does) rather than skip and exit 0
                    # with nothing written. Links inside named folders are skipped with a note.
                    raise InputError(f"{given}: is a symbolic link; name the file it points to")
                if not given.exists():
                    raise UsageError(f"{given}: no such file or folder")
                refuse_special_file(given, "redacted")
                found = _files_under(given)
                if not found:
                    raise UsageError(
                        f"{given}: holds no regular file to redact; nothing written",
                        "name transcripts or folders that hold them",
                    )
                sources.extend(found)
            roots = [config] + [p if p.is_dir() else p.parent for p in paths_]
        elif session or all_:
            if not config.is_dir():
                raise UsageError(f"no Claude Code config directory at {config}")
            sources, global_files = _plan_config_selection(config, session, all_)
            roots = [config]
        else:
            raise UsageError("nothing to redact", "name files, or use --session ID or --all")
        results: list[FileRedaction] = []
        lock_dir = paths.state_dir(home) / "locks"
        if in_place:
            sys.stderr.write(IN_PLACE_NOTICE)
            # Values found in any file reach their copies in the others of the same session.
            results = redact_files_in_place([*sources, *global_files], scanner, lock_dir)
            _report(results, output_format == "json")
            return
        single_file = paths_ is not None and len(sources) == 1 and paths_[0].is_file()
        dest_root = output or paths.redacted_dir(home)
        if config.is_dir():
            _refuse_dest_in_projects(dest_root, config)
        if single_file and output is not None and not output.is_dir():
            pairs = [(sources[0], output)]
        else:
            # history.jsonl, shell-snapshots/ and paste-cache/ are copied into DEST like the
            # rest: a copy never rewrites an original (only --in-place does).
            pairs = [(s, _dest_for(s, roots, dest_root)) for s in [*sources, *global_files]]
        results = redact_copies(pairs, scanner, thinking=mode, known=KnownValues())
        _report(results, output_format == "json")

    @app.command("verify")
    def verify_command(
        path: Annotated[Path, typer.Argument(help="A redacted transcript.")],
        original: Annotated[
            Path | None, typer.Option("--original", help="The original, to compare structure.")
        ] = None,
        output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
        policy_path: PolicyOption = None,
    ) -> None:
        """Prove a redacted transcript: valid JSONL, same structure, no secrets left.

        Same as `scrub redact --check PATH`. Exit 0 when proven, 1 when secrets or damage were
        found.
        """
        loaded = common.policy(policy_path)
        scanner = build_scanner(loaded.policy, common.scrub_home())
        _run_check(path, original, scanner, output_format == "json")


def _run_check(path: Path, original: Path | None, scanner: object, as_json: bool) -> None:
    for given in (path, original):
        if given is not None:
            refuse_special_file(given, "verified")
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if original is not None and not original.is_file():
        raise UsageError(f"{original}: no such file")
    result: CheckResult = check_redacted(path, scanner, original)  # type: ignore[arg-type]
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
                },
                indent=2,
            )
        )
    else:
        typer.echo(f"{path}: {result.lines} lines")
        typer.echo(
            f"  valid JSONL: {'yes' if not result.invalid_lines else 'NO, lines ' + _few(result.invalid_lines)}"
        )
        if original is not None:
            same = not result.structure_mismatches and result.line_count_mismatch is None
            typer.echo(
                f"  same structure as {original}: {'yes' if same else 'NO, lines ' + _few(result.structure_mismatches)}"
            )
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
        typer.echo("verified" if result.ok else "NOT verified")
    if not result.ok:
        raise typer.Exit(int(ExitCode.FINDINGS))


def _few(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    return shown + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
