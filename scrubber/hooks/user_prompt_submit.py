"""Claude Code UserPromptSubmit hook: a prompt that holds a secret is blocked before it is sent.

Printing `{"decision": "block", "reason": …}` stops the prompt (no request reaches the API). The
reason names the kinds found, never a value, and says how to pass a secret safely.

Claude Code (2.1.332) still writes the prompt into the transcript: a `queue-operation` record
(written before the hook runs) and a `system` informational record ("…blocked by hook…
Original prompt: <prompt>", written after it). So the hook also starts a detached scrub of the
transcript (`--scrub-transcript`, prompt_scrub.py) that waits for that record and masks the
secrets in those records in place. The value is never handed to the child: it finds them again
with the same scanner.

Exits 0 on any input; never prints or logs a value.
"""

from __future__ import annotations

import os
import sys

from scrubber.detection.live_prescan import Prescan
from scrubber.hooks.live_common import MAX_INPUT_BYTES, read_compiled
from scrubber.hooks.status_state import loads, scrub_home

# Everything else (the settings' model, the scanner, the transcript scrub) is imported when the
# prescan could not rule a secret out, or the full path runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

    from scrubber.hooks.live_common import LiveSettings

HOOK = "user-prompt-submit"
EVENT = "UserPromptSubmit"
ERROR_REASON = (
    "scrubber could not check this prompt for secrets and live.on_error is block: see "
    "$SCRUB_HOME/log/live.log, or set live.on_error: pass in the policy"
)


def _fast(data: bytes, env: Mapping[str, str]) -> bool:
    """True when the compiled settings and the prescan show the prompt holds no secret (the
    call is answered with nothing); False: the full path decides, and logs."""
    live = read_compiled(scrub_home(env))
    if live is None:
        return False
    if live.get("user_prompt_submit") not in ("mask", "warn"):
        return False
    prescan = Prescan.from_json(live.get("prescan"))
    payload = loads(data) if data.strip() else None
    if prescan is None or not isinstance(payload, dict):
        return False
    prompt = payload.get("prompt")
    event = payload.get("hook_event_name", EVENT)
    return event == EVENT and isinstance(prompt, str) and not prescan.candidates(prompt)


def run(payload: Mapping[str, Any], env: Mapping[str, str], settings: LiveSettings) -> str | None:
    """The block reason, or None to let the prompt through. Raises Ignored."""
    from scrubber import paths
    from scrubber.hooks import live_common
    from scrubber.hooks.live_common import Ignored
    from scrubber.policy.model import LiveMode

    home = paths.scrub_home(env)
    mode = settings.live.user_prompt_submit
    if mode is LiveMode.OFF:
        raise Ignored("live.user_prompt_submit is off")
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise Ignored("no prompt")
    if not settings.may_hold_secret(prompt):
        return None
    from scrubber.usecases.live import block_reason, prompt_secrets

    found = prompt_secrets(prompt, live_common.build_scanner(home, settings))
    if not found:
        return None
    session = payload.get("session_id")
    for item in found:
        live_common.log_masked(
            home,
            {
                "component": "live",
                "event": "blocked" if mode is LiveMode.MASK else "seen",
                "hook": HOOK,
                "session_id": session if isinstance(session, str) else None,
                "kind": item.kind,
                "detector": item.detector,
                "fingerprint": item.fingerprint,
            },
        )
    if mode is not LiveMode.MASK:
        live_common.log(home, HOOK, f"{len(found)} secret(s) in a prompt let through (warn)")
        return None
    transcript = payload.get("transcript_path")
    started = "no transcript_path to scrub"
    if isinstance(transcript, str):
        from scrubber.hooks.prompt_scrub import start_scrub

        started = start_scrub(transcript, env)
    live_common.log(home, HOOK, f"prompt blocked: {len(found)} secret(s); {started}")
    return block_reason(found)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Entry point of the shim and of `scrub hook user-prompt-submit`: always returns 0.
    `--scrub-transcript PATH`: the detached half (see the module docstring)."""
    environment = os.environ if env is None else env
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--scrub-transcript":
        from pathlib import Path

        from scrubber.hooks.prompt_scrub import scrub_main

        return scrub_main(Path(args[1]), environment)
    data: bytes | None = None
    try:
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = b"" if stream.isatty() else stream.read(MAX_INPUT_BYTES + 1)
        if len(data) <= MAX_INPUT_BYTES and _fast(data, environment):
            return 0
    except Exception:  # noqa: S110 - the full path decides, and logs
        pass
    return _full(data, stdout, environment)


def _full(data: bytes | None, stdout: IO[str] | None, env: Mapping[str, str]) -> int:
    from scrubber import paths
    from scrubber.hooks import live_common
    from scrubber.hooks.live_common import Ignored
    from scrubber.policy.model import LiveOnError

    home = paths.scrub_home(env)
    settings = live_common.load_live_settings(home)
    environment = env
    try:
        if data is None:
            raise Ignored("stdin could not be read")
        live_common.check_size(data)
        payload = live_common.read_payload(data, EVENT)
        reason = run(payload, environment, settings)
        if reason is not None:
            live_common.emit({"decision": "block", "reason": reason}, stdout)
    except Ignored as why:
        live_common.log(home, HOOK, f"passed through: {why}")
    except Exception as error:  # a hook must never fail Claude Code
        blocking = settings.live.on_error is LiveOnError.BLOCK
        live_common.log(
            home,
            HOOK,
            f"{live_common.describe_error(error)}; prompt "
            + ("blocked (live.on_error: block)" if blocking else "let through"),
        )
        if blocking:
            live_common.emit({"decision": "block", "reason": ERROR_REASON}, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
