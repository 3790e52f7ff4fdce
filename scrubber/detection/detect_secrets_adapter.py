"""detect-secrets' plugins behind our Detector seam (the only module that imports detect_secrets).

detect-secrets reports secret *values* without positions, and for some plugins only part of the
token (its GitHub rule captures `ghp` alone). We run each plugin's own regexes with `finditer` to
get positions, widen a partial capture to the whole token, and check keyword and entropy results
with detect-secrets' own heuristic filters. The import happens on the first `find` (or a scan's
`prepare`), never on the status line's path, and without `requests` (see `_RequestsStandIn`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from scrubber.detection.detect_secrets_plugins import (
    ASSIGNMENT_AFTER,
    COMPARISON,
    EXCLUDED_PLUGINS,
    KEYWORD_ANCHORS,
    KEYWORD_LITERALS,
    PLUGIN_ANCHORS,
    PLUGIN_GATES,
    PLUGIN_KINDS,
    keyword_gates,
    unquoted_keyword_gates,
)
from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import Gate, literal_gate
from scrubber.detection.prefilter import LiteralSet, PatternSet, literal_set, pattern_set
from scrubber.detection.rules import values

DETECTOR_NAME = "detect-secrets"

_TOKEN_BODY = re.compile(r"[A-Za-z0-9_\-+/.~]*")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/.~")
_MAX_WIDEN = 1024
_PADDING = re.compile(r"=*")


@dataclass(frozen=True, slots=True)
class _Plugin:
    class_name: str
    kind: str
    patterns: tuple[re.Pattern[str], ...]
    anchors: tuple[str, ...]
    # A necessary condition of the patterns, searched first (see `_PLUGIN_PRECHECKS`).
    precheck: re.Pattern[str] | None = None


@dataclass(slots=True)
class _Loaded:
    regex_plugins: tuple[_Plugin, ...]
    keyword_plugin: Any
    keyword_regexes_by_type: dict[Any, dict[re.Pattern[str], int]]
    keyword_default: dict[re.Pattern[str], int]
    # The regex sets (config files, Go) in which a keyword's value may stand without quotes.
    unquoted_sets: tuple[dict[re.Pattern[str], int], ...]
    determine_file_type: Any
    entropy_plugins: tuple[tuple[Any, str], ...]
    filters: tuple[Any, ...]
    is_likely_id_string: Any
    is_indirect_reference: Any


class _RequestsStandIn(types.ModuleType):
    """Stands in for `requests` while detect-secrets is imported.

    detect-secrets' plugin modules import `requests` at the top, only to check a secret with its
    vendor over the network (`verify`), which scrubber never does; importing requests takes
    about 90 ms, two thirds of loading detect-secrets, in every process that scans. At import
    time those modules use one name of it, in annotations (`-> requests.Response`); this module
    has that name and nothing else. It is taken out of `sys.modules` once detect-secrets is
    loaded, so a later `import requests` anywhere gets the real package."""

    class Response:
        """Only ever named in annotations."""


def _load() -> _Loaded:
    """Import detect-secrets with the `requests` stand-in; if this version of detect-secrets
    needs more of requests while it is imported, forget what was imported and do it the
    ordinary way."""
    if "requests" not in sys.modules:
        stand_in = _RequestsStandIn("requests")
        sys.modules["requests"] = stand_in
        try:
            return _load_plugins()
        except Exception:  # any failure under the stand-in: import the ordinary way
            for name in [n for n in sys.modules if n.partition(".")[0] == "detect_secrets"]:
                del sys.modules[name]
        finally:
            if sys.modules.get("requests") is stand_in:
                del sys.modules["requests"]
    return _load_plugins()


def _load_plugins() -> _Loaded:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )
    from detect_secrets.plugins.keyword import (
        CONFIG_DENYLIST_REGEX_TO_GROUP,
        GOLANG_DENYLIST_REGEX_TO_GROUP,
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        REGEX_BY_FILETYPE,
        KeywordDetector,
    )
    from detect_secrets.util.filetype import determine_file_type

    regex_plugins = []
    plugin_classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    for cls in sorted(plugin_classes, key=lambda c: str(c.__name__)):
        name = cls.__name__
        if name in EXCLUDED_PLUGINS or not issubclass(cls, RegexBasedDetector):
            continue
        plugin_class: Any = cls  # abstract in detect-secrets' annotations, concrete here
        plugin = plugin_class()
        regex_plugins.append(
            _Plugin(
                class_name=name,
                kind=PLUGIN_KINDS.get(name, "detect-secrets-" + name.lower()),
                patterns=tuple(plugin.denylist),
                anchors=PLUGIN_ANCHORS.get(name, ()),
                precheck=_precheck(name, plugin.denylist),
            )
        )
    return _Loaded(
        regex_plugins=tuple(regex_plugins),
        keyword_plugin=KeywordDetector(),
        keyword_regexes_by_type=REGEX_BY_FILETYPE,
        keyword_default=QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        unquoted_sets=(CONFIG_DENYLIST_REGEX_TO_GROUP, GOLANG_DENYLIST_REGEX_TO_GROUP),
        determine_file_type=functools.lru_cache(maxsize=1024)(determine_file_type),
        entropy_plugins=(
            (Base64HighEntropyString(), "high-entropy-base64"),
            (HexHighEntropyString(), "high-entropy-hex"),
        ),
        filters=(
            heuristic.is_sequential_string,
            heuristic.is_potential_uuid,
            heuristic.is_templated_secret,
            heuristic.is_prefixed_with_dollar_sign,
            heuristic.is_not_alphanumeric_string,
        ),
        is_likely_id_string=heuristic.is_likely_id_string,
        is_indirect_reference=heuristic.is_indirect_reference,
    )


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a partial capture (`ghp`) to the whole token it belongs to."""
    floor = max(0, start - _MAX_WIDEN)
    while start > floor and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    right = _TOKEN_BODY.match(text, end)
    if right is not None:
        matched_end, end = end, right.end()
        # A dot can sit inside a token (JWTs, `hvs.`, `SG.`) but a trailing one is the end of a
        # sentence ("… use AKIA….."): taking it would change the fingerprint and the text.
        while end > matched_end and text[end - 1] == ".":
            end -= 1
    pad = _PADDING.match(text, end)
    if pad is not None:
        end = pad.end()
    return start, end


# For plugins whose patterns are slow to search (an optional prefix after a look-behind, so `re`
# tries them at every position: the two IBM plugins read about 7 MB/s), the part of the pattern
# every match holds, from the name's last word to the value. Searched with the plugin's own
# flags; only where it matches do the patterns run. (Held to the patterns by a test.)
_PLUGIN_PRECHECKS: dict[str, str] = {
    "IbmCloudIamDetector": (
        r"""(?:key|pwd|password|pass|token)["']?\]? *(?:=|:|:=|=>| +|::) *["']?"""
        r"[a-zA-Z0-9_\-]{44}"
    ),
    "IbmCosHmacDetector": (
        r"""secret[-_]?(?:access)?[-_]?key["']?\]? *(?:=|:|:=|=>| +|::) *["']?[a-f0-9]{48}"""
    ),
}


def _precheck(class_name: str, patterns: Sequence[re.Pattern[str]]) -> re.Pattern[str] | None:
    source = _PLUGIN_PRECHECKS.get(class_name)
    if source is None or not patterns or len({p.flags for p in patterns}) > 1:
        return None
    return re.compile(source, patterns[0].flags)


def _plugin_hits(plugin: _Plugin, text: str) -> Iterator[Hit]:
    if plugin.precheck is not None and plugin.precheck.search(text) is None:
        return
    for pattern in plugin.patterns:
        for match in pattern.finditer(text):
            span = next(
                (match.span(i) for i in range(1, (match.lastindex or 0) + 1) if match.group(i)),
                match.span(),
            )
            basic_auth = plugin.class_name == "BasicAuthDetector"
            start, end = span if basic_auth else _widen(text, *span)
            if basic_auth and _not_a_value(text[start:end]):
                continue  # `user:password@host` in docs, `{password}` in an f-string
            if end > start:
                yield Hit(start, end, plugin.kind, f"{DETECTOR_NAME}:{plugin.class_name}")


def _not_a_value(value: str) -> bool:
    """Placeholders, templates and code where a generic plugin expected a password; our own
    rules apply the same judgement (rules/values.py)."""
    return (
        values.is_placeholder(value)
        or values.is_trivial(value)
        or values.looks_like_template_or_regex(value)
        or values.looks_like_code(value)
    )


_LOADED: _Loaded | None = None


def _shared_plugins() -> _Loaded:
    global _LOADED  # noqa: PLW0603 - one import of detect-secrets per process, shared by both detectors
    if _LOADED is None:
        _LOADED = _load()
    return _LOADED


def _keyword_regexes(loaded: _Loaded, file_name: str | None) -> dict[re.Pattern[str], int]:
    """The keyword plugin's regexes for a file, as detect-secrets picks them by its type."""
    if not file_name:
        return loaded.keyword_default
    file_type = loaded.determine_file_type(file_name)
    found: dict[re.Pattern[str], int] = loaded.keyword_regexes_by_type.get(
        file_type, loaded.keyword_default
    )
    return found


def _takes_bare_values(loaded: _Loaded, regexes: dict[re.Pattern[str], int]) -> bool:
    return any(regexes is bare for bare in loaded.unquoted_sets)


@functools.lru_cache(maxsize=256)
def _extension_takes_bare_values(extension: str) -> bool:
    loaded = _shared_plugins()
    return _takes_bare_values(loaded, _keyword_regexes(loaded, "x" + extension))


@functools.lru_cache(maxsize=4096)  # asked for every tool call; sessions touch the same files
def _file_takes_bare_values(file_name: str) -> bool:
    # detect-secrets decides a file's type by its extension alone.
    return _extension_takes_bare_values(os.path.splitext(file_name)[1])  # noqa: PTH122 - as detect-secrets does


def _keyword_hits(
    loaded: _Loaded, text: str, regexes: dict[re.Pattern[str], int], keywords: Sequence[str]
) -> Iterator[Hit]:
    lowered = text.lower()
    lines: dict[int, int] = {}
    for keyword in keywords:
        position = lowered.find(keyword)
        while position >= 0:
            line_start = text.rfind("\n", 0, position) + 1
            if line_start not in lines:
                line_end = text.find("\n", position)
                line_end = len(text) if line_end < 0 else line_end
                if ASSIGNMENT_AFTER.match(lowered, position + len(keyword)) or any(
                    sign in lowered[line_start:position] for sign in COMPARISON
                ):
                    lines[line_start] = line_end
                    position = line_end
            position = lowered.find(keyword, position + 1)
    for line_start, line_end in sorted(lines.items()):
        line = text[line_start:line_end]
        for regex, group in regexes.items():
            for match in regex.finditer(line):
                start, end = match.span(group)
                if start < 0 or end <= start:
                    continue
                value = line[start:end]
                if any(f(value) for f in loaded.filters) or _not_a_value(value):
                    continue
                if loaded.is_likely_id_string(value, line) or loaded.is_indirect_reference(line):
                    continue
                yield Hit(
                    line_start + start,
                    line_start + end,
                    "keyword-value",
                    f"{DETECTOR_NAME}:KeywordDetector",
                )


# A cheap shape that any match of a literal-less plugin must contain, so that its regexes run
# only where that shape occurs. All three are checked in one pass (hyperscan where installed).
_SHAPE_PRECHECKS: dict[str, bytes] = {
    "DiscordBotTokenDetector": rb"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}",
    # `\d{8,10}:` in the plugin: eight digits, so a `sha256:` digest (`6:` and hex) is not one.
    "TelegramBotTokenDetector": rb"[0-9]{8}:[0-9A-Za-z_-]{35}",
    "TwilioKeyDetector": rb"(?:AC|SK)[a-z0-9]{32}",
}
_SHAPE_NAMES = tuple(_SHAPE_PRECHECKS)


class DetectSecretsShapeDetector:
    """detect-secrets' plugins whose formats have no literal to anchor on (Discord, Telegram,
    Twilio): their regexes run wherever a cheap check of the token's shape says they could."""

    name = DETECTOR_NAME + "-shapes"
    context_only = False
    anchors: tuple[str, ...] = (".", ":", "ac", "sk")
    # The shapes themselves (case matters: Twilio's `AC`/`SK` are upper case).
    gates: tuple[Gate, ...] = tuple(
        Gate(pattern.decode(), caseless=False) for pattern in _SHAPE_PRECHECKS.values()
    )

    @functools.cached_property
    def _shapes(self) -> PatternSet:
        # Compiled on first use (hyperscan: 20-30 ms), not at set-up: most commands' scans never
        # wake these plugins, and a pooled scan compiles it once in `prepare`, before the fork.
        return pattern_set([_SHAPE_PRECHECKS[name] for name in _SHAPE_NAMES])

    def prepare(self) -> None:
        _shared_plugins()
        self._shapes  # noqa: B018 - compiled now, so that forked processes share it

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        matched = self._shapes.matching(text.encode("utf-8", "surrogatepass"))
        if not matched:
            return
        wanted = {_SHAPE_NAMES[i] for i in matched}
        for plugin in _shared_plugins().regex_plugins:
            if not plugin.anchors and plugin.class_name in wanted:
                yield from _plugin_hits(plugin, text)


class DetectSecretsDetector:
    """All of detect-secrets' relevant plugins as one detector with exact spans."""

    name = DETECTOR_NAME
    context_only = False
    # The keyword plugin reads the line around a keyword (a comparison puts the value before
    # it); other plugins match tokens that hold their anchor.
    reach_before = 2048
    reach_after = 2048

    def __init__(self) -> None:
        anchors: set[str] = set(KEYWORD_ANCHORS)
        for plugin_anchors in PLUGIN_ANCHORS.values():
            anchors.update(plugin_anchors)
        self.anchors: tuple[str, ...] = tuple(sorted(anchors))
        gates: list[Gate] = list(keyword_gates())
        for plugin, plugin_anchors in sorted(PLUGIN_ANCHORS.items()):
            if plugin in PLUGIN_GATES:
                gates.extend(PLUGIN_GATES[plugin])
                continue
            gates.extend(g for g in map(literal_gate, plugin_anchors) if g is not None)
        self.gates: tuple[Gate, ...] = tuple(dict.fromkeys(gates))
        # Which plugin anchors and keywords a text holds, found in one pass (hyperscan where
        # installed) instead of one substring search per literal over the whole text.
        self._literals: tuple[str, ...] = tuple(
            sorted({a for group in PLUGIN_ANCHORS.values() for a in group} | set(KEYWORD_LITERALS))
        )

    @functools.cached_property
    def _literal_set(self) -> LiteralSet:
        """Compiled on first use or in `prepare` (see DetectSecretsShapeDetector._shapes)."""
        return literal_set([a.encode() for a in self._literals])

    def _plugins(self) -> _Loaded:
        return _shared_plugins()

    def prepare(self) -> None:
        """Import detect-secrets now (before a scan forks its workers, which then share it)."""
        _shared_plugins()
        self._literal_set  # noqa: B018 - compiled now, shared by forked processes

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        loaded = self._plugins()
        literals = self._literals
        present = {
            literals[i] for i in self._literal_set.present(text.encode("utf-8", "surrogatepass"))
        }
        for plugin in loaded.regex_plugins:
            # Plugins with no literal (Discord, Telegram, Twilio) are DetectSecretsShapes' job.
            if plugin.anchors and not present.isdisjoint(plugin.anchors):
                yield from _plugin_hits(plugin, text)
        keywords = [k for k in KEYWORD_LITERALS if k in present]
        regexes = _keyword_regexes(loaded, context.file_name)
        # Where values may be bare (config files, Go), DetectSecretsConfigKeywords reads them,
        # woken by gates that do not ask for a quote; here and in a credential source, this one.
        if keywords and (context.sensitive or not _takes_bare_values(loaded, regexes)):
            yield from _keyword_hits(loaded, text, regexes, keywords)
        if context.sensitive:
            yield from self._entropy_hits(loaded, text)

    def _entropy_hits(self, loaded: _Loaded, text: str) -> Iterator[Hit]:
        for plugin, kind in loaded.entropy_plugins:
            for match in plugin.regex.finditer(text):
                start, end = match.span(2)
                value = text[start:end]
                if (
                    len(value) < 16
                    or plugin.calculate_shannon_entropy(value) < plugin.entropy_limit
                ):
                    continue
                if any(f(value) for f in loaded.filters):
                    continue
                yield Hit(start, end, kind, f"{DETECTOR_NAME}:{type(plugin).__name__}")


class DetectSecretsConfigKeywords:
    """detect-secrets' keyword plugin where a value may stand without quotes: config files
    (YAML, INI, TOML, properties, .cfg/.conf) and Go, as the plugin decides from a file's name.
    Its gates need no quote, so they wake on `password: str` in any code; it then reads only
    strings known to come from such a file (a Read, Write or Edit of it). Disabled with
    `detect-secrets` (see detection.registry)."""

    name = DETECTOR_NAME + "-config-keywords"
    context_only = False
    anchors: tuple[str, ...] = tuple(a for a in KEYWORD_LITERALS if a.isascii())
    gates: tuple[Gate, ...] = unquoted_keyword_gates()
    reach_before = 2048
    reach_after = 2048

    @functools.cached_property
    def _literal_set(self) -> LiteralSet:
        """Compiled on first use or in `prepare` (see DetectSecretsShapeDetector._shapes)."""
        return literal_set([a.encode() for a in KEYWORD_LITERALS])

    def reads_file(self, file_name: str | None) -> bool:
        """Whether this detector reads the output or input of a tool call on `file_name` (the
        scanner then wakes it only on lines that answer such a call)."""
        if not file_name:
            return False
        return _file_takes_bare_values(file_name)

    def prepare(self) -> None:
        _shared_plugins()
        self._literal_set  # noqa: B018 - compiled now, shared by forked processes

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        if context.sensitive or not context.file_name:
            return  # DetectSecretsDetector reads these
        loaded = _shared_plugins()
        regexes = _keyword_regexes(loaded, context.file_name)
        if not _takes_bare_values(loaded, regexes):
            return
        present = self._literal_set.present(text.encode("utf-8", "surrogatepass"))
        keywords = [KEYWORD_LITERALS[i] for i in sorted(present)]
        if keywords:
            yield from _keyword_hits(loaded, text, regexes, keywords)
