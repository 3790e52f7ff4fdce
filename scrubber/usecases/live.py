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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scrubber.detection.placeholder import SHORT_FINGERPRINT_LENGTH
from scrubber.detection.scan import FoundSecret, SecretScanner

# Built-in tools whose output is text read from the world (files, commands, the web). Tools
# whose output is the model's own words (Write, Edit, TodoWrite, Task) are not scanned: a
# replacement there changes nothing the model did not already write.
TEXT_TOOLS = frozenset(
    {
        "Read",
        "Bash",
        "BashOutput",
        "KillShell",
        "KillBash",
        "Grep",
        "Glob",
        "LS",
        "WebFetch",
        "WebSearch",
        "NotebookRead",
    }
)

# Keys whose string is binary data (an image's base64) or an id: never scanned, never changed.
_OPAQUE_KEYS = frozenset({"base64", "signature", "persistedOutputPath", "tool_use_id"})
_IMAGE_TYPES = frozenset({"image", "document"})

WITHHELD = "[scrubber: output withheld: the live check failed and live.on_error is block]"


def scans_tool(name: object) -> bool:
    """Whether the live hook looks at this tool's output (built-in text tools, MCP tools)."""
    return isinstance(name, str) and (name in TEXT_TOOLS or name.startswith("mcp__"))


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


def _masked(found: FoundSecret) -> Masked:
    return Masked(found.hit.kind, found.hit.detector, found.fingerprint[:SHORT_FINGERPRINT_LENGTH])


def mask_text(text: str, scanner: SecretScanner) -> tuple[str, tuple[Masked, ...]]:
    """`text` with every secret the scanner finds replaced by its placeholder."""
    found = scanner.scan_text(text)
    if not found:
        return text, ()
    for item in sorted(found, key=lambda f: f.hit.start, reverse=True):
        text = text[: item.hit.start] + item.placeholder + text[item.hit.end :]
    return text, tuple(_masked(f) for f in found)


def _is_binary_block(value: Mapping[str, Any]) -> bool:
    return value.get("type") in _IMAGE_TYPES or "media_type" in value or "mimeType" in value


def _walk(value: Any, scanner: SecretScanner, found: list[Masked], opaque: bool) -> Any:
    if isinstance(value, str):
        if opaque:
            return value
        new, masked = mask_text(value, scanner)
        found.extend(masked)
        return new
    if isinstance(value, list):
        return [_walk(item, scanner, found, opaque) for item in value]
    if isinstance(value, dict):
        binary = _is_binary_block(value)
        return {
            key: _walk(
                item,
                scanner,
                found,
                opaque or key in _OPAQUE_KEYS or (binary and key in ("data", "source")),
            )
            for key, item in value.items()
        }
    return value  # numbers, booleans, null


def mask_tool_output(value: Any, scanner: SecretScanner) -> MaskResult:
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
            key: item if key in _OPAQUE_KEYS else withhold_tool_output(item)
            for key, item in value.items()
        }
    return value


def prompt_secrets(prompt: str, scanner: SecretScanner) -> tuple[Masked, ...]:
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
