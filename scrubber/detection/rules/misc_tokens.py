"""Smaller vendors with distinctive prefixes, one rule each, cited per rule."""

from __future__ import annotations

import re

from scrubber.detection.gates import Gate
from scrubber.detection.rules.base import PatternRule
from scrubber.detection.rules.values import WORD_END, WORD_START, is_filler

TERRAFORM_CLOUD_TOKEN = PatternRule(
    name="terraform-cloud-token",
    kind="terraform-cloud-token",
    pattern=WORD_START + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + WORD_END,
    anchors=(".atlasv1.",),
    reference="developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-"
    "tokens; gitleaks rule hashicorp-tf-api-token",
    reject=is_filler,
)

INFRACOST_TOKEN = PatternRule(
    name="infracost-token",
    kind="infracost-token",
    # Not after a dot: `favicon.ico-<hash>.png` is a file name.
    pattern=r"(?<![A-Za-z0-9_.])ico-[A-Za-z0-9]{32}(?![A-Za-z0-9_.])",
    anchors=("ico-",),
    reference="infracost.io/docs (API key ico-…); gitleaks rule infracost-api-token",
    reject=is_filler,
)

SCALINGO_TOKEN = PatternRule(
    name="scalingo-token",
    kind="scalingo-token",
    pattern=WORD_START + r"tk-us-[A-Za-z0-9_-]{48}",
    anchors=("tk-us-",),
    reference="doc.scalingo.com (API tokens tk-us-…); gitleaks rule scalingo-api-token",
    reject=is_filler,
)

INTRA42_CLIENT_SECRET = PatternRule(
    name="intra42-client-secret",
    kind="intra42-client-secret",
    pattern=WORD_START + r"s-s4t2(?:ud|af)-[a-f0-9]{64}" + WORD_END,
    anchors=("s-s4t2",),
    reference="api.intra.42.fr/apidoc (client secrets); gitleaks rule intra42-client-secret",
    reject=is_filler,
)

CLICKHOUSE_SECRET_KEY = PatternRule(
    name="clickhouse-cloud-secret-key",
    kind="clickhouse-secret-key",
    # base62, so at least one upper-case letter: a hex digest that happens to start 4b1d is not.
    pattern=WORD_START + r"4b1d(?=[A-Za-z0-9]{0,37}[A-Z])[A-Za-z0-9]{38}" + WORD_END,
    anchors=("4b1d",),
    reference="clickhouse.com/docs/cloud/manage/openapi (API key secrets start 4b1d); "
    "gitleaks rule clickhouse-cloud-api-secret-key",
    reject=is_filler,
)

OCTOPUS_DEPLOY_API_KEY = PatternRule(
    name="octopus-deploy-api-key",
    kind="octopus-deploy-api-key",
    pattern=WORD_START + r"API-[A-Z0-9]{26}" + WORD_END,
    anchors=("api-",),
    reference="octopus.com/docs/octopus-rest-api/how-to-create-an-api-key; gitleaks rule "
    "octopus-deploy-api-key",
    reject=is_filler,
    # The anchor alone, caseless, woke every line naming an `api-gateway` or an `x-api-key`
    # header (one line in ten of a dense fleet, none of them a key): the key's own shape is
    # upper-case, as the pattern says.
    gates=(Gate(r"API-[A-Z0-9]{26}", caseless=False),),
)

SUMOLOGIC_ACCESS_ID = PatternRule(
    name="sumologic-access-id",
    kind="sumologic-access-id",
    pattern=r"sumo[\w.-]{0,20}?access[_.-]?id\\?[\"']?\s{0,4}(?:=|:|:=)\s{0,16}\\?[\"']?"
    r"(?P<secret>su[A-Za-z0-9]{12})" + WORD_END,
    flags=re.IGNORECASE,
    anchors=("sumo",),
    reference="help.sumologic.com/docs/manage/security/access-keys; gitleaks rule "
    "sumologic-access-id",
    reject=is_filler,
)

SIDEKIQ_CREDENTIALS = PatternRule(
    name="sidekiq-credentials",
    kind="sidekiq-credentials",
    # Bundler reads Sidekiq Pro/Enterprise gem server credentials `user:password` (8 hex each)
    # from these variables.
    pattern=r"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[\\\"'\s]{0,4}(?:=|:)[\\\"'\s]{0,4}"
    r"(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})" + WORD_END,
    flags=re.IGNORECASE,
    anchors=("contribsys__com",),
    reference="github.com/sidekiq/sidekiq/wiki (Pro/Enterprise gem server credentials); "
    "gitleaks rule sidekiq-secret",
    reject=is_filler,
)

RUBYGEMS_API_KEY = PatternRule(
    name="rubygems-api-key",
    kind="rubygems-api-key",
    pattern=WORD_START + r"rubygems_[a-f0-9]{48}" + WORD_END,
    anchors=("rubygems_",),
    reference="guides.rubygems.org/api-key-scopes; gitleaks rule rubygems-api-token",
    reject=is_filler,
)

HOSTING_PLATFORM_TOKEN = PatternRule(
    name="hosting-platform-token",
    kind="hosting-platform-token",
    # Netlify personal access tokens `nfp_`, Neon API keys `napi_`, PlanetScale
    # `pscale_tkn_`/`pscale_pw_`/`pscale_oauth_`, Dynatrace `dt0c01.`.
    pattern=WORD_START
    + r"(?:nfp_[A-Za-z0-9]{36,40}|napi_[a-z0-9]{64}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}|"
    r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})" + WORD_END,
    anchors=("nfp_", "napi_", "pscale_", "dt0c01."),
    reference="docs.netlify.com (nfp_), neon.tech/docs/manage/api-keys (napi_), "
    "planetscale.com/docs/concepts/service-tokens, docs.dynatrace.com (dt0c01); gitleaks rules "
    "planetscale-api-token, dynatrace-api-token",
    reject=is_filler,
)

RULES = (
    TERRAFORM_CLOUD_TOKEN,
    INFRACOST_TOKEN,
    SCALINGO_TOKEN,
    INTRA42_CLIENT_SECRET,
    CLICKHOUSE_SECRET_KEY,
    OCTOPUS_DEPLOY_API_KEY,
    SUMOLOGIC_ACCESS_ID,
    SIDEKIQ_CREDENTIALS,
    RUBYGEMS_API_KEY,
    HOSTING_PLATFORM_TOKEN,
)
