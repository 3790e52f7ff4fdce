"""What a demo config dir or a large transcript planted and where (secrets to find, decoys that
must not be flagged). Manifests hold the values: never print them (their reprs do not)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Planted:
    """A fake secret that was planted: its kind, its value (never print it), the files that
    hold it (relative to the config dir, or the transcript name) and, for large transcripts,
    the 1-based lines."""

    kind: str
    value: str = field(repr=False)
    where: tuple[str, ...] = ()  # human descriptions: "Read(.env) output", …
    files: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()

    def needles(self) -> tuple[str, ...]:
        """The strings that must not survive redaction. A multi-line secret (a PEM key) is
        stored with line-number prefixes in Read output, so each body line counts alone."""
        if "\n" not in self.value:
            return (self.value,)
        return tuple(
            line.strip()
            for line in self.value.splitlines()
            if len(line.strip()) >= 16 and not line.startswith("-----")
        )


@dataclass(frozen=True, slots=True)
class Decoy:
    """A string that looks like a secret but is not one; it must survive redaction."""

    kind: str
    value: str = field(repr=False)
    files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DemoManifest:
    secrets: tuple[Planted, ...]
    decoys: tuple[Decoy, ...]
    sessions: tuple[str, ...]  # session ids, in build order
    files: tuple[str, ...]  # every file written, relative to the config dir

    def kinds(self) -> frozenset[str]:
        return frozenset(secret.kind for secret in self.secrets)


@dataclass(frozen=True, slots=True)
class LargeTranscript:
    path: Path
    size: int
    lines: int
    session_id: str
    secrets: tuple[Planted, ...] = field(repr=False)
