"""What a SARIF log says about each kind of finding: its rule (`reportingDescriptor`), with a
description of the kind, what to do about it, and links into the project's README.

A rule describes a kind, never a finding: nothing here sees a secret's value. The descriptions
come from the kind's family (a token, a password, a private key, a webhook, a labelled value…)
and the detectors' own `reference` (where the format is documented); a kind that fits no
family gets a plain sentence that says no more than that it was reported as a secret.

The project's URL is read from the installed package's metadata (`Project-URL: Repository`,
else `Source`, else `Homepage`, from pyproject.toml's [project.urls]). Where the metadata names
none, the log carries no `informationUri` and no `helpUri` rather than a made-up address.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

DISTRIBUTION = "scrubber"
URL_LABELS = ("repository", "source", "homepage")  # [project.urls] keys, in order of preference
README_FINDINGS_SECTION = "Audit"  # the README heading that explains findings and their fields
MAX_REFERENCES = 3  # a kind found by many detectors (cli-password) names its first few

# Kinds whose value is known to be secret by the name it stands under, not by its shape.
LABELLED_KINDS: tuple[str, ...] = (
    "dotenv-value",
    "labelled-secret",
    "keyword-value",
    "cli-secret-flag",
    "url-query-secret",
    "authorization-header",
)

REDACT = "then redact the transcripts that hold it (`scrub redact --all --in-place`)."


@dataclass(frozen=True, slots=True)
class Family:
    matches: Callable[[str], bool]
    what: str  # what the kind is, one true sentence
    todo: str  # what to do about it


def _ends(*suffixes: str) -> Callable[[str], bool]:
    return lambda kind: kind.endswith(suffixes)


def _one_of(*kinds: str) -> Callable[[str], bool]:
    return frozenset(kinds).__contains__


FAMILIES: tuple[Family, ...] = (
    Family(
        _one_of("private-key", "age-secret-key"),
        "A private key (PEM, PuTTY, age, or a key file's body): whoever holds it can sign, "
        "decrypt or log in as its owner.",
        "Make a new key pair, trust the new public key where the old one was trusted and remove "
        "the old one; " + REDACT,
    ),
    Family(
        _ends("-webhook", "-webhook-key"),
        "A webhook URL or key: anyone who has it can post to the channel or trigger the hook.",
        "Delete the webhook and create a new one (its address is the secret); " + REDACT,
    ),
    Family(
        _ends("-key-id", "-access-id"),
        "A key's identifier (an access key id, a private key id): no secret alone, but it names "
        "the key whose secret half is often written beside it.",
        "Check whether the secret half was exposed too and rotate the key if so; " + REDACT,
    ),
    Family(
        lambda kind: (
            kind.endswith(("-password", "-auth", "-credential", "-credentials"))
            or kind in {"jenkins-secret", "xml-credential"}
        ),
        "A password or login credential, written in a command line, a connection string, a "
        "configuration or a credential file.",
        "Change the password (wherever it is reused too); " + REDACT,
    ),
    Family(
        _one_of(*LABELLED_KINDS),
        "A value under a name that says it is secret (KEY=V, key: V, ?token=V, the value of a "
        "flag such as --api-key, an Authorization header): what it unlocks depends on that name.",
        "Find the credential the name stands for and rotate it, or, if the value is no secret, "
        "allowlist it (detection.allowlist in the policy); " + REDACT,
    ),
    Family(
        lambda kind: kind.startswith("high-entropy-"),
        "A long random-looking string in no known format (detect-secrets' entropy check): a "
        "secret, or an id or a hash.",
        "Check what it is: rotate it if it is a credential, else allowlist its fingerprint "
        "(detection.allowlist.fingerprints); " + REDACT,
    ),
    Family(
        _one_of("jwt"),
        "A JSON Web Token: a signed bearer credential, valid until it expires or its signing "
        "key changes.",
        "Revoke the session or token where it was issued (a short-lived one may have expired "
        "already); " + REDACT,
    ),
    Family(
        lambda kind: (
            kind.endswith(("-token", "-key", "-secret")) or kind.startswith("detect-secrets-")
        ),
        "An API key, access token or other secret a service issued: whoever reads it can act "
        "with its owner's rights at that service until it is revoked.",
        "Revoke it where it was issued and make a new one (a transcript may already have been "
        "synced, shared or backed up); " + REDACT,
    ),
)


def family_of(kind: str) -> Family | None:
    return next((family for family in FAMILIES if family.matches(kind)), None)


def describe(kind: str) -> tuple[str, str]:
    """(what the kind is, what to do): its family's sentences, or a plain fallback."""
    family = family_of(kind)
    if family is not None:
        return family.what, family.todo
    return (
        f"A value scrubber reports as a secret of kind {kind}.",
        "Treat it as exposed: rotate whatever it unlocks; " + REDACT,
    )


@cache
def kind_references() -> dict[str, tuple[str, ...]]:
    """Where each kind's formats are documented: the `reference` of every detector of ours that
    reports it, and the detect-secrets plugins mapped to it."""
    from scrubber.detection.detect_secrets_plugins import PLUGIN_KINDS
    from scrubber.detection.rules.catalog import ALL_RULES

    found: dict[str, list[str]] = {}
    for detector in ALL_RULES:
        kind, reference = getattr(detector, "kind", None), getattr(detector, "reference", None)
        if isinstance(kind, str) and isinstance(reference, str) and reference:
            found.setdefault(kind, []).append(reference)
    for plugin, kind in sorted(PLUGIN_KINDS.items()):
        found.setdefault(kind, []).append(f"detect-secrets plugin {plugin}")
    return {kind: tuple(dict.fromkeys(refs)) for kind, refs in found.items()}


def _references_sentence(references: tuple[str, ...]) -> str:
    if not references:
        return ""
    shown = "; ".join(r.rstrip(". ") for r in references[:MAX_REFERENCES])
    more = len(references) - MAX_REFERENCES
    return f" Format documented in: {shown}" + (f" (and {more} more)." if more > 0 else ".")


def project_url(entries: Iterable[str] | None = None) -> str | None:
    """The project's https URL from the package metadata's `Project-URL` entries
    ("Label, URL"), or None when it names none."""
    if entries is None:
        # Imported here: importlib.metadata costs every command 15 ms, and only SARIF needs it.
        from importlib import metadata

        try:
            entries = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
        except metadata.PackageNotFoundError:
            return None
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls.setdefault(label.strip().lower(), url.strip())
    for label in URL_LABELS:
        url = urls.get(label, "")
        if url.startswith("https://") and " " not in url:
            return url.rstrip("/")
    return None


def heading_anchor(heading: str) -> str:
    """The fragment GitHub gives a README heading: lower case, punctuation dropped, spaces as
    hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def help_uri(url: str | None) -> str | None:
    """The README section that explains findings, on the project's URL."""
    return f"{url}#{heading_anchor(README_FINDINGS_SECTION)}" if url else None


def rule_for(kind: str, url: str | None) -> dict[str, Any]:
    """The `reportingDescriptor` of one kind."""
    what, todo = describe(kind)
    rule: dict[str, Any] = {
        "id": kind,
        "name": kind,
        "shortDescription": {"text": f"Secret of kind {kind}"},
        "fullDescription": {"text": what + _references_sentence(kind_references().get(kind, ()))},
        "help": {"text": f"{what} {todo}"},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["security", "secret"]},
    }
    where = help_uri(url)
    if where:
        rule["helpUri"] = where
    return rule
