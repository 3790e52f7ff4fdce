"""Discord bot tokens: three base64url segments, `<user id>.<timestamp>.<HMAC>`, the first being
the base64 of the bot's numeric user id, so it starts with M, N or O (discord.com/developers
docs "Reference: Authentication"; detect-secrets DiscordBotTokenDetector, whose published
pattern this widens for the longer ids and HMACs of current tokens).

The token has no literal prefix, so its only anchor is the dot it always contains. The search
starts from the distinctive middle (`.` + 6 characters + `.`), which `re` finds an order of
magnitude faster than a pattern starting with a character class. The first segment must decode
to a run of digits, which keeps dotted identifiers (`MyLongTestName.method.other_attribute`) out.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate

_MIDDLE = re.compile(r"\.[A-Za-z0-9_-]{6}\.")
_FIRST = re.compile(r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\Z")
_LAST = re.compile(r"[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_.-])")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _is_user_id(segment: str) -> bool:
    segment = segment[: len(segment) - len(segment) % 4]
    try:
        decoded = base64.urlsafe_b64decode(segment)
    except (binascii.Error, ValueError):
        return False
    digits = sum(1 for b in decoded if 0x30 <= b <= 0x39)
    return len(decoded) >= 12 and digits * 10 >= len(decoded) * 6


@dataclass(frozen=True, slots=True)
class DiscordTokenRule:
    name: str = "discord-bot-token"
    kind: str = "discord-bot-token"
    anchors: tuple[str, ...] = (".",)
    # `.` is in every line; two dots six token characters apart, then 27 more, are rare.
    gates: tuple[Gate, ...] = (Gate(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"),)
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = (
        "discord.com/developers/docs/reference#authentication; detect-secrets "
        "DiscordBotTokenDetector"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        for middle in _MIDDLE.finditer(text):
            dot = middle.start()
            start = dot
            while start > 0 and dot - start < 29 and text[start - 1] in _TOKEN_CHARS:
                start -= 1
            first = _FIRST.search(text, start - 1 if start > 0 else 0, dot)
            if first is None or first.start() != start:
                continue
            last = _LAST.match(text, middle.end())
            if last is None or not _is_user_id(text[start:dot]):
                continue
            yield Hit(start, last.end(), self.kind, self.name)


DISCORD_BOT_TOKEN = DiscordTokenRule()

RULES = (DISCORD_BOT_TOKEN,)
