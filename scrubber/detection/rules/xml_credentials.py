"""Credentials in XML: Jenkins' encrypted secrets and credential blocks, and the key/value pairs
of configuration files.

- Jenkins keeps every secret of `credentials.xml`, `config.xml` and job files as a
  `hudson.util.Secret`: `{` + base64 of version byte 1, the IV length (16) and the data length as
  4-byte integers, the IV and the AES ciphertext + `}`; so it always starts `{AQAAABAAAA`
  (jenkins.io "Credentials"/"Using credentials", hudson.util.Secret). With the controller's
  `secrets/` folder it decrypts, so it is redacted wherever it appears.
- An element named for a secret whose text is in braces (`<secret>{…}</secret>`,
  `<apiToken>{…}</apiToken>`): assignment/ takes plain element text but reads `{…}` as a template
  reference; here the braces are the Jenkins form, and everything inside them is the secret.
- Inside a Jenkins credentials block (`…CredentialsImpl`, `…SSHUserPrivateKey`), the companions
  of the secret (`<id>`, `<username>`, `<appID>`, `<clientId>`) when their text is shaped like a
  generated credential rather than a uuid, a name or a host: a key pair's other half (plugins
  store an API key id or an app key next to its secret). Ordinary ids (`github-deploy`, uuids)
  stay.
- Key/value pairs (the key names a credential), such as .NET `<add key="ApiKey" value="…"/>`
  (learn.microsoft.com "appSettings element"), `<setting name="Token"><value>…</value>`
  (applicationSettings), Spring/Ant/Hibernate `<property name="password" value="…"/>`, Java
  Properties XML `<entry key="token">…</entry>` (java.util.Properties loadFromXML), phpunit
  `<env name="API_KEY" value="…"/>`, Hadoop `<property><name>…</name><value>…</value>`,
  web.xml `<param-name>`/`<param-value>`, Apple plists `<key>…</key><string>…</string>` and
  XStream maps `<string>…</string><string>…</string>`. (Attributes such as `password="…"` and
  `<password>…</password>` are assignment/'s.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scrubber.detection.detector import ScanContext
from scrubber.detection.finding import Hit
from scrubber.detection.gates import QUOTE_RAW, QUOTE_TEXT, WS, Gate
from scrubber.detection.rules.assignment import AssignedValue, Strength, accept_value
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.cli_flags import credential_value, secret_name_strength
from scrubber.detection.rules.values import (
    is_filler,
    is_trivial,
    is_uuid,
    looks_like_locator,
    looks_token_like,
)

KIND = "xml-credential"
_MAX_VALUE = 4096
_MAX_BLOCK = 8192
_PAIR_REACH = 400  # a few lines of one credential's elements

# ---------------------------------------------------------------------------------------------
# hudson.util.Secret, anywhere.

JENKINS_SECRET = PatternRule(
    name="jenkins-encrypted-secret",
    kind="jenkins-secret",
    pattern=r"\{(?P<secret>AQAAABAAAA[A-Za-z0-9+/]{16,8192}={0,2})\}",
    anchors=("{aqaaabaaaa",),
    reference="jenkins.io/doc/developer/security/secrets (hudson.util.Secret, format version 1, "
    "16-byte IV, AES-CBC; base64 in braces)",
    reject=is_filler,
)

# ---------------------------------------------------------------------------------------------
# Braced text of secret-named elements, and Jenkins credential blocks.

_KEYWORDS = r"(?:pass|pwd|secret|token|key|auth|cred)"
_ELEMENT = re.compile(
    r"<(?P<name>[A-Za-z_][\w.:-]{0,80})(?:\s[^<>]{0,256})?>\s{0,64}"
    r"(?:\{(?P<braced>[^{}<>\n]{1,4096})\}|(?P<plain>[^{}<>\n]{1,4096}))\s{0,64}</(?P=name)\s*>"
)
_BLOCK = re.compile(
    r"<(?P<tag>[\w.$-]{0,200}(?:CredentialsImpl|SSHUserPrivateKey|[A-Za-z0-9]Credentials))(?:\s[^<>]{0,256})?>"
)
# Companions of a secret in a credentials block.
_COMPANIONS = frozenset({"id", "username", "user", "appid", "app_id", "clientid", "client_id"})
# A name or a slug: words of letters, or numbers, joined by separators (`github-deploy-2024`).
_SLUG = re.compile(
    r"^(?:[A-Z]?[a-z]+|[A-Z]{1,12}|\d{1,12})(?:[-_.@ ](?:[A-Z]?[a-z]+|[A-Z]{1,12}|\d{1,12}))*$"
)
_SLOT = re.compile(r"^(?:[A-Za-z_][A-Za-z_.]*|\d+)$")
_HOST = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?(?:/\S*)?$")


def _local(name: str) -> str:
    return name.rpartition(":")[2]


def _braced_secret(inner: str, strength: Strength) -> bool:
    """The text inside `{…}` of a secret-named element: a Jenkins secret (which assignment/ reads
    as a template), or any of its words shaped like a credential."""
    if "AQAAABAAA" in inner and len(inner.strip()) >= 20:
        return True
    words = inner.split()
    if len(words) == 1 and _SLOT.match(words[0]):
        return False  # `{apiToken}`, `{API_KEY}`, `{0}`, `{env.TOKEN}`: a template's slot
    return any(credential_value(word, strength) for word in words)


def _companion_word(word: str) -> bool:
    """A word of an id or user name shaped like a generated key, not like a name or a host."""
    if len(word) < 16 or is_uuid(word) or _SLUG.match(word) or _HOST.match(word):
        return False
    if looks_like_locator(word) or is_filler(word) or is_trivial(word):
        return False
    return looks_token_like(word, 16)


def _element_gate() -> str:
    # A secret-named element whose text opens with a brace (the plain form is assignment/'s).
    return rf"<[a-z0-9_.:-]{{0,60}}{_KEYWORDS}[a-z0-9_.:-]{{0,40}}(?:{WS}[^<>]{{0,256}})?>{WS}*\{{"


@dataclass(frozen=True, slots=True)
class BracedElementRule:
    """`<secret>{…}</secret>` anywhere; `<id>`/`<username>` companions in Jenkins blocks."""

    name: str = "xml-braced-secret"
    kind: str = KIND
    anchors: tuple[str, ...] = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
    gates: tuple[Gate, ...] = (
        Gate(_element_gate(), rare=("<",)),  # markup is on few lines; the nouns on most
        Gate(rf"(?:credentialsimpl|sshuserprivatekey|[a-z0-9]credentials)(?:{WS}[^<>]{{0,256}})?>"),
    )
    reach_before: int = 512
    reach_after: int = _MAX_BLOCK
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = "jenkins.io credentials plugin (credentials.xml, hudson.util.Secret)"

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        blocks = [(m.end(), self._block_end(text, m)) for m in _BLOCK.finditer(text)]
        secrets: list[Hit] = []
        companions: list[tuple[re.Match[str], str]] = []
        for match in _ELEMENT.finditer(text):
            name = _local(match.group("name"))
            braced = match.group("braced")
            if braced is not None:
                strength = secret_name_strength(name)
                if strength is not None and _braced_secret(braced, strength):
                    secrets.append(
                        Hit(match.start("braced"), match.end("braced"), self.kind, self.name)
                    )
                    continue
            if name.lower() in _COMPANIONS:
                companions.append((match, "braced" if braced is not None else "plain"))
        yield from secrets
        for match, group in companions:
            # In a credentials block, or a sibling of a Jenkins secret (grep shows a few lines
            # of a credentials.xml without the block's opening tag).
            at = match.start()
            paired = any(start <= at < end for start, end in blocks) or any(
                abs(hit.start - at) <= _PAIR_REACH for hit in secrets
            )
            value = match.group(group)
            if paired and any(_companion_word(word) for word in value.split()):
                end = match.end(group) - (len(value) - len(value.rstrip()))
                yield Hit(match.start(group), end, self.kind, self.name)

    @staticmethod
    def _block_end(text: str, opener: re.Match[str]) -> int:
        close = text.find("</" + opener.group("tag"), opener.end(), opener.end() + _MAX_BLOCK)
        return close if close >= 0 else min(len(text), opener.end() + _MAX_BLOCK)


BRACED_ELEMENT = BracedElementRule()

# ---------------------------------------------------------------------------------------------
# Key/value pairs.

_PAIR_TAGS = (
    "add", "property", "param", "parameter", "entry", "setting", "env", "var", "variable",
    "arg", "option", "attribute", "item", "config", "secret", "const", "constant", "server",
)  # fmt: skip
_TAG_WITH_ATTRIBUTES = re.compile(
    r"<(?P<tag>(?:[\w-]{1,40}:)?(?:" + "|".join(_PAIR_TAGS) + r"))\s(?P<attrs>[^<>]{1,1024}?)"
    r"(?P<close>/?)>",
    re.IGNORECASE,
)
_NAME_ATTRIBUTE = re.compile(
    r"""(?<![\w-])(?:key|name)\s*=\s*(?P<q>["'])(?P<name>[^"'<>\n]{1,80})(?P=q)"""
)
_VALUE_ATTRIBUTE = re.compile(
    r"""(?<![\w-])value\s*=\s*(?P<q>["'])(?P<value>[^"'<>\n]{0,4096})(?P=q)"""
)
_TEXT_AFTER_TAG = re.compile(r"(?P<value>[^<>\n]{1,4096})</")
_VALUE_ELEMENT_AFTER_TAG = re.compile(r"\s{0,256}<value>(?P<value>[^<>\n]{1,4096})</value>")
# `<key>API_KEY</key><string>…</string>` and the like: a name element, then a value element.
_NAME_THEN_VALUE = re.compile(
    r"<(?P<ntag>key|string|name|param-name)>(?P<name>[^<>\n]{1,80})</(?P=ntag)>\s{0,256}"
    r"<(?P<vtag>string|value|param-value)>(?P<value>[^<>\n]{1,4096})</(?P=vtag)>"
)
_QUOTED_NAME = rf"""{{q}}[^"'\\<>]{{{{0,60}}}}{_KEYWORDS}[^"'\\<>]{{{{0,60}}}}{{q}}"""


def _pair_gates() -> tuple[Gate, ...]:
    def attribute(quote: str) -> str:
        return rf"(?:key|name){WS}*={WS}*" + _QUOTED_NAME.format(q=quote)

    elements = rf"<(?:key|string|name|param-name)>[^<>]{{0,60}}{_KEYWORDS}[^<>]{{0,60}}</"
    return (Gate(attribute(QUOTE_TEXT), attribute(QUOTE_RAW)), Gate(elements))


# hadoop-azure names the storage key after the account it opens:
# `fs.azure.account.key.<account>.blob.core.windows.net` (hadoop.apache.org hadoop-azure), and a
# SAS token likewise (`fs.azure.sas.<container>.<account>.blob.core.windows.net`).
_HADOOP_AZURE_KEY = re.compile(r"^fs\.azure\.(?:account\.key|sas)\.", re.IGNORECASE)


def _accept(value: str, name: str) -> bool:
    strength = secret_name_strength(name)
    if strength is None and _HADOOP_AZURE_KEY.match(name):
        strength = Strength.KEY
    if strength is None or not value:
        return False
    found = AssignedValue(0, len(value), True, "=", False, quoted_name=True)
    return accept_value(value, strength, name, found, ScanContext()) and (
        strength is Strength.STRONG or credential_value(value, strength)
    )


@dataclass(frozen=True, slots=True)
class XmlKeyValueRule:
    """The value of an XML key/value pair whose key names a secret."""

    name: str = "xml-key-value-secret"
    kind: str = KIND
    anchors: tuple[str, ...] = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
    gates: tuple[Gate, ...] = _pair_gates()
    reach_before: int = 1100
    reach_after: int = _MAX_VALUE + 512
    context_only: bool = False
    # Its hits depend on the text alone and match its gates: see SameInAnyContext.
    same_in_any_context: ClassVar[bool] = True
    reference: str = (
        "learn.microsoft.com appSettings/applicationSettings elements; docs.oracle.com "
        "java.util.Properties (properties.dtd); hadoop.apache.org Configuration; Apple plist"
    )

    def find(self, text: str, context: ScanContext) -> Iterator[Hit]:
        yield from self._attribute_pairs(text)
        for match in _NAME_THEN_VALUE.finditer(text):
            if _accept(match.group("value").strip(), match.group("name").strip()):
                yield self._trimmed(match)

    def _attribute_pairs(self, text: str) -> Iterator[Hit]:
        for tag in _TAG_WITH_ATTRIBUTES.finditer(text):
            attrs = tag.group("attrs")
            named = _NAME_ATTRIBUTE.search(attrs)
            if named is None:
                continue
            name = named.group("name").strip()
            base = tag.start("attrs")
            value = _VALUE_ATTRIBUTE.search(attrs)
            if value is not None:
                if _accept(value.group("value"), name):
                    yield Hit(
                        base + value.start("value"), base + value.end("value"), self.kind, self.name
                    )
                continue
            if tag.group("close"):
                continue
            after = _TEXT_AFTER_TAG.match(text, tag.end()) or _VALUE_ELEMENT_AFTER_TAG.match(
                text, tag.end()
            )
            if after is not None and _accept(after.group("value").strip(), name):
                yield self._trimmed(after)

    def _trimmed(self, match: re.Match[str], group: str = "value") -> Hit:
        start, end = match.span(group)
        raw = match.group(group)
        start += len(raw) - len(raw.lstrip())
        end -= len(raw) - len(raw.rstrip())
        return Hit(start, end, self.kind, self.name)


XML_KEY_VALUE = XmlKeyValueRule()

RULES = (JENKINS_SECRET, BRACED_ELEMENT, XML_KEY_VALUE)
