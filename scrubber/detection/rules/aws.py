"""AWS: access key ids, secret access keys next to their labels, STS session tokens, Bedrock keys.

Access key ids are 20 characters: a 4-letter prefix saying what the key is (AKIA long-term user
key, ASIA temporary STS key, ABIA/ACCA/A3T… other principals) and 16 base32 characters
(AWS IAM User Guide, "Unique identifier prefixes"; gitleaks rule `aws-access-token`). The secret
access key is 40 base64 characters with no marker of its own, so it is only recognised beside a
label (`aws_secret_access_key`, `SecretAccessKey`, `AWS_SECRET_ACCESS_KEY`).
"""

from __future__ import annotations

import re

from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler, is_placeholder

# A label, an optional closing quote (plain or JSON-escaped), a separator, an optional opening
# quote: the shape of `aws_secret_access_key = X`, `"SecretAccessKey": "X"`, `KEY=X`.
_LABEL_SEP = r"""\\?["']?\s{0,4}(?:=|:|=>)\s{0,16}\\?["']?"""

# The body is matched as [A-Z0-9], not only base32: detect-secrets' AWSKeyDetector (which audit
# runs, the status line does not) takes any upper-case letter or digit there, and a key id it
# found that this rule missed showed in `scrub audit` but never in the status line (issue 14,
# item 5). The kind is the one the Contracts and that plugin's mapping use: `aws-access-key`
# (the rule's name stays, for `disabled_detectors`).
AWS_ACCESS_KEY_ID = PatternRule(
    name="aws-access-key-id",
    kind="aws-access-key",
    pattern=WORD_START + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + WORD_END,
    public_prefix=r"AKIA|ASIA",
    anchors=("akia", "asia", "abia", "acca", "a3t"),
    reference="AWS IAM User Guide, 'Reference: IAM identifiers' (unique id prefixes); "
    "gitleaks rule aws-access-token; detect-secrets AWSKeyDetector ([0-9A-Z]{16})",
    reject=is_filler,
)

AWS_SECRET_ACCESS_KEY = PatternRule(
    name="aws-secret-access-key",
    kind="aws-secret-access-key",
    pattern=r"(?:aws[_-]?secret(?:[_-]?access)?(?:[_-]?key)?|secret[_-]?access[_-]?key)"
    + _LABEL_SEP
    + r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    flags=re.IGNORECASE,
    anchors=(
        "aws_secret",
        "awssecret",
        "aws-secret",
        "secret_access",
        "secretaccess",
        "secret-access",
    ),
    reference="AWS CLI User Guide, 'Configuration and credential file settings' "
    "(aws_secret_access_key); STS GetSessionToken response (SecretAccessKey)",
    reject=is_filler,
)

AWS_SESSION_TOKEN = PatternRule(
    name="aws-session-token",
    kind="aws-session-token",
    pattern=r"(?:session[_-]?token|security[_-]?token)"
    + _LABEL_SEP
    + r"(?P<secret>[A-Za-z0-9/+]{100,4096}={0,2})(?![A-Za-z0-9/+=])",
    flags=re.IGNORECASE,
    anchors=("session_token", "sessiontoken", "session-token", "security_token",
             "securitytoken", "security-token"),
    reference="AWS CLI User Guide (aws_session_token); STS Credentials.SessionToken",
    reject=is_placeholder,
)  # fmt: skip

# STS session tokens are base64 of a binary blob whose first bytes do not vary much: current
# tokens start with `IQoJb3JpZ2luX2Vj` ("!\n\torigin_ec"), older ones with `FwoGZXIvYXdzE`.
AWS_SESSION_TOKEN_BARE = PatternRule(
    name="aws-session-token-bare",
    kind="aws-session-token",
    pattern=WORD_START
    + r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+]{80,4096}={0,2}(?![A-Za-z0-9/+=])",
    anchors=("iqojb3jpz2lux2vj", "fwogzxivyxdze"),
    reference="observed prefix of STS session tokens (AWS STS GetSessionToken/AssumeRole output)",
    reject=is_filler,
)

# Amazon Bedrock API keys: long-term keys start with ABSK; short-term keys are
# `bedrock-api-key-` + base64 of a presigned URL for bedrock.amazonaws.com.
AWS_BEDROCK_API_KEY = PatternRule(
    name="aws-bedrock-api-key",
    kind="aws-bedrock-api-key",
    pattern=WORD_START
    # The prefix is written in two pieces so this file does not match its own pattern.
    + r"(?:ABSK[A-Za-z0-9+/]{100,300}={0,2}|bedrock-api-key-"
    + r"YmVkcm9jay5hbWF6b25hd3MuY29t"
    r"[A-Za-z0-9+/]{0,4096}={0,2})(?![A-Za-z0-9+/=])",
    anchors=("absk", "bedrock-api-key-"),
    reference="Amazon Bedrock User Guide, 'API keys'; gitleaks rules "
    "aws-amazon-bedrock-api-key-long-lived / -short-lived",
    reject=is_filler,
)

RULES = (
    AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    AWS_SESSION_TOKEN_BARE,
    AWS_BEDROCK_API_KEY,
)
