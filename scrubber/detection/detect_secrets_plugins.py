"""What scrubber knows of detect-secrets' plugins without importing detect_secrets: the
literals and gates that say where each plugin could match (so the scanner wakes it only there,
and the status line can judge lines without loading it), and the kinds its findings get.
The plugins themselves are run by detect_secrets_adapter.py.
"""

from __future__ import annotations

import re

from scrubber.detection.gates import QUOTE_RAW, WORD, WS, Gate, literal_gate

# Lower-case literals that any match of the plugin must contain. Plugins whose formats have no
# literal (Discord, Telegram, Twilio, Artifactory's AP… keys) get none: they run on strings some
# other anchor already selected, and on text from a credential source.
PLUGIN_ANCHORS: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "ArtifactoryDetector": ("akc",),
    "AzureStorageKeyDetector": ("accountkey",),
    "BasicAuthDetector": ("://",),
    "CloudantDetector": ("cloudant",),
    "DiscordBotTokenDetector": (),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": (
        "glpat-",
        "gldt-",
        "glrt-",
        "glptt-",
        "glcbt-",
        "glft-",
        "glimt-",
        "glsoat-",
    ),
    "IbmCloudIamDetector": ("ibm",),
    "IbmCosHmacDetector": ("ibm",),
    "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authtoken",),
    "OpenAIDetector": ("t3blbkfj",),
    "PypiTokenDetector": ("pypi-ageichlwas5vcmc",),
    "SendGridDetector": ("sg.",),
    "SlackDetector": ("xox", "hooks.slack.com"),
    "SoftlayerDetector": ("softlayer",),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("sk_live_", "rk_live_"),
    "TelegramBotTokenDetector": (),
    "TwilioKeyDetector": (),
}
# The keyword plugin's own denylist, as literals (its regexes allow `_?` between the parts).
KEYWORD_ANCHORS = (
    "api_key", "apikey", "auth_key", "authkey", "service_key", "servicekey", "account_key",
    "accountkey", "db_key", "dbkey", "database_key", "databasekey", "priv_key", "privkey",
    "private_key", "privatekey", "client_key", "clientkey", "db_pass", "dbpass", "database_pass",
    "databasepass", "key_pass", "keypass", "password", "passwd", "pwd", "secret", "contraseña",
    "contrasena",
)  # fmt: skip
# The keyword plugin's regexes are slow (look-behinds, many alternatives), and its keywords
# ("secret", "pwd") are common in tool output. They can only match on a line that holds a
# keyword and an assignment or comparison sign, so only such lines are handed to them.
KEYWORD_LITERALS = tuple(
    a
    for a in KEYWORD_ANCHORS
    if a.isascii() and not any(b != a and b in a for b in KEYWORD_ANCHORS)
)
# Right after a keyword: the rest of the name, a closing quote or bracket, then the sign.
ASSIGNMENT_AFTER = re.compile(r"[\w-]{0,40}['\"\]]{0,2}[ \t]*(?:[=:(>]|=>|\s+[\"'])")
COMPARISON = ("==", "!=")


def _ibm_gates(keyword: str, value: str) -> tuple[Gate, ...]:
    """The IBM plugins run on a text that holds `ibm` (their anchor) and where the tail of
    their pattern is (detect_secrets_adapter._PLUGIN_PRECHECKS: keyword, operator, value):
    both, in either order. `ibm` alone is in one random id of a few hundred (`req_…iBm…`) and
    in a long base64 string often: it woke the detector on lines that could hold no hit. The
    prefilter runs it only on lines that hold `ibm` (`rare`)."""
    operator = r" *(?:=|:|:=|=>| +|::) *"
    forms = {
        "text": rf"""{keyword}["']?\]?{operator}["']?{value}""",
        "raw": rf"""{keyword}{QUOTE_RAW}?\]?{operator}{QUOTE_RAW}?{value}""",
    }
    text, raw = (rf"ibm[\s\S]*{tail}|{tail}[\s\S]*ibm" for tail in forms.values())
    return (Gate(text, raw, rare=("ibm",)),)


# Gates (gates.py) for the plugins whose anchors are common: `://` (every URL) wakes BasicAuth
# only with `user:password@`; `-us` wakes Mailchimp only after 32 hex digits.
PLUGIN_GATES: dict[str, tuple[Gate, ...]] = {
    # The key id's prefixes, or `aws` with one of the secret regex's keywords (`key`, `pwd`,
    # `pw`, `password`, `pass`, `token`) at most 20 characters after it: `aws` alone is in
    # every `aws iam …` command and every ARN. 20 characters are at most 80 bytes of UTF-8 in a
    # string, 120 on a raw line (`\uXXXX`).
    "AWSKeyDetector": (
        *(g for a in PLUGIN_ANCHORS["AWSKeyDetector"] if a != "aws" and (g := literal_gate(a))),
        Gate(r"aws[^\n]{0,80}(?:key|pw|pass|token)", r"aws.{0,120}(?:key|pw|pass|token)"),
    ),
    "BasicAuthDetector": (Gate(r"://[^{}\s]*:[^{}\s]+@"),),
    "IbmCloudIamDetector": _ibm_gates(r"(?:key|pwd|password|pass|token)", r"[a-zA-Z0-9_\-]{44}"),
    "IbmCosHmacDetector": _ibm_gates(r"secret[-_]?(?:access)?[-_]?key", r"[a-f0-9]{48}"),
    "MailchimpDetector": (Gate(r"[0-9a-f]{32}-us[0-9]"),),
}


_KEYWORDS = (
    r"(?:api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|"
    r"private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|secret|"
    r"contrase)"
)
_CLOSING = {"text": r"""[\]'"]{0,2}""", "raw": r"""(?:\]|'|\\{1,7}"){0,2}"""}
_QUOTE = {"text": r"""["'`]""", "raw": QUOTE_RAW}


def keyword_gates() -> tuple[Gate, ...]:
    """Necessary conditions of the keyword plugin's regexes where values must be quoted
    (detect_secrets/plugins/keyword.py: every file type but config files and Go): a denylisted
    keyword, the rest of the word, an operator (`:`, `=`, `!=`, `=>`, `[n] =`) and a quote; or
    `(` / `.assign(` and a quote; or a quoted value and `;` after it; or a comparison sign right
    before the word. `password: str` and `password_hash = hash(…)` wake nothing."""
    built: dict[str, str] = {}
    for form in ("text", "raw"):
        closing, quote = _CLOSING[form], _QUOTE[form]
        built[form] = (
            rf"{_KEYWORDS}(?:{WORD}*(?:(?:{closing}|\[[0-9]*\]){WS}*[:!=]{{1,3}}>?{WS}*@?{quote}|"
            rf"(?:.assign)?\({quote})|\S*{WS}*{quote}[^'\"]*{quote};)"
        )
    preceded = rf"[!=]={WS}*{WORD}*{_KEYWORDS}"
    return (Gate(built["text"], built["raw"]), Gate(preceded))


def unquoted_keyword_gates() -> tuple[Gate, ...]:
    """The same where a value may stand bare (config files, Go): keyword, word, operator."""
    return (
        Gate(
            rf"{_KEYWORDS}{WORD}*{_CLOSING['text']}{WS}*(?::|=|!=)",
            rf"{_KEYWORDS}{WORD}*{_CLOSING['raw']}{WS}*(?::|=|!=)",
        ),
    )


# Kinds for findings, by plugin (kebab-case, matching ours where the thing is the same).
PLUGIN_KINDS: dict[str, str] = {
    "AWSKeyDetector": "aws-access-key",
    "ArtifactoryDetector": "artifactory-token",
    "AzureStorageKeyDetector": "azure-storage-key",
    "BasicAuthDetector": "basic-auth-password",
    "CloudantDetector": "cloudant-credential",
    "DiscordBotTokenDetector": "discord-bot-token",
    "GitHubTokenDetector": "github-token",
    "GitLabTokenDetector": "gitlab-token",
    "IbmCloudIamDetector": "ibm-cloud-iam-key",
    "IbmCosHmacDetector": "ibm-cos-hmac-key",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp-key",
    "NpmDetector": "npm-token",
    "OpenAIDetector": "openai-key",
    "PypiTokenDetector": "pypi-token",
    "SendGridDetector": "sendgrid-key",
    "SlackDetector": "slack-token",
    "SoftlayerDetector": "softlayer-key",
    "SquareOAuthDetector": "square-oauth-secret",
    "StripeDetector": "stripe-key",
    "TelegramBotTokenDetector": "telegram-bot-token",
    "TwilioKeyDetector": "twilio-key",
}
# Our PEM rule covers the whole block; detect-secrets' PrivateKeyDetector sees only the header
# line, which would make a partial redaction look complete. IPPublicDetector flags addresses,
# which are not credentials.
EXCLUDED_PLUGINS = frozenset({"PrivateKeyDetector", "IPPublicDetector"})
