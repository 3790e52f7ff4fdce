"""Vendor tokens with a distinctive prefix: one positive and the near misses per format."""

from __future__ import annotations

import base64

import pytest
from rule_cases import B62, B64, B64URL, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import (
    age,
    atlassian,
    azure,
    cloudflare,
    databricks,
    digitalocean,
    discord,
    doppler,
    facebook,
    flyio,
    google,
    grafana,
    heroku,
    huggingface,
    linear,
    mailchimp,
    mailgun,
    misc_tokens,
    notion,
    npm,
    onepassword,
    postman,
    pypi,
    sendgrid,
    sentry,
    shopify,
    sonar,
    sourcegraph,
    square,
    stripe,
    supabase,
    telegram,
    twilio,
    vault,
)

BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()
STRIPE = join("sk", "_live_", "51", fake(B62, 97, "stripe"))
RESTRICTED = join("rk", "_test_", fake(B62, 24, "rk"))
WHSEC = join("wh", "sec_", fake(B62, 32, "wh"))
SBP = join("sb", "p_", fake(HEX, 40, "sbp"))
SB_SECRET = join("sb", "_secret_", fake(B64URL, 32, "sbs"))
TELEGRAM = join("4168041278", ":A", "A", fake(B64URL, 33, "tg"))
NPM = join("np", "m_", fake(B62, 36, "npm"))
PYPI = join("py", "pi-", "AgEIcHlwaS5vcmc", fake(B64URL, 120, "pypi"))
HF = join("h", "f_", fake("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 34, "hf"))
GOOGLE = join("AI", "za", fake(B64URL, 35, "g"))
GOCSPX = join("GOC", "SPX-", fake(B64URL, 28, "gocspx"))
YA29 = join("ya", "29.", fake(B64URL, 150, "ya29"))
SENDGRID = join("S", "G.", fake(B64URL, 22, "sg1"), ".", fake(B64URL, 43, "sg2"))
DO = join("do", "p_v1_", fake(HEX, 64, "do"))
HVS = join("hv", "s.", fake(B64URL, 90, "hvs"))
LEGACY_VAULT = join("s", ".", fake(B62, 24, "vault"))
AGE = join("AGE-", "SECRET-KEY-1", fake(BECH32, 58, "age"))
OPS = join("op", "s_eyJ", fake(B64, 300, "ops"))
SHOPIFY = join("shp", "at_", fake(HEX, 32, "shop"))
MAILGUN = join("ke", "y-", fake(HEX, 32, "mg"))
MAILCHIMP = join(fake(HEX, 32, "mc"), "-us", "18")
HEROKU = join("HR", "KU-", fake(B64URL, 60, "hk"))
LINEAR = join("li", "n_api_", fake(B62, 40, "lin"))
NOTION = join("nt", "n_", fake("0123456789", 11, "n1"), fake(B62, 35, "n2"))
DOPPLER = join("dp", ".pt.", fake(B62, 43, "dp"))
SENTRY = join("sn", "tryu_", fake(HEX, 64, "sentry"))
DATABRICKS = join("da", "pi", fake(HEX, 32, "dbx"))
ORIGIN_CA = join("v1", ".0-", fake(HEX, 24, "cf1"), "-", fake(HEX, 146, "cf2"))
POSTMAN = join("PM", "AK-", fake(HEX, 24, "pm1"), "-", fake(HEX, 34, "pm2"))
GRAFANA = join("gl", "sa_", fake(B62, 32, "gr"), "_", fake(HEX, 8, "gr2"))
ATLASSIAN = join("ATA", "TT3", fake(B64URL, 186, "atl"))
FLY = join("fo", "1_", fake(B64URL, 43, "fly"))
SQUARE = join("sq", "0csp-", fake(B64URL, 43, "sq"))
FACEBOOK = join("EA", "AM", fake(B62, 150, "fb"))
SOURCEGRAPH = join("sg", "p_", fake(HEX, 40, "sgp"))
SONAR = join("sq", "p_", fake(HEX, 40, "sonar"))
AZURE_KEY = fake(B64, 86, "azure") + "=="
AZURE_CLIENT = join("bP8", "8Q~", fake(B62 + "_.~-", 34, "az"))
TWILIO = fake(HEX, 32, "twilio")
SIDEKIQ = join(fake(HEX, 8, "sk1"), ":", fake(HEX, 8, "sk2"))
UP36 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
OP_SECRET_KEY = join(
    "A3-",
    fake(UP36, 6, "o1"),
    "-",
    fake(UP36, 11, "o2"),
    "-",
    fake(UP36, 5, "o3"),
    "-",
    fake(UP36, 5, "o4"),
    "-",
    fake(UP36, 5, "o5"),
)
TFC = join(fake(B62, 14, "tf"), ".atlas", "v1.", fake(B62, 67, "tf2"))
INFRACOST = join("ic", "o-", fake(B62, 32, "ico"))
SCALINGO = join("tk-", "us-", fake(B64URL, 48, "scal"))
INTRA42 = join("s-s4", "t2ud-", fake(HEX, 64, "42"))
CLICKHOUSE = join("4b", "1d", fake(B62, 37, "ch"), "Q")
OCTOPUS = join("AP", "I-", fake(UP36, 26, "oct"))
SUMO_ID = join("s", "u", fake(B62, 12, "sumo"))
RUBYGEMS = join("ruby", "gems_", fake(HEX, 48, "rg"))
# A Discord token's first segment is base64 of the bot's numeric user id.
DISCORD_ID = base64.urlsafe_b64encode(fake("0123456789", 18, "did").encode()).decode().rstrip("=")
DISCORD = join(DISCORD_ID, ".", fake(B64URL, 6, "dts"), ".", fake(B64URL, 38, "dmac"))
NEON = join("na", "pi_", fake(HEX + "ghijklmnopqrstuvwxyz", 64, "neon"))

CASES: list[Case] = [
    pos(stripe.STRIPE_SECRET_KEY, f"stripe_api_key = '{STRIPE}'", STRIPE),
    pos(stripe.STRIPE_SECRET_KEY, f"STRIPE_KEY={RESTRICTED}", RESTRICTED),
    neg(stripe.STRIPE_SECRET_KEY, "pk_live_" + fake(B62, 24, "pk"), note="publishable"),
    pos(stripe.STRIPE_WEBHOOK_SECRET, f"STRIPE_WEBHOOK_SECRET={WHSEC}", WHSEC),
    pos(supabase.SUPABASE_ACCESS_TOKEN, f"supabase login --token {SBP}", SBP),
    pos(supabase.SUPABASE_SECRET_KEY, f"SUPABASE_SECRET_KEY={SB_SECRET}", SB_SECRET),
    neg(supabase.SUPABASE_SECRET_KEY, "sb_publishable_" + fake(B64URL, 32, "pub")),
    pos(telegram.TELEGRAM_BOT_TOKEN, f"https://api.telegram.org/bot{TELEGRAM}/getMe", TELEGRAM),
    neg(telegram.TELEGRAM_BOT_TOKEN, "mac 00:AA:BB:CC:DD:EE"),
    pos(npm.NPM_TOKEN, f"NPM_TOKEN={NPM}", NPM),
    neg(npm.NPM_TOKEN, "npm_config_cache=/home/u/.npm npm_package_version=1.0.0"),
    pos(pypi.PYPI_TOKEN, f"password = {PYPI}\n", PYPI),
    pos(huggingface.HUGGINGFACE_TOKEN, f"huggingface-cli login --token {HF}", HF),
    neg(huggingface.HUGGINGFACE_TOKEN, "from hf_hub import hf_hub_download"),
    pos(google.GOOGLE_API_KEY, f"https://maps.googleapis.com/x?key={GOOGLE}&v=3", GOOGLE),
    neg(google.GOOGLE_API_KEY, "AIza" + "a" * 35, note="filler"),
    pos(google.GOOGLE_OAUTH_CLIENT_SECRET, f'"client_secret": "{GOCSPX}"', GOCSPX),
    pos(google.GOOGLE_OAUTH_TOKEN, f"Authorization: Bearer {YA29}", YA29),
    pos(google.GCP_PRIVATE_KEY_ID, f'  "private_key_id": "{fake(HEX, 40, "kid")}",', fake(HEX, 40, "kid")),
    pos(sendgrid.SENDGRID_API_KEY, f"SENDGRID_API_KEY={SENDGRID}", SENDGRID),
    neg(sendgrid.SENDGRID_API_KEY, "msg.payload and msg.topic"),
    pos(twilio.TWILIO_SECRET, f"TWILIO_AUTH_TOKEN={TWILIO}", TWILIO),
    neg(twilio.TWILIO_SECRET, f"TWILIO_ACCOUNT_SID=AC{TWILIO}"),
    pos(digitalocean.DIGITALOCEAN_TOKEN, f"doctl auth init -t {DO}", DO),
    pos(vault.VAULT_TOKEN, f"VAULT_TOKEN={HVS}", HVS),
    pos(vault.VAULT_LEGACY_TOKEN, f"token: {LEGACY_VAULT}", LEGACY_VAULT),
    neg(vault.VAULT_LEGACY_TOKEN, "s.replace(old, new)"),
    pos(age.AGE_SECRET_KEY, f"# created: 2026-01-01\n{AGE}\n", AGE),
    neg(age.AGE_SECRET_KEY, "age1" + fake(BECH32.lower(), 58, "pub"), note="recipient"),
    pos(onepassword.ONEPASSWORD_SERVICE_ACCOUNT_TOKEN, f"OP_SERVICE_ACCOUNT_TOKEN={OPS}", OPS),
    pos(shopify.SHOPIFY_TOKEN, f"X-Shopify-Access-Token: {SHOPIFY}", SHOPIFY),
    pos(mailgun.MAILGUN_API_KEY, f"api:{MAILGUN}", MAILGUN),
    pos(mailchimp.MAILCHIMP_API_KEY, f"MAILCHIMP_KEY={MAILCHIMP}", MAILCHIMP),
    pos(heroku.HEROKU_API_KEY, f'const KEY = "{HEROKU}"', HEROKU),
    pos(linear.LINEAR_API_KEY, f"LINEAR_API_KEY={LINEAR}", LINEAR),
    pos(notion.NOTION_TOKEN, f"NOTION_TOKEN={NOTION}", NOTION),
    pos(doppler.DOPPLER_TOKEN, f"DOPPLER_TOKEN={DOPPLER}", DOPPLER),
    pos(sentry.SENTRY_TOKEN, f"SENTRY_AUTH_TOKEN={SENTRY}", SENTRY),
    pos(databricks.DATABRICKS_TOKEN, f"token = {DATABRICKS}", DATABRICKS),
    pos(cloudflare.CLOUDFLARE_ORIGIN_CA_KEY, f"key={ORIGIN_CA}", ORIGIN_CA),
    pos(postman.POSTMAN_API_KEY, f"x-api-key: {POSTMAN}", POSTMAN),
    pos(grafana.GRAFANA_TOKEN, f"'Authorization': 'Bearer {GRAFANA}'", GRAFANA),
    pos(atlassian.ATLASSIAN_API_TOKEN, f"JIRA_TOKEN={ATLASSIAN}", ATLASSIAN),
    pos(flyio.FLYIO_TOKEN, f"FLY_API_TOKEN={FLY}", FLY),
    pos(square.SQUARE_TOKEN, f'value: "{SQUARE}"', SQUARE),
    pos(facebook.FACEBOOK_ACCESS_TOKEN, f"access_token={FACEBOOK}", FACEBOOK),
    pos(facebook.FACEBOOK_APP_TOKEN, "facebook 1308742762612587|" + fake(B64URL, 27, "fbapp"),
        fake(B64URL, 27, "fbapp")),
    pos(sourcegraph.SOURCEGRAPH_TOKEN, f"SRC_ACCESS_TOKEN={SOURCEGRAPH}", SOURCEGRAPH),
    pos(sonar.SONAR_TOKEN, f"SONAR_TOKEN={SONAR}", SONAR),
    pos(sonar.SONAR_LABELED_TOKEN, f'sonar.login = "{fake(HEX, 40, "sl")}"', fake(HEX, 40, "sl")),
    pos(azure.AZURE_CONNECTION_STRING_KEY,
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};EndpointSuffix=x",
        AZURE_KEY),
    pos(azure.AZURE_AD_CLIENT_SECRET, f"client_secret: {AZURE_CLIENT}\n", AZURE_CLIENT),
    pos(misc_tokens.SIDEKIQ_CREDENTIALS, f"export BUNDLE_GEMS__CONTRIBSYS__COM={SIDEKIQ}", SIDEKIQ),
    pos(onepassword.ONEPASSWORD_SECRET_KEY, f"Secret Key: {OP_SECRET_KEY}", OP_SECRET_KEY),
    pos(sourcegraph.SOURCEGRAPH_LABELED_TOKEN, f"sourcegraph: {fake(HEX, 40, 'sgl')}", fake(HEX, 40, "sgl")),
    pos(misc_tokens.TERRAFORM_CLOUD_TOKEN, f'token = "{TFC}"', TFC),
    pos(misc_tokens.INFRACOST_TOKEN, f"INFRACOST_API_KEY={INFRACOST}", INFRACOST),
    pos(misc_tokens.SCALINGO_TOKEN, f"SCALINGO_API_TOKEN={SCALINGO}", SCALINGO),
    pos(misc_tokens.INTRA42_CLIENT_SECRET, f"FT_SECRET={INTRA42}", INTRA42),
    pos(misc_tokens.CLICKHOUSE_SECRET_KEY, f"key_secret: {CLICKHOUSE}", CLICKHOUSE),
    pos(misc_tokens.OCTOPUS_DEPLOY_API_KEY, f'set apikey="{OCTOPUS}"', OCTOPUS),
    pos(misc_tokens.SUMOLOGIC_ACCESS_ID, f'SUMO_ACCESS_ID = "{SUMO_ID}"', SUMO_ID),
    pos(misc_tokens.RUBYGEMS_API_KEY, f":rubygems_api_key: {RUBYGEMS}", RUBYGEMS),
    pos(misc_tokens.HOSTING_PLATFORM_TOKEN, f"NEON_API_KEY={NEON}", NEON),
    pos(discord.DISCORD_BOT_TOKEN, f"DISCORD_TOKEN={DISCORD}\n", DISCORD),
    pos(discord.DISCORD_BOT_TOKEN, f"client.run('{DISCORD}')", DISCORD),
    neg(discord.DISCORD_BOT_TOKEN, "MyVeryLongTestCaseNameHere.method.another_long_attribute_name_x",  # pragma: allowlist secret
        note="dotted identifiers"),
    neg(misc_tokens.INFRACOST_TOKEN, "/static/favicon.ico-" + fake(HEX, 32, "ico") + ".png"),
    neg(misc_tokens.CLICKHOUSE_SECRET_KEY, "4b1d" + fake(HEX, 38, "ch"), note="a hex digest"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_vendor_tokens(case: Case) -> None:
    check(case)
