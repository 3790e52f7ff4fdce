"""The names of scrubber's detectors, as `detection.disabled_detectors` takes them.

The policy checks each name against this list so that a misspelt one is an error with a
suggestion, like an unknown key, instead of a detector that silently keeps running. The names
are written out here rather than read from the detectors: detection sits above the policy in the
layers (ARCHITECTURE.md), its catalog costs about 120 ms of compiled regexes, and the
detect-secrets detectors would load detect_secrets. tests/unit/policy/test_detector_names.py
keeps this list equal to the detectors the scanner builds: a new rule's name goes here too.
"""

from __future__ import annotations

import re

# The `name` of every rule in scrubber.detection.rules.catalog.ALL_RULES, one a line: on a
# shared line, a name ending in `-secret-key` followed by a quoted name reads as a secret's
# label and value to scrubber's own audit (tests/e2e/test_repository_audit.py).
RULE_NAMES: frozenset[str] = frozenset(
    (
        "1password-secret-key",
        "1password-service-account-token",
        "7z-password-flag",
        "age-secret-key",
        "ai-provider-key",
        "anthropic-api-key",
        "anthropic-oauth-token",
        "atlassian-api-token",
        "authorization-header",
        "aws-access-key-id",
        "aws-bedrock-api-key",
        "aws-secret-access-key",
        "aws-session-token",
        "aws-session-token-bare",
        "azure-ad-client-secret",
        "azure-connection-string-key",
        "base64-pem-private-key",
        "cli-long-flag-secret",
        "cli-secret-flag",
        "cli-single-dash-secret",
        "clickhouse-cloud-secret-key",
        "cloudflare-origin-ca-key",
        "connection-string-password",
        "curl-user-braced-password",
        "curl-user-key",
        "curl-user-password",
        "databricks-token",
        "digitalocean-token",
        "discord-bot-token",
        "discord-webhook",
        "docker-config-auth",
        "docker-config-token",
        "doppler-token",
        "dotenv-context",
        "facebook-access-token",
        "facebook-app-token",
        "flyio-token",
        "gcp-private-key-id",
        "github-fine-grained-pat",
        "github-token",
        "gitlab-runner-registration-token",
        "gitlab-token",
        "google-api-key",
        "google-oauth-client-secret",
        "google-oauth-token",
        "grafana-token",
        "heroku-api-key",
        "hosting-platform-token",
        "huggingface-token",
        "ifttt-webhook-key",
        "infracost-token",
        "intra42-client-secret",
        "jenkins-encrypted-secret",
        "jwt",
        "labelled-secret",
        "labelled-secret-colon",
        "labelled-secret-name-value",
        "labelled-secret-next-line",
        "labelled-secret-pair",
        "labelled-secret-prose",
        "labelled-secret-service",
        "ldap-password-flag",
        "linear-api-key",
        "mailchimp-api-key",
        "mailgun-api-key",
        "mongo-password-flag",
        "mosquitto-password-flag",
        "mysql-password-flag",
        "netrc-context-password",
        "netrc-grep-password",
        "netrc-password",
        "notion-token",
        "npm-token",
        "npmrc-auth",
        "octopus-deploy-api-key",
        "openai-api-key",
        "openai-legacy-key",
        "openrouter-api-key",
        "openssl-enc-password-flag",
        "pem-private-key",
        "pgpass-password",
        "postman-api-key",
        "powershell-plaintext-secure-string",
        "private-key-file-body",
        "putty-private-key",
        "pypi-token",
        "redis-cli-password-flag",
        "registry-login-password-flag",
        "rubygems-api-key",
        "scalingo-token",
        "sendgrid-api-key",
        "sensitive-assignment",
        "sentry-token",
        "shell-default-secret",
        "shopify-token",
        "sidekiq-credentials",
        "slack-app-token",
        "slack-token",
        "slack-webhook",
        "smb-user-password",
        "sonar-labeled-token",
        "sonar-token",
        "sourcegraph-labeled-token",
        "sourcegraph-token",
        "sqlcmd-password-flag",
        "sqlplus-password",
        "square-token",
        "sshpass-password-flag",
        "stripe-secret-key",
        "stripe-webhook-secret",
        "sudo-stdin-password",
        "sumologic-access-id",
        "supabase-access-token",
        "supabase-secret-key",
        "teams-webhook",
        "telegram-bot-token",
        "terraform-cloud-token",
        "twilio-secret",
        "url-query-credential",
        "url-query-secret",
        "vault-legacy-token",
        "vault-token",
        "xml-braced-secret",
        "xml-key-value-secret",
        "zapier-webhook",
        "zip-password-flag",
    )
)

# detect_secrets_adapter.py: DetectSecretsDetector, DetectSecretsShapeDetector and
# DetectSecretsConfigKeywords. Disabling the first disables the third with it (detection/registry.py).
DETECT_SECRETS_NAMES: tuple[str, ...] = (
    "detect-secrets",
    "detect-secrets-shapes",
    "detect-secrets-config-keywords",
)

DETECTOR_NAMES: frozenset[str] = RULE_NAMES | frozenset(DETECT_SECRETS_NAMES)

# Findings of detect-secrets' plugins name the plugin (`detect-secrets:AWSKeyDetector`); the
# plugins are turned off together.
_PLUGIN_PREFIX = DETECT_SECRETS_NAMES[0] + ":"
# A name is echoed only when it looks like one (lower-case words and dashes, or a plugin's
# finding name): a policy can hold things worth keeping quiet, pasted in the wrong place.
_SHOWN = re.compile(r"[a-z0-9][a-z0-9-]{0,47}|detect-secrets:[A-Za-z]{1,48}")

NAMES_HINT = (
    "a detector's name is what `scrub audit --format json` reports as `detector`; "
    "detect-secrets' plugins are turned off together, as 'detect-secrets'"
)


def unknown_detector(name: str) -> str | None:
    """None for a detector's name; else the problem, with the closest name when one is close."""
    if name in DETECTOR_NAMES:
        return None
    shown = repr(name) if _SHOWN.fullmatch(name) else "a name"
    if name.startswith(_PLUGIN_PREFIX):
        return (
            f"{shown} is one of detect-secrets' plugins, which are turned off together "
            "(did you mean 'detect-secrets'?)"
        )
    import difflib  # only on this error path: the status line reads the policy model too

    close = difflib.get_close_matches(name, sorted(DETECTOR_NAMES), n=1, cutoff=0.6)
    suggestion = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown detector {shown}{suggestion}"
