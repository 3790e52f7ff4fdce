"""`scrub hook session-end`, `scrub hook status-line` and `scrub worker`.

The hook commands are the same code as the launchers `scrub install` writes and the plugin's
shims, reachable from the `scrub` command for people who register hooks by hand. They are slower
to start (typer), so the installer registers the launchers instead.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from scrubber.cli import common
from scrubber.errors import BusyError
from scrubber.hooks import post_tool_use, session_end, status_line, user_prompt_submit, worker


def register(app: typer.Typer) -> None:
    hook = typer.Typer(
        name="hook",
        help="Claude Code hook entry points: the hook's JSON on stdin; always exit 0.",
        no_args_is_help=True,
        hidden=True,
    )

    @hook.command("session-end")
    def session_end_command() -> None:
        """SessionEnd: queue the session for the worker and start it, detached. Prints nothing;
        logs to $SCRUB_HOME/log/hook.log."""
        session_end.main([], worker_python=sys.executable)

    @hook.command("status-line")
    def status_line_command(
        wrap: Annotated[
            str | None,
            typer.Option("--wrap", help="The previous status-line command: run first, same stdin."),
        ] = None,
        inline: Annotated[
            bool,
            typer.Option("--inline", help="Scan in this process (bounded) instead of detached."),
        ] = False,
        budget_ms: Annotated[
            int, typer.Option("--budget-ms", help="Scanning budget with --inline, in ms.")
        ] = 30,
    ) -> None:
        """Status line: `secrets: N (kinds)` in red when a secret entered the transcript."""
        args = ["--budget-ms", str(budget_ms)]
        if wrap:
            args += ["--wrap", wrap]
        if inline:
            args.append("--inline")
        status_line.main(args)

    @hook.command("post-tool-use")
    def post_tool_use_command() -> None:
        """PostToolUse: print the tool output with its secrets replaced by placeholders
        (updatedToolOutput), or nothing. Logs to $SCRUB_HOME/log/live.log."""
        post_tool_use.main([])

    @hook.command("user-prompt-submit")
    def user_prompt_submit_command() -> None:
        """UserPromptSubmit: block a prompt that holds a secret (names its kind, never the
        value). Logs to $SCRUB_HOME/log/live.log."""
        user_prompt_submit.main([])

    app.add_typer(hook)

    @app.command("worker", hidden=True)
    def worker_command(
        once: Annotated[
            bool, typer.Option("--once", help="One pass over ready jobs; do not wait for others.")
        ] = False,
        retry_failed: Annotated[
            bool,
            typer.Option(
                "--retry-failed",
                help="Queue the jobs in spool/failed/ again (after fixing the configuration).",
            ),
        ] = False,
    ) -> None:
        """Process the sessions the SessionEnd hook queued (the hook starts it).

        Archives, redacts or audits each ended session as the policy's on_session_end says,
        logging every step to $SCRUB_HOME/log/activity.jsonl. Exit 4 when another worker is
        running (it will process the queue).
        """
        report = worker.run_worker(common.env(), once=once, retry_failed=retry_failed)
        if report.busy:
            raise BusyError(
                "another scrub worker is running", "it processes the whole queue; nothing to do"
            )
        done = sum(1 for _, outcome in report.outcomes if outcome is worker.JobOutcome.DONE)
        failed = sum(1 for _, o in report.outcomes if o is worker.JobOutcome.FAILED)
        typer.echo(
            f"worker: {common.plural(done, 'session')} done, {failed} failed, {report.left} still queued"
            + (" (see `scrub doctor`)" if failed or report.left else "")
        )
