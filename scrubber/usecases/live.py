"""What the live hooks do: mask the secrets in a tool's output before the model sees it
(PostToolUse), and find the secrets in a prompt before it is sent (UserPromptSubmit).

Pure: the hooks (scrubber/hooks/post_tool_use.py, user_prompt_submit.py) read stdin, the
settings and the side files, and print. Light: this module imports the detection core and the
placeholder format only (no detect_secrets, yaml, typer, cryptography), so the hooks start as
fast as the status line.

A replacement must have the tool output's exact shape (Claude Code drops one that differs):
only string leaves change, every key, number, list length and other string stays as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scrubber.detection.live_prescan import OPAQUE_KEYS, TEXT_TOOLS, opaque_member, scans_tool
from scrubber.detection.placeholder import SHORT_FINGERPRINT_LENGTH

# The scanner is passed in (TextScanner, or the hooks' LiveScanner): importing scan.py here
# would cost every hook call the whole rule catalog.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from scrubber.detection.finding import Hit

__all__ = ["TEXT_TOOLS", "scans_tool"]


class FoundLike(Protocol):
    """What a scan reports for one secret (scan.FoundSecret, live_scan.LiveFound)."""

    @property
    def hit(self) -> Hit: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def placeholder(self) -> str: ...


class TextScanner(Protocol):
    def scan_text(self, text: str) -> Sequence[FoundLike]: ...


WITHHELD = "[scrubber: output withheld: the live check failed and live.on_error is block]"


@dataclass(frozen=True, slots=True)
class Masked:
    """One secret the live hook replaced: its kind, detector and short keyed fingerprint."""

    kind: str
    detector: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class MaskResult:
    value: Any  # the same shape as the input, secrets replaced by placeholders
    masked: tuple[Masked, ...]

    @property
    def changed(self) -> bool:
        return bool(self.masked)


def _masked(found: FoundLike) -> Masked:
    return Masked(found.hit.kind, found.hit.detector, found.fingerprint[:SHORT_FINGERPRINT_LENGTH])


def mask_text(text: str, scanner: TextScanner) -> tuple[str, tuple[Masked, ...]]:
    """`text` with every secret the scanner finds replaced by its placeholder."""
    found = scanner.scan_text(text)
    if not found:
        return text, ()
    for item in sorted(found, key=lambda f: f.hit.start, reverse=True):
        text = text[: item.hit.start] + item.placeholder + text[item.hit.end :]
    return text, tuple(_masked(f) for f in found)


def _walk(value: Any, scanner: TextScanner, found: list[Masked], opaque: bool) -> Any:
    if isinstance(value, str):
        if opaque:
            return value
        new, masked = mask_text(value, scanner)
        found.extend(masked)
        return new
    if isinstance(value, list):
        return [_walk(item, scanner, found, opaque) for item in value]
    if isinstance(value, dict):
        return {
            key: _walk(item, scanner, found, opaque or opaque_member(value, key))
            for key, item in value.items()
        }
    return value  # numbers, booleans, null


def mask_tool_output(value: Any, scanner: TextScanner) -> MaskResult:
    """The tool output with its secrets masked, and what was masked (never a value)."""
    found: list[Masked] = []
    new = _walk(value, scanner, found, False)
    return MaskResult(new if found else value, tuple(found))


def withhold_tool_output(value: Any) -> Any:
    """The tool output with every text string replaced by a notice (`live.on_error: block`)."""
    if isinstance(value, str):
        return WITHHELD
    if isinstance(value, list):
        return [withhold_tool_output(item) for item in value]
    if isinstance(value, dict):
        return {
            key: item if key in OPAQUE_KEYS else withhold_tool_output(item)
            for key, item in value.items()
        }
    return value


def prompt_secrets(prompt: str, scanner: TextScanner) -> tuple[Masked, ...]:
    """The secrets a prompt holds (kinds and fingerprints)."""
    return tuple(_masked(f) for f in scanner.scan_text(prompt))


def block_reason(masked: tuple[Masked, ...]) -> str:
    """Why the prompt was blocked: the kinds, never a value, and how to pass a secret safely."""
    kinds = ", ".join(sorted({m.kind for m in masked}))
    return (
        f"scrubber blocked this prompt: it holds a secret ({kinds}). Secrets typed in a prompt "
        "are sent to the API and kept in the session transcript. Pass it another way: export "
        "it in an environment variable before starting Claude Code and refer to the variable "
        "by name ($MY_TOKEN), put it in a file and give the path, or run the command yourself "
        "with the `!` shell escape. Then send the prompt again without the value."
    )
