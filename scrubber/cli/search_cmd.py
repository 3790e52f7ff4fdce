"""`scrub search`: parse, call `usecases.search.run_search`, render the hits (text or JSON)."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer import _click as click
from typer._click.exceptions import BadOptionUsage, NoSuchOption
from typer._click.exceptions import UsageError as ClickUsageError

from scrubber import paths
from scrubber.cli import common, killable
from scrubber.cli.archive_common import archives_root, read_identities, warn
from scrubber.cli.command import ScrubCommand
from scrubber.cli.common import PolicyOption, plural
from scrubber.cli.terminal_text import terminal_safe
from scrubber.detection.registry import build_scanner, prefilter_engine
from scrubber.errors import UsageError
from scrubber.usecases.durations import DURATION_HELP, parse_moment
from scrubber.usecases.search import PER_SESSION, SearchHit, SearchRequest, SearchResult, run_search
from scrubber.usecases.search_pattern import compile_pattern
from scrubber.usecases.search_places import SearchScope
from scrubber.usecases.search_sources import refuse_unknown_project

_SHOWN_PROJECTS = 5


class ScopeChoice(StrEnum):
    prompts = "prompts"
    answers = "answers"
    tools = "tools"
    all = "all"


class FormatChoice(StrEnum):
    text = "text"
    json = "json"


class SearchCommand(ScrubCommand):
    """Click's own parse errors repeat the word they stumbled on: here that word is most
    likely the pattern (`scrub search -----BEGIN`, `scrub search two words`), which may be the
    very secret the user looks for. These errors say what went wrong without it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except (NoSuchOption, BadOptionUsage):
            raise UsageError(
                "scrub search was given an option it does not know (not repeated here: it "
                "may be your pattern)",
                hint="a pattern that starts with '-' goes after --: scrub search -- PATTERN "
                "(scrub search -h lists the options)",
            ) from None
        except ClickUsageError as error:
            if "unexpected extra argument" not in error.message:
                raise
            raise UsageError(
                "scrub search takes one PATTERN, and was given more (not repeated here)",
                hint="quote a phrase that holds spaces: scrub search 'two words'",
            ) from None


def register(app: typer.Typer) -> None:
    app.command("search", cls=SearchCommand)(search_command)


PatternArgument = Annotated[
    str,
    typer.Argument(
        metavar="PATTERN",
        help="The text to find (a regex with --regex); after -- when it starts with '-'.",
    ),
]
RegexOption = Annotated[
    bool, typer.Option("--regex", help="PATTERN is a Python regular expression.")
]
WhereOption = Annotated[
    ScopeChoice,
    typer.Option("--in", help="Search prompts, answers (and thinking), tools, or all."),
]
ProjectOption = Annotated[
    str | None,
    typer.Option(
        "--project", metavar="P", help="Only sessions whose project folder holds P, or cwd P."
    ),
]
SinceOption = Annotated[
    str | None, typer.Option("--since", metavar="D", help=f"Only since then: {DURATION_HELP}.")
]
ArchivesOption = Annotated[
    bool,
    typer.Option(
        "--archives", help="Also search archived sessions (decrypted in memory, with -i)."
    ),
]
IdentityOption = Annotated[
    list[Path] | None,
    typer.Option("--identity", "-i", metavar="KEY", help="Identity file (repeatable)."),
]
PassphraseFileOption = Annotated[
    Path | None, typer.Option("--passphrase-file", help="Passphrase file, for --archives.")
]
DirectoryOption = Annotated[
    Path | None, typer.Option("--dir", help="Archive folder (default: the policy's).")
]
TrashOption = Annotated[bool, typer.Option("--trash", help="Also search scrubber's trash.")]
LimitOption = Annotated[
    int, typer.Option("--limit", metavar="N", help="Show at most N hits, newest first (0: all).")
]
OutputFormatOption = Annotated[FormatChoice, typer.Option("--format", help="text or json.")]


def search_command(
    pattern: PatternArgument,
    regex: RegexOption = False,
    where: WhereOption = ScopeChoice.all,
    project: ProjectOption = None,
    since: SinceOption = None,
    archives: ArchivesOption = False,
    identity: IdentityOption = None,
    passphrase_file: PassphraseFileOption = None,
    directory: DirectoryOption = None,
    trash: TrashOption = False,
    limit: LimitOption = 50,
    output_format: OutputFormatOption = FormatChoice.text,
    policy_path: PolicyOption = None,
) -> None:
    """Find a phrase in every session, without showing a secret.

    Searches the decoded text (quotes and line breaks as you typed them, which grep on the
    JSON files misses) of every session in the config directory, and with --trash and
    --archives those scrubber keeps. Each hit names the session, its title, project and date,
    where the text is (prompt, answer, thinking, input or output of which tool call), a short
    context in which every secret is replaced by its placeholder, and how to resume it.
    Newest first; case-sensitive (with --regex, (?i) ignores case). The pattern is never
    printed. Archives the key does not open are listed as skipped. A pattern that starts
    with '-' goes after `--`. A regex that can backtrack for ever (a repeat inside a repeat,
    like (a+)+, or repeated alternatives that match alike, like (a|ab)*) is refused: write
    the inner repeat possessive (a++) or the group atomic ((?>...)). Ctrl-C stops a search
    at once (exit 130).

    Examples:

      scrub search 'connection refused'

      scrub search 'say "hello"' --in prompts --since 7d

      scrub search --regex 'deploy(ed|ing) to (staging|prod)' --project shop-api

      scrub search 'migration' --archives -i ~/scrub-key.txt --trash --format json

      scrub search -- '-----BEGIN'
    """
    _check_options(limit, archives, bool(identity or passphrase_file), directory, trash)
    compiled = compile_pattern(pattern, regex=regex)
    moment = parse_moment(since, "--since", datetime.now(UTC)) if since else None
    identities = (
        read_identities(identity, passphrase_file, False, required=False) if archives else []
    )
    if archives and not identities:
        warn("--archives without a key: only archives kept in clear can be read")
    loaded = common.policy(policy_path)
    home = common.scrub_home()
    scanner = build_scanner(loaded.policy, home)
    request = SearchRequest(
        compiled,
        common.config_dir(),
        home,
        scope=SearchScope(where.value),
        project=project,
        since=moment,
        trash=trash,
        archives=archives_root(directory, policy_path) if archives else None,
        identities=identities,
        key_hint=str(identity[0]) if identity else "KEY",
    )
    engine, env = prefilter_engine(common.env()), common.env()
    # In a child that Ctrl-C kills at once, with its workers, even in the middle of a match.
    result = killable.run_killable(lambda: run_search(request, scanner, engine, env=env))
    if project is not None and result.sessions == 0:
        refuse_unknown_project(
            project,
            request.config_dir,
            scanner,
            home=home,
            since_given=moment is not None,
            listed=_SHOWN_PROJECTS,
        )
    _render(result, limit, output_format)


def _check_options(
    limit: int, archives: bool, keys: bool, directory: Path | None, trash: bool
) -> None:
    if not (archives or trash):
        # A misspelt CLAUDE_CONFIG_DIR is an error, as for every command that reads sessions:
        # "0 hits" would read as "not there". The trash and archives can be searched without.
        paths.require_config_dir(common.config_dir())
    if limit < 0:
        raise UsageError("--limit must be 0 (all) or more")
    if (keys or directory) and not archives:
        raise UsageError(
            "-i, --passphrase-file and --dir are for --archives", hint="add --archives"
        )
    if directory is not None and not directory.is_dir():
        raise UsageError(
            f"--dir {directory}: no such folder",
            hint="name the folder that holds the archives (scrub archives list shows them)",
        )


def _render(result: SearchResult, limit: int, output_format: FormatChoice) -> None:
    shown = result.hits if limit == 0 else result.hits[:limit]
    try:
        if output_format is FormatChoice.json:
            typer.echo(json.dumps(_as_json(result, shown), indent=2, ensure_ascii=False))
        else:
            _print_text(result, shown)
    except BrokenPipeError:
        # The reader stopped early (`scrub search x | head -1`): nothing more can reach it, and
        # that is no error. Point stdout at /dev/null so the exit-time flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _hit_json(hit: SearchHit) -> dict[str, Any]:
    return {
        "session_id": hit.session_id,
        "title": hit.title,
        "project": hit.project,
        "origin": hit.origin.value,
        "timestamp": _iso(hit.timestamp),
        "transcript": hit.transcript,
        "line": hit.line,
        "where": hit.where,
        "context": hit.context,
        "source": hit.source,
        "resume": list(hit.resume),
    }


def _as_json(result: SearchResult, shown: list[SearchHit]) -> dict[str, Any]:
    return {
        "schema": "scrubber.search/1",
        "hits": [_hit_json(hit) for hit in shown],
        "total_hits": len(result.hits),
        "hits_not_shown": len(result.hits) - len(shown),
        "more_lines_not_searched": result.more_lines,
        "sessions_searched": result.sessions,
        "sessions_matched": result.sessions_matched,
        "bytes_read": result.bytes_read,
        "skipped": [{"where": s.where, "reason": s.reason} for s in result.skipped],
    }


def _when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if moment else "(no date)"


def _print_text(result: SearchResult, shown: list[SearchHit]) -> None:
    # Titles, folder names, where-labels and contexts come from transcripts: each line is
    # neutralised here, after the search redacted it (terminal_text.py).
    def say(line: str, err: bool = False) -> None:
        typer.echo(terminal_safe(line), err=err)

    previous: str | None = None
    for hit in shown:
        if hit.session_id != previous:
            if previous is not None:
                say("")
            origin = "" if hit.origin.value == "live" else f" [{hit.origin.value}]"
            title = f" {hit.title!r}" if hit.title else ""
            say(f"{hit.session_id}{title} ({hit.project}){origin}")
            say("  resume: " + " && ".join(hit.resume))
            previous = hit.session_id
        say(f"  {_when(hit.timestamp)}  {hit.where}  ({hit.transcript}:{hit.line})")
        say(f"    {hit.context}")
    for skipped in result.skipped:
        say(f"skipped {skipped.where}: {skipped.reason}", err=True)
    summary = (
        f"{plural(len(result.hits), 'hit')} in "
        f"{plural(result.sessions_matched, 'session')} ({result.sessions} searched)"
    )
    if len(shown) < len(result.hits):
        summary += f"; {len(result.hits) - len(shown)} not shown (--limit 0 shows all)"
    if result.more_lines:
        summary += (
            f"; {plural(result.more_lines, 'more line')} of those sessions hold the text "
            f"(the first {PER_SESSION} hits of a session are shown)"
        )
    typer.echo(("\n" if shown else "") + summary + ".")
