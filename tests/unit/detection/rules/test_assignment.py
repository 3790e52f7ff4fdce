"""Values under credential-like names, and the code, counters and prose that must not match."""

from __future__ import annotations

import string

import pytest
from rule_cases import B62, DOTENV, HEX, Case, check, fake, ids, neg, pos

from scrubber.detection.detector import PLAIN
from scrubber.detection.rules.assignment import SENSITIVE_ASSIGNMENT as RULE
from scrubber.detection.rules.assignment import Strength, classify_name

TOKEN = fake(B62, 32, "tok")
HEXKEY = fake(HEX, 32, "hex")
STRONG_PW = fake(B62 + "!@#%^*-_", 18, "pw")
DJANGO = "django-insecure-" + fake(B62 + "!@#$%^&*(-_=+)", 50, "dj")
UUID = "dafa7817-e246-48f3-91a7-e87653d587b8"
MASK = " " * 30
WEAK = "hunter" + "2"  # weak passwords count too; kept out of the source as a literal
WEAK_WORD = "db" + "pass"
UPPER_FIRST = "Q" + fake(B62, 15, "upper")
SNAKE_TOKEN = "sk" + "_" + fake(HEX, 32, "snake")
DASHED_LOWER = "-".join(
    fake("abcdefghijklmnopqrstuvwxyz0123456789", n, f"dl{n}") for n in (8, 4, 4, 4, 12)
)
DASHED_UPPER = "-".join(fake(string.ascii_uppercase + string.digits, 7, f"du{i}") for i in range(4))
B64KEY = fake(B62 + "+/", 86, "b64") + "=="
COMMA_VALUE = fake(B62, 3, "cv") + ",.:-" + fake(B62, 4, "cv2") + "@*?!"
DOTTED = ".".join(fake(B62, n, f"dot{n}") for n in (40, 20, 24))

CASES: list[Case] = [
    # dotenv and shell
    pos(RULE, f"DB_PASSWORD={WEAK}", WEAK, note="weak password counts"),
    pos(RULE, f'JWT_SECRET="{WEAK_WORD}"\n', WEAK_WORD),
    pos(RULE, f"SESSION_SECRET='{TOKEN}'", TOKEN),
    pos(RULE, f"SECRET_KEY={DJANGO}\nDEBUG=0", DJANGO, note="django key with symbols"),
    pos(RULE, f"export API_KEY={HEXKEY}", HEXKEY),
    pos(RULE, f"PGPASSWORD='{STRONG_PW}' psql -h db -U app", STRONG_PW, note="run-together name"),
    pos(RULE, f"     7→ADMIN_PASSWORD={STRONG_PW}\n", STRONG_PW, note="Read prefix"),
    pos(RULE, f"src/settings.py:12:DB_PASSWORD={STRONG_PW}", STRONG_PW, note="grep prefix"),
    pos(RULE, f'"Env": ["PATH=/usr/bin", "REDIS_PASSWORD={STRONG_PW}"]', STRONG_PW, note="docker Env"),
    pos(RULE, f'DB_PASSWORD=\\"{STRONG_PW}\\"\\nNEXT=1', STRONG_PW, note="escaped quotes"),
    # YAML, JSON, TOML, INI, XML, code literals
    pos(RULE, f"    environment:\n      POSTGRES_PASSWORD: {STRONG_PW}\n", STRONG_PW),
    pos(RULE, f'{{"client_secret": "{TOKEN}", "x": 1}}', TOKEN),
    pos(RULE, f"'access_token': '{TOKEN}'", TOKEN),
    pos(RULE, f'password = "{STRONG_PW}"', STRONG_PW),
    pos(RULE, f"[pypi]\nusername = __token__\npassword = {STRONG_PW}\n", STRONG_PW),
    pos(RULE, f"<password>{STRONG_PW}</password>", STRONG_PW),
    pos(RULE, f"define('DB_PASSWORD', '{STRONG_PW}');", STRONG_PW, note="PHP define"),
    pos(RULE, f'os.environ["OPENAI_API_KEY"] = "{TOKEN}"', TOKEN),
    pos(RULE, f'PASSWORD: str = "{STRONG_PW}"', STRONG_PW, note="annotated"),
    pos(RULE, f'const SNYK_KEY = "{UUID}"', UUID, note="uuid under a key name"),
    pos(RULE, f'  "oktaApiToken": "{TOKEN}",', TOKEN, note="camelCase"),
    pos(RULE, f'-H "X-Api-Key: {UUID}"', UUID, note="header"),
    pos(RULE, f"Server=db;User Id=sa;Password={STRONG_PW};Encrypt=true", STRONG_PW, note="ADO.NET"),
    pos(RULE, f'getenv("API_TOKEN", "{TOKEN}")', TOKEN, note="default argument"),
    pos(RULE, f"GITHUB_PAT={TOKEN}", TOKEN),
    # generated values that look like other things at a glance
    pos(RULE, f"DB_PASSWORD={UPPER_FIRST}", UPPER_FIRST, note="upper-case start is no type name"),
    pos(RULE, f"vendor token = '{SNAKE_TOKEN}'", SNAKE_TOKEN, note="prefix_ token is no joined words"),
    pos(RULE, f"vendor token = '{DASHED_LOWER}'", DASHED_LOWER, note="dashed generated groups"),
    pos(RULE, f"vendor token = '{DASHED_UPPER}'", DASHED_UPPER, note="dashed upper groups"),
    # key names: numbered, run together, bare in a log line
    pos(RULE, f'vendor_key1 = "{TOKEN}"', TOKEN, note="numbered name"),
    pos(RULE, f'sumoKey2: "{TOKEN}"', TOKEN, note="numbered camelCase"),
    pos(RULE, f"  azurestorageaccountkey: {B64KEY}", B64KEY, note="run-together key name"),
    pos(RULE, f"[DEBUG] Using Key={TOKEN}", TOKEN, note="bare Key= in a log line"),
    pos(RULE, f"[DEBUG] using key = {HEXKEY}", HEXKEY, note="bare key = hex"),
    neg(RULE, "sorted(items, key=lambda item: item.name)"),
    neg(RULE, "aws s3api get-object --bucket b --key=uploads/" + TOKEN + ".png out.png"),
    neg(RULE, f'"key": "{TOKEN}"', note="a map key is no credential"),
    neg(RULE, "KEY=" + "ECDHE-RSA-AES128-GCM-SHA256", note="cipher suite"),
    # the credential inside a quoted value
    pos(RULE, f'auth_token: "Bearer {TOKEN}"', TOKEN, note="scheme in the value"),
    pos(RULE, f'clientSecret := "Basic {TOKEN}"', TOKEN, note="Go, Basic scheme"),
    pos(RULE, f'vendorKey := " {TOKEN} "', TOKEN, note="padded with spaces"),
    neg(RULE, 'auth_header: "Bearer {token}"', note="template"),
    pos(RULE, f"DBPWD={TOKEN}", TOKEN, note="run-together pwd"),
    pos(RULE, f"vendor token = '{TOKEN}\r'", TOKEN, note="a carriage return inside the quotes"),
    pos(RULE, f"vendor token = '{DOTTED}'", DOTTED, note="dotted generated runs are no attribute chain"),
    neg(RULE, "token = config.auth.session_token", note="an attribute chain"),
    pos(RULE, f"vendorStorageAccessKey:{B64KEY}", B64KEY, note="glued colon, generated value"),
    neg(RULE, "cache_key:user_profile_settings_2024_v2", note="glued colon, a name"),
    pos(RULE, 'vendor_key: "F1A-' + 'NEI-HY4-PZK"', "F1A-NEI-HY4-PZK", note="license key groups"),
    pos(RULE, f"secrete = {COMMA_VALUE}", COMMA_VALUE, note="typo of secret, commas inside"),
    neg(RULE, "conn(password=pw,user=u)", note="next argument"),
    neg(RULE, "secretary = Jane"),
    # code, not literals
    neg(RULE, "password: str"),
    neg(RULE, "password: Optional[str] = None"),
    neg(RULE, "token: string;"),
    neg(RULE, "password: PasswordStr"),
    neg(RULE, "token = get_token()"),
    neg(RULE, "token = self._input.LA(1)"),
    neg(RULE, "token = Name.Variable"),
    neg(RULE, 'password = os.environ["DB_PASSWORD"]'),
    neg(RULE, "const token = req.headers.authorization;"),
    neg(RULE, "    conn = connect(user=user, password=db_pass)"),
    neg(RULE, "    f(password=password)"),
    neg(RULE, "password = pw"),
    neg(RULE, 'new_token = f"{log_group}@{stream}"'),
    neg(RULE, "secret_keyword = r'(?:key|pwd|pw|password|pass|token)'", note="a regex"),
    neg(RULE, "@field_serializer('password', 'password_bytes')"),
    neg(RULE, "'CURLOPT_MAIL_RCPT', 'CURLOPT_PASSWORD', 'CURLOPT_READDATA'"),
    neg(RULE, 'raise TypeError("pwd: expected bytes, got str")', note="prose"),
    neg(RULE, "if password == \"x\":"),
    neg(RULE, "_HEX_PAT = '[0-9A-Fa-f]{1,4}'", note="_PAT is a pattern"),
    neg(RULE, '"Credentials": role,', note="dict in code"),
    neg(RULE, ":type credentials: :py:class:`~botocore.credentials.Credentials`", note="Sphinx"),
    neg(RULE, "# Second pass: use a random order", note="prose"),
    neg(RULE, '"AWS::SecretsManager::Secret": "c85175a4ebcce361"', note="qualified type name"),  # pragma: allowlist secret
    pos(RULE, "DB_PASSWORD=%" + STRONG_PW, "%" + STRONG_PW, note="starts with %"),
    pos(RULE, "SMTP_PASSWORD='my" + "secretpassword'", "my" + "secretpassword", note="name inside"),
    neg(RULE, 'ALLOW_CREDENTIALS = "Access-Control-Allow-Credentials"'),
    neg(RULE, "fetch(url, { credentials: 'include', mode: 'cors' })"),
    neg(RULE, "'pass': 'bandpass',"),
    neg(RULE, "const { regKey: scopeAuthKey, authKey: _authKey } = reg"),
    neg(RULE, 'print("pass", file=f)'),
    neg(RULE, '_TokenT = TypeVar("_TokenT", bound=Token)'),
    neg(RULE, "'credentials: %s.', creds"),
    neg(RULE, '"RandomPassword": "EXAMPLE-PASSWORD"'),
    # AWS API output and SDK data: pagination cursors, idempotency tokens, paginator config
    neg(RULE, '"ClientRequestToken": "a8ca07e4-61ec-4399-99f4-19853801bcd5"'),
    neg(RULE, '"NextToken": "' + fake(B62, 48, "next") + '"'),
    neg(RULE, '"ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f"'),
    neg(RULE, '"output_token": "nextToken", "result_key": "contentAssociationSummaries"'),
    # counters, types, references, placeholders
    neg(RULE, '"max_tokens": 4096, "input_tokens": 12, "cache_read_input_tokens": 0'),
    neg(RULE, "tokens: 1234"),
    neg(RULE, "token_type: Bearer"),
    neg(RULE, "  auth: true"),
    neg(RULE, "DB_PASSWORD=${DB_PASSWORD}"),
    neg(RULE, "token: ${{ secrets.GITHUB_TOKEN }}"),
    neg(RULE, "API_KEY=your_api_key_here"),
    neg(RULE, "API_KEY=<your-api-key>"),
    neg(RULE, "PASSWORD=********"),
    neg(RULE, "DB_PASSWORD="),
    neg(RULE, f"DB_PASSWORD={MASK}# masked placeholder", note="masked placeholder"),
    neg(RULE, "DB_PASSWORD=[REDACTED:dotenv-value:0a1b2c3d]"),
    neg(RULE, '"password": "Enter your password"'),
    neg(RULE, '"password": "password"'),
    neg(RULE, "password_hash = 'abc123def456abc123'"),  # pragma: allowlist secret
    neg(RULE, "secretName: app-tls"),
    neg(RULE, f'publicToken = "{TOKEN}"'),
    neg(RULE, "csrf-token=" + TOKEN),
    neg(RULE, 'cache_key = "user:123:profile"'),
    neg(RULE, 'primary_key = "id"'),
    neg(RULE, "https://example.com/reset?token=" + TOKEN, note="query strings belong to another rule"),
    neg(RULE, "AUTH_URL=https://login.example.com/oauth"),
    # sentences under a password name are taken only from a known credential file
    pos(RULE, 'ADMIN_PASSWORD="correct horse battery staple"', "correct horse battery staple",  # pragma: allowlist secret
        context=DOTENV),
    neg(RULE, 'ADMIN_PASSWORD="correct horse battery staple"'),  # pragma: allowlist secret
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_sensitive_assignment(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(
    ("name", "strength"),
    [
        ("DB_PASSWORD", Strength.STRONG),
        ("PGPASSWORD", Strength.STRONG),
        ("clientSecret", Strength.STRONG),
        ("SMTP_PASS", Strength.STRONG),
        ("auth_token", Strength.MEDIUM),
        ("X-Api-Key", Strength.MEDIUM),
        ("APIKEY", Strength.MEDIUM),
        ("GITHUB_PAT", Strength.MEDIUM),
        ("STRIPE_KEY", Strength.KEY),
        ("max_tokens", None),
        ("tokenizer", None),
        ("author", None),
        ("bypass", None),
        ("password_hash", None),
        ("token_type", None),
        ("public_key", None),
        ("primary_key", None),
        ("key", None),
        ("pass_through", None),
        ("_HEX_PAT", None),
    ],
)
def test_classify_name(name: str, strength: Strength | None) -> None:
    assert classify_name(name) is strength


def _escaped(secret: bytes, form: str) -> str:
    return "".join(form.format(b) for b in secret)


@pytest.mark.parametrize(
    ("template", "form"),
    [
        ('SECRET_KEY = b"{}"', "\\x{:02x}"),  # a 16-byte AES key as a bytes literal
        ("export DB_PASSWORD=$'{}'", "\\x{:02x}"),  # a shell $'…' string
        ('password: "{}"', "\\u{:04x}"),
        ('api_key = "{}"', "\\{:03o}"),
        ('password = "{}"', "\\\\x{:02x}"),  # its backslash escaped again, inside code
    ],
)
def test_a_secret_written_as_escapes_is_still_a_secret(template: str, form: str) -> None:
    """Only a literal of one or two escapes (`"\\xff"`, `"\\x00\\x01"`) is taken for a byte
    literal: keys and passwords are written as escapes too."""
    secret = bytes((37 * i + 101) % 256 for i in range(12))
    text = template.format(_escaped(secret, form))
    hits = list(RULE.find(text, PLAIN))
    assert len(hits) == 1 and text[hits[0].start : hits[0].end] == _escaped(secret, form)
    for few in (secret[:1], secret[:2]):
        assert list(RULE.find(template.format(_escaped(few, form)), PLAIN)) == []
