"""Credentials in XML: Jenkins secrets and credential blocks, configuration key/value pairs."""

from __future__ import annotations

import pytest
from rule_cases import B62, B64, HEX, Case, check, fake, ids, join, neg, pos

from scrubber.detection.rules import xml_credentials as xml

# hudson.util.Secret: `{` + base64 of 01 00000010 <length> <iv> <ciphertext> + `}`.
JENKINS = join("AQAAAB", "AAAA", fake(B64, 54, "jenkins"), "=")
TOKEN = fake(B62, 32, "xml-token")
PASSWORD = join(fake(B62, 10, "xml-pw"), "!", "7")
HEX_KEY = fake(HEX, 32, "xml-hex")
UUID = "1f0e6c2a-4b3d-4e5f-8a9b-0c1d2e3f4a5b"

_OPEN = "<com.cloudbees.plugins.credentials.impl.StringCredentialsImpl>"
_CLOSE = "</com.cloudbees.plugins.credentials.impl.StringCredentialsImpl>"


def _block(*lines: str) -> str:
    body = "\n".join(f"  {line}" for line in lines)
    return f"{_OPEN}\n  <scope>GLOBAL</scope>\n{body}\n  <description>prod</description>\n{_CLOSE}"


CASES: list[Case] = [
    # The encrypted form, anywhere.
    pos(xml.JENKINS_SECRET, f"<apiToken>{{{JENKINS}}}</apiToken>", JENKINS),
    pos(xml.JENKINS_SECRET, f'token: "{{{JENKINS}}}"', JENKINS, note="outside XML"),
    neg(xml.JENKINS_SECRET, "<secret>{AQAAABAAAA}</secret>", note="too short"),
    # Braced element text.
    pos(xml.BRACED_ELEMENT, f"<secret>{{{TOKEN}}}</secret>", TOKEN),
    pos(xml.BRACED_ELEMENT, f"<privateKey>{{ {JENKINS} }}</privateKey>", f" {JENKINS} ",
        note="everything inside the braces"),
    pos(xml.BRACED_ELEMENT, f"<password>{{vendor {join('AQAAAB', 'AAA')} {TOKEN}}}</password>",
        f"vendor {join('AQAAAB', 'AAA')} {TOKEN}"),
    neg(xml.BRACED_ELEMENT, "<apiToken>{apiToken}</apiToken><password>{0}</password>",
        note="template slots"),
    neg(xml.BRACED_ELEMENT, "<token>{{ token }}</token><secret>{env.SECRET}</secret>"),
    neg(xml.BRACED_ELEMENT, f"<div>{{{TOKEN}}}</div>", note="JSX, not a secret name"),
    neg(xml.BRACED_ELEMENT, "<tokenCount>{12}</tokenCount>"),
    # Companions inside a credentials block.
    pos(xml.BRACED_ELEMENT, _block(f"<id>{{vendor {HEX_KEY}}}</id>", f"<secret>{{{TOKEN}}}</secret>"),
        f"vendor {HEX_KEY}", TOKEN),
    pos(xml.BRACED_ELEMENT, _block(f"<username>{TOKEN}</username>"), TOKEN, note="unbraced"),
    pos(xml.BRACED_ELEMENT, _block(f"<appID> {TOKEN} </appID>"), TOKEN, note="spaces trimmed"),
    neg(xml.BRACED_ELEMENT, _block(f"<id>{UUID}</id>", "<username>deploy-bot-2024</username>"),
        note="ordinary ids"),
    neg(xml.BRACED_ELEMENT, _block("<id>{https://abc123def456ghi.management.azure-api.net}</id>")),
    neg(xml.BRACED_ELEMENT, f"<id>{HEX_KEY}</id>", note="outside a credentials block"),
    pos(xml.BRACED_ELEMENT,
        f"creds.xml:3:  <id>{{vendor {HEX_KEY}}}</id>\ncreds.xml:4:  <secret>{{{JENKINS}}}</secret>",
        f"vendor {HEX_KEY}", JENKINS, note="a sibling of a Jenkins secret, block not shown"),
    # Key/value pairs.
    pos(xml.XML_KEY_VALUE, f'<add key="ApiKey" value="{TOKEN}"/>', TOKEN),
    pos(xml.XML_KEY_VALUE, f"<add value='{PASSWORD}' key='Smtp.Password' />", PASSWORD,
        note="value first"),
    pos(xml.XML_KEY_VALUE, f'<property name="db.password" value="{PASSWORD}"/>', PASSWORD),
    pos(xml.XML_KEY_VALUE, f'<entry key="auth.token">{TOKEN}</entry>', TOKEN),
    pos(xml.XML_KEY_VALUE, f'<env name="STRIPE_SECRET" value="{TOKEN}" force="true"/>', TOKEN),
    pos(xml.XML_KEY_VALUE, f'<setting name="ApiToken" serializeAs="String">\n  <value>{TOKEN}</value>',
        TOKEN),
    pos(xml.XML_KEY_VALUE, f"<key>APIKey</key>\n\t<string>{TOKEN}</string>", TOKEN, note="plist"),
    pos(xml.XML_KEY_VALUE, f"<entry><string>apiToken</string><string>{TOKEN}</string></entry>",
        TOKEN, note="XStream map"),
    pos(xml.XML_KEY_VALUE, f"<name>fs.s3a.secret.key</name>\n<value>{TOKEN}</value>", TOKEN),
    pos(xml.XML_KEY_VALUE,
        f"<name>fs.azure.account.key.acct.blob.core.windows.net</name><value>{TOKEN}==</value>",
        f"{TOKEN}==", note="hadoop-azure"),
    pos(xml.XML_KEY_VALUE, f"<param-name>db.password</param-name>\n<param-value>{PASSWORD}</param-value>",
        PASSWORD),
    neg(xml.XML_KEY_VALUE, '<param name="token" value="${TOKEN}"/><add key="ApiKey" value="{ApiKey}"/>'),
    neg(xml.XML_KEY_VALUE, '<add key="PageSize" value="20"/><entry key="token.type">Bearer</entry>'),
    neg(xml.XML_KEY_VALUE, f'<input type="hidden" name="authenticity_token" value="{TOKEN}">',
        note="a form's anti-forgery nonce, not a pair tag"),
    neg(xml.XML_KEY_VALUE, "<key>CFBundleIdentifier</key><string>com.example.app</string>"),
    neg(xml.XML_KEY_VALUE, f'<add key="SigningKeyId" value="{TOKEN}"/>', note="an id"),
    neg(xml.XML_KEY_VALUE, '<add key="PublicKey" value="MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"/>'),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_xml_credentials(case: Case) -> None:
    check(case)
